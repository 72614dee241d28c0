/*
 * The checks the C and C++ ring peers share: the D-byte stack pad that a
 * stackful member keeps live while it blocks (ring-pthread, ring-boost).
 */
#ifndef PEERS_RING_CHECK_H
#define PEERS_RING_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

#endif /* PEERS_RING_CHECK_H */
