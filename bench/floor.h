/*
 * The floor of a switch by stack copying: see floor.c.
 */
#ifndef BENCH_FLOOR_H
#define BENCH_FLOOR_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a buffer's context: the registers a switch saves, its return
 * address and the FP control state. */
extern const size_t floor_context;

/*
 * Nanoseconds a step, over 2 * rounds + 2 steps (the first two fill the
 * buffers) that each save `bytes`; with share_fpctl the FP control state
 * is not read, as with s_share_fpctl. With short_copy (a fault, for the
 * tests) the steps copy 16 bytes fewer, which the check must catch.
 * Exits with a message if bytes is not a multiple of 16, if the buffers
 * cannot be had, or if a step did not copy them whole.
 */
double floor_ns(uint64_t rounds, size_t bytes, int share_fpctl,
		int short_copy);

#endif /* BENCH_FLOOR_H */
