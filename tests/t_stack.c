/*
 * Stack contents survive blocking: patterned locals at depths 1 to 1000,
 * in buffers of any alignment, 64 KiB of locals, threads with D extra
 * bytes, how buffers grow, 1000 threads in random order.
 */
#include "tap.h"
#include "tsched.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long bad;	/* locals found corrupted after a resume */
static long resumes;

static uint64_t pattern(uintptr_t id, int depth, int i)
{
	uint64_t x = id * 0x9e3779b97f4a7c15ULL + depth * 1000003ULL + i;

	return x ^ (x >> 29);
}

static void fill(volatile uint64_t *pat, int n, uintptr_t id, int depth)
{
	for (int i = 0; i < n; i++)
		pat[i] = pattern(id, depth, i);
}

static void check(volatile uint64_t *pat, int n, uintptr_t id, int depth)
{
	for (int i = 0; i < n; i++)
		bad += pat[i] != pattern(id, depth, i);
}

static void yield_checked(void)
{
	if (tsched_yield() != 0)
		bad++;
	resumes++;
}

/* Each frame blocks on the way down and on the way up, checking its locals. */
static void descend(uintptr_t id, int depth, int max)
{
	volatile uint64_t pat[6];

	fill(pat, 6, id, depth);
	yield_checked();
	check(pat, 6, id, depth);
	if (depth < max)
		descend(id, depth + 1, max);
	yield_checked();
	check(pat, 6, id, depth);
}

static void descender(void *arg)
{
	descend((uintptr_t)tsched_self(), 1, (int)(intptr_t)arg);
}

static void test_depths(void)
{
	static const int depths[] = { 1, 2, 10, 100, 500, 1000 };
	struct tsched ts;

	tsched_init(&ts);
	bad = resumes = 0;
	for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++)
		tsched_spawn(&ts, descender, (void *)(intptr_t)depths[i]);
	tsched_run(&ts);
	ok(bad == 0 && resumes == 2 * (1 + 2 + 10 + 100 + 500 + 1000),
	   "depths 1..1000: %ld resumes, %ld corrupted locals", resumes, bad);
	ok(ts.ts_bytes == 0, "all stack buffers freed");
	/* Bites under ASan, whose shadow's eighth is added to the size. */
	ok(ts.ts_allocs > 6 && ts.ts_unrounded == 0,
	   "%ld buffers as the stacks grew, all multiples of 16 bytes (%ld "
	   "not)", ts.ts_allocs, ts.ts_unrounded);
}

/*
 * Buffers at shift_unit, 2 * shift_unit, ... shift_nr * shift_unit bytes
 * past a multiple of 64, in turn; shifted counts them.
 */
static int shift_unit, shift_nr, shifted;

static void *shifted_alloc(struct usched *s, int size)
{
	int k = (shifted++ % shift_nr + 1) * shift_unit;
	size_t len = ((size_t)size + 127) & ~(size_t)63;
	char *raw = aligned_alloc(64, len);

	(void)s;
	if (raw == NULL)
		return NULL;
	memset(raw, 0xa5, len);	/* saved_finder reads it all */
	raw[k - 1] = (char)k;	/* for shifted_free */
	return raw + k;
}

static void shifted_free(struct usched *s, void *buf, int size)
{
	char *p = buf;

	(void)s;
	(void)size;
	free(p - p[-1]);
}

/* s_alloc may return buffers at any address: at 1 to 15 bytes past one. */

static void test_misaligned(void)
{
	struct tsched ts;
	long want = 0;

	tsched_init(&ts);
	ts.ts_s.s_alloc = shifted_alloc;
	ts.ts_s.s_free = shifted_free;
	shift_unit = 1;
	shift_nr = 15;
	shifted = 0;
	bad = resumes = 0;
	for (int depth = 10; depth < 25; depth++) {
		tsched_spawn(&ts, descender, (void *)(intptr_t)depth);
		want += 2 * depth;
	}
	tsched_run(&ts);
	ok(bad == 0 && resumes == want && shifted >= 15,
	   "stack buffers 1 to 15 bytes off alignment: %ld resumes, %ld "
	   "corrupted locals, %d buffers", resumes, bad, shifted);
}

static int big_max;

static void big_locals(void *arg)
{
	volatile uint64_t big[65536 / 8];
	uintptr_t id = (uintptr_t)arg;

	fill(big, 65536 / 8, id, 0);
	for (int i = 0; i < 3; i++) {
		yield_checked();
		check(big, 65536 / 8, id, 0);
	}
	big_max = tsched_self()->t_s.t_u.u_sched->s_max_used;
}

static void test_big(void)
{
	struct tsched ts;

	tsched_init(&ts);
	bad = resumes = 0;
	tsched_spawn(&ts, big_locals, (void *)1);
	tsched_spawn(&ts, big_locals, (void *)2);
	tsched_spawn(&ts, descender, (void *)50);
	tsched_run(&ts);
	ok(bad == 0, "64 KiB of locals intact across blocks");
	ok(big_max >= 65536 && big_max < 65536 + 4096,
	   "s_max_used reports the saved stack: %d bytes", big_max);
}

static void extra_bytes(void *arg)
{
	size_t d = (size_t)arg;
	volatile uint64_t pad[d / 8 + 1];
	uintptr_t id = (uintptr_t)tsched_self();
	struct ustack *u = &tsched_self()->t_s.t_u;

	fill(pad, d / 8 + 1, id, 7);
	yield_checked();
	check(pad, d / 8 + 1, id, 7);
	bad += u->u_used < (int)d || u->u_used > (int)d + 1024;
	yield_checked();
	check(pad, d / 8 + 1, id, 7);
}

static void test_extra(void)
{
	static const size_t extra[] = { 0, 1, 8, 100, 1000, 10000, 100000 };
	struct tsched ts;

	tsched_init(&ts);
	bad = resumes = 0;
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
		tsched_spawn(&ts, extra_bytes, (void *)extra[i]);
	tsched_run(&ts);
	ok(bad == 0, "threads with D = 0 .. 100000 extra bytes intact, "
	   "u_used within 1 KiB of D");
}

/* A thread blocking once with fb_extra bytes: what it kept, its buffer. */
struct first {
	int fb_extra;
	int fb_used;
	int fb_len;
};

static void first_buffer(void *arg)
{
	struct first *fb = arg;
	volatile uint64_t pad[fb->fb_extra / 8 + 1];
	uintptr_t id = (uintptr_t)tsched_self();
	struct ustack *u = &tsched_self()->t_s.t_u;

	fill(pad, fb->fb_extra / 8 + 1, id, 3);
	yield_checked();
	check(pad, fb->fb_extra / 8 + 1, id, 3);
	fb->fb_used = u->u_used;
	fb->fb_len = u->u_len;
}

/* What usched.c adds to a buffer for ASan's shadow of the stack. */
#ifdef TAP_ASAN
#define ASAN_SHADOW(used) ((used) / 8)
#else
#define ASAN_SHADOW(used) 0
#endif

/*
 * usched.c's COPY_ALIGN_MIN: a saved stack of 1 KiB or more lies at its
 * stack pointer's offset modulo 64 in its buffer, which has up to 64 bytes
 * more for that.
 */
enum { ALIGN_MIN = 1024, ALIGN_SLACK = 64 };

/* A thread that blocks with its pattern where saved() looks for it. */
struct saved {
	int                        sv_extra;
	struct ustack             *sv_u;
	volatile const uint64_t   *sv_pad;
	int                        sv_used;
	int                        sv_want;	/* where it should be */
	int                        sv_found;	/* where it is, or -1 */
	int                        sv_fits;	/* the buffer holds it there */
};

static void saved_blocker(void *arg)
{
	struct saved *sv = arg;
	volatile uint64_t pad[sv->sv_extra / 8 + 1];

	fill(pad, sv->sv_extra / 8 + 1, 1, 9);
	sv->sv_pad = pad;
	sv->sv_u = &tsched_self()->t_s.t_u;
	yield_checked();
	check(pad, sv->sv_extra / 8 + 1, 1, 9);
}

/* Runs while sv's thread is blocked: where its pattern is in the buffer. */
static void saved_finder(void *arg)
{
	struct saved *sv = arg;
	const struct ustack *u = sv->sv_u;
	const char *sp = u->u_sched->s_bottom - u->u_used;
	size_t at = (const char *)sv->sv_pad - sp;
	uintptr_t off = ((uintptr_t)sp - (uintptr_t)u->u_stack) & 63;
	uint64_t want[4];

	for (int i = 0; i < 4; i++)
		want[i] = pattern(1, 9, i);
	sv->sv_used = u->u_used;
	sv->sv_want = u->u_used < ALIGN_MIN ? 0 : (int)off;
	sv->sv_fits = sv->sv_want + u->u_used + ASAN_SHADOW(u->u_used) <=
		      u->u_len;
	sv->sv_found = -1;
	for (int off = 0; off < 64 && off + at + 32 <= (size_t)u->u_len; off++)
		if (memcmp((const char *)u->u_stack + off + at, want, 32) == 0)
			sv->sv_found = off;
}

static void test_saved_offset(void)
{
	/* under and over 1 KiB; each size four times, in buffers of the four
	 * shifts, so its offset takes every value */
	static const int extra[] = { 64, 512, 528, 1032, 1032, 1032, 1032,
				     4000, 4000, 4000, 4000 };
	int offsets = 0, small = 0;

	shift_unit = 16;
	shift_nr = 4;
	shifted = 0;

	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
		struct saved sv = { .sv_extra = extra[i] };
		struct tsched ts;

		tsched_init(&ts);
		ts.ts_s.s_alloc = shifted_alloc;
		ts.ts_s.s_free = shifted_free;
		bad = resumes = 0;
		tsched_spawn(&ts, saved_blocker, &sv);
		tsched_spawn(&ts, saved_finder, &sv);
		tsched_run(&ts);
		ok(bad == 0 && sv.sv_found == sv.sv_want && sv.sv_fits,
		   "a saved stack of %d bytes lies at %d in its buffer (%s), "
		   "found at %d", sv.sv_used, sv.sv_want,
		   sv.sv_used < ALIGN_MIN ? "its start" :
		   "the stack pointer's offset modulo 64", sv.sv_found);
		if (sv.sv_used < ALIGN_MIN)
			small++;
		else
			offsets |= 1 << sv.sv_want / 16;
	}
	ok(offsets == 0xf && small >= 2, "those offsets were 0, 16, 32 and 48 "
	   "(mask %#x), and %d stacks were below 1 KiB", offsets, small);
}

static void test_first_buffer(void)
{
	struct first fb[3] = { { .fb_extra = 2048 }, { .fb_extra = 1536 },
			       { .fb_extra = 64 } };
	struct tsched ts;
	int max, twice;

	tsched_init(&ts);
	bad = resumes = 0;
	for (int i = 0; i < 3; i++) {
		tsched_spawn(&ts, first_buffer, &fb[i]);
		tsched_run(&ts);	/* one after the other */
	}
	max = ts.ts_s.s_max_used;
	ok(bad == 0 && max > 2048 && max < 2048 + 1024,
	   "s_max_used is the deepest stack saved: %d bytes", max);
	ok(fb[0].fb_len >= 2048 && fb[0].fb_len < 2048 + 1024,
	   "a first thread's buffer fits what it needs: %d bytes",
	   fb[0].fb_len);
	/* rounded up to 16 bytes; under ASan, an eighth more for the shadow */
	ok(fb[1].fb_len >= max &&
	   fb[1].fb_len < max + 16 + ALIGN_SLACK + ASAN_SHADOW(max),
	   "a thread needing more than half of s_max_used gets s_max_used: "
	   "%d bytes", fb[1].fb_len);
	twice = 2 * fb[2].fb_used;
	ok(fb[2].fb_len >= twice && fb[2].fb_len < twice + 16 +
	   ASAN_SHADOW(twice), "one needing much less gets twice its need, "
	   "room to grow: %d bytes for %d", fb[2].fb_len, fb[2].fb_used);
}

/* Blocks with n extra bytes on the stack, checking them after. */
static __attribute__((noinline)) void block_with(int n)
{
	volatile uint64_t pad[n / 8 + 1];
	uintptr_t id = (uintptr_t)tsched_self();

	fill(pad, n / 8 + 1, id, 5);
	yield_checked();
	check(pad, n / 8 + 1, id, 5);
}

/* A thread that blocks twice, the second time deeper. */
struct growth {
	int g_extra[2];		/* extra bytes at each block */
	int g_fresh;		/* u_used before the first block */
	int g_used[2];		/* what it saved */
	int g_len[2];		/* its buffer then */
	int g_max_used;		/* s_max_used after the run */
};

static void grow(void *arg)
{
	struct growth *g = arg;
	struct ustack *u = &tsched_self()->t_s.t_u;

	g->g_fresh = u->u_used;
	for (int i = 0; i < 2; i++) {
		block_with(g->g_extra[i]);
		g->g_used[i] = u->u_used;
		g->g_len[i] = u->u_len;
	}
}

static void run_growth(struct growth *g, int stack_max)
{
	struct tsched ts;

	tsched_init(&ts);
	ts.ts_s.s_stack_max = stack_max;
	tsched_spawn(&ts, grow, g);
	tsched_run(&ts);
	g->g_max_used = ts.ts_s.s_max_used;
}

/*
 * A stack that grows a little grows again soon: its buffer gets half as
 * much again, so that it is not reallocated at every block; but never
 * more than s_stack_max allows.
 */
static void test_growth(void)
{
	struct growth g = { .g_extra = { 2000, 2400 } };
	struct growth capped = { .g_extra = { 3000, 3600 } };
	int max = 4096 + ALIGN_SLACK + ASAN_SHADOW(4096);

	bad = resumes = 0;
	g.g_fresh = -1;
	run_growth(&g, 0);
	ok(bad == 0 && g.g_used[1] > g.g_len[0] &&
	   g.g_len[1] >= g.g_len[0] + g.g_len[0] / 2,
	   "a buffer that must grow grows by half: %d bytes, then %d to save "
	   "%d", g.g_len[0], g.g_len[1], g.g_used[1]);
	ok(g.g_max_used == g.g_used[1], "s_max_used is the most it saved, "
	   "%d, not a buffer's size (got %d)", g.g_used[1], g.g_max_used);
	ok(g.g_fresh == 0, "u_used before the first block: 0 (got %d)",
	   g.g_fresh);
	run_growth(&capped, 4096);
	ok(bad == 0 && capped.g_used[1] > capped.g_len[0] &&
	   capped.g_len[1] >= capped.g_used[1] && capped.g_len[1] <= max,
	   "but not past s_stack_max (4096): %d bytes, then %d to save %d",
	   capped.g_len[0], capped.g_len[1], capped.g_used[1]);
}

/* Random depth, random number of blocks, random interleaving. */
static void wander(uintptr_t id, unsigned long *seed, int depth)
{
	volatile uint64_t pat[4];
	int blocks = tap_rand(seed) % 4;

	fill(pat, 4, id, depth);
	for (int i = 0; i < blocks; i++) {
		yield_checked();
		check(pat, 4, id, depth);
	}
	if (tap_rand(seed) % 8 != 0 && depth < 40)
		wander(id, seed, depth + 1);
	check(pat, 4, id, depth);
}

static void wanderer(void *arg)
{
	unsigned long seed = (uintptr_t)arg;

	wander((uintptr_t)arg, &seed, 0);
}

static void test_random(void)
{
	struct tsched ts;

	tsched_init(&ts);
	ts.ts_seed = 42;
	bad = resumes = 0;
	for (uintptr_t i = 1; i <= 1000; i++)
		tsched_spawn(&ts, wanderer, (void *)i);
	tsched_run(&ts);
	ok(bad == 0 && ts.ts_done == 1000,
	   "1000 threads in random order: %ld resumes, %ld bad, %ld done",
	   resumes, bad, ts.ts_done);
	ok(ts.ts_bytes == 0, "all buffers freed");
}

int main(void)
{
	test_depths();
	test_misaligned();
	test_big();
	test_extra();
	test_first_buffer();
	test_saved_offset();
	test_growth();
	test_random();
	return tap_done();
}
