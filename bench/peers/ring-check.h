/*
 * The checks the C and C++ rings share: the D-byte stack pad that a
 * stackful member keeps live while it blocks (ring-pthread, ring-boost),
 * the count of the tokens handed to each member, which it checks after
 * every wait (those two, the stackless C++ peers and usched's ring), and
 * the check of every member after the run (the peers, the stackless ones
 * through cpp/ring.h).
 */
#ifndef PEERS_RING_CHECK_H
#define PEERS_RING_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../args.h"

#define PAD_MARK	0xa5

/* Make the compiler assume *p is read and written behind its back. */
static inline void pad_escape(void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

/* Before the member's loop: mark the @d bytes at @pad. */
static inline void pad_fill(unsigned char *pad, size_t d)
{
	memset(pad, PAD_MARK, d);
	pad_escape(pad);
}

/* After it: nonzero if both ends of the pad still hold the mark. */
static inline int pad_intact(unsigned char *pad, size_t d)
{
	pad_escape(pad);
	return d == 0 || (pad[0] == PAD_MARK && pad[d - 1] == PAD_MARK);
}

/*
 * USCHED_RING_FAULT=pad: a member at position 0 of its cycle spoils the
 * first byte of its pad, which its check after the rounds must catch.
 */
static inline void pad_fault(const struct ring_args *a,
			     volatile unsigned char *pad, uint64_t pos)
{
	if (a->ra_fault == RING_FAULT_PAD && pos == 0)
		pad[0] = (unsigned char)~pad[0];
}

/*
 * Before a hand-off to a member: counts it in the member's *handed, which
 * only its left neighbour writes and the member may read meanwhile.
 */
static inline void ring_count_handed(uint32_t *handed)
{
	__atomic_store_n(handed, __atomic_load_n(handed, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

/*
 * After a member's wait for its n-th token (counting from 1): false if
 * fewer were handed (a spurious wake-up, or a token nobody handed). n is
 * the member's own loop count, as in usched's ring, which compares with
 * the count of its loop too. Modulo 2^32: fewer than 2^31 are ever
 * pending.
 */
static inline int ring_token_handed(const uint32_t *handed, uint64_t n)
{
	uint32_t h = __atomic_load_n(handed, __ATOMIC_RELAXED);

	return (int32_t)(h - (uint32_t)n) >= 0;
}

/* Members checked so far, for one run. */
struct ring_check {
	const char		*rc_prog;
	const struct ring_args	*rc_cfg;
	uint64_t		 rc_bad;	/* members that failed */
	uint64_t		 rc_tokens;	/* in all, for the summary */
};

/* What a member left behind, for ring_check_member(). */
struct ring_member_end {
	uint64_t me_received;	/* tokens it took */
	uint64_t me_unhanded;	/* waits that got one nobody handed */
	uint64_t me_left;	/* tokens handed to it that it never took */
	int	 me_pad_bad;	/* its stack pad changed */
};

/*
 * Member @i must have received M tokens (a lost token shows as a short
 * count), each handed to it, none left over, and kept its pad. The first
 * 10 that did not are named on stderr.
 */
static inline void ring_check_member(struct ring_check *rc, uint64_t i,
				     const struct ring_member_end *e)
{
	const struct ring_args *cfg = rc->rc_cfg;

	rc->rc_tokens += e->me_received;
	if (e->me_received == cfg->ra_m && e->me_unhanded == 0 &&
	    e->me_left == 0 && !e->me_pad_bad)
		return;
	if (rc->rc_bad++ >= 10)
		return;
	fprintf(stderr, "%s: thread %llu (cycle %llu) received %llu tokens, "
		"expected %llu", rc->rc_prog, (unsigned long long)i,
		(unsigned long long)(i / cfg->ra_n),
		(unsigned long long)e->me_received,
		(unsigned long long)cfg->ra_m);
	if (e->me_unhanded != 0)
		fprintf(stderr, "; woken %llu times before a token was handed",
			(unsigned long long)e->me_unhanded);
	if (e->me_left != 0)
		fprintf(stderr, "; %llu left over",
			(unsigned long long)e->me_left);
	fprintf(stderr, "%s\n", e->me_pad_bad ? "; stack pad corrupted" : "");
}

/* After every member: 0 if all passed, else -1 with a summary on stderr. */
static inline int ring_check_done(const struct ring_check *rc)
{
	if (rc->rc_bad == 0)
		return 0;
	fprintf(stderr, "%s: verification failed: %llu bad threads, "
		"%llu of %llu messages\n",
		rc->rc_prog, (unsigned long long)rc->rc_bad,
		(unsigned long long)rc->rc_tokens,
		(unsigned long long)rc->rc_cfg->ra_msgs);
	return -1;
}

#endif /* PEERS_RING_CHECK_H */
