/*
 * The checks the C and C++ ring peers share: the D-byte stack pad that a
 * stackful member keeps live while it blocks (ring-pthread, ring-boost),
 * and the check of every member's token count after the run (those two
 * and, through cpp/ring.h, the stackless C++ peers).
 */
#ifndef PEERS_RING_CHECK_H
#define PEERS_RING_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

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

/* Members checked so far, for one run. */
struct ring_check {
	const char		*rc_prog;
	const struct ring_args	*rc_cfg;
	uint64_t		 rc_bad;	/* members that failed */
	uint64_t		 rc_tokens;	/* in all, for the summary */
};

/*
 * Member @i must have received M tokens (a lost token shows as a short
 * count) and kept its pad.  The first 10 that did not are named on stderr.
 */
static inline void ring_check_member(struct ring_check *rc, uint64_t i,
				     uint64_t received, int pad_bad)
{
	const struct ring_args *cfg = rc->rc_cfg;

	rc->rc_tokens += received;
	if (received == cfg->ra_m && !pad_bad)
		return;
	if (rc->rc_bad++ < 10)
		fprintf(stderr, "%s: thread %llu (cycle %llu) "
			"received %llu tokens, expected %llu%s\n",
			rc->rc_prog, (unsigned long long)i,
			(unsigned long long)(i / cfg->ra_n),
			(unsigned long long)received,
			(unsigned long long)cfg->ra_m,
			pad_bad ? "; stack pad corrupted" : "");
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
