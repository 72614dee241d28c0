/*
 * Stack buffers on both sides of the size classes' end: every one a
 * finished thread gives back is kept for reuse or freed, none is lost.
 * Processors keep buffers up to the last class in free lists and hand
 * bigger ones to malloc and free (sched/pool.c); a buffer one class too
 * big taken for a small one would be lost, and written past the lists.
 *
 * Threads block with stacks a little deeper each, from well below the
 * last class to well above it, so that their first buffers take every
 * size in between; this program's malloc (tmalloc.c) sees which. Then
 * many threads one after another each block once: they reuse what the
 * ones before gave back, and allocate nothing. Where another malloc is
 * the one called (sanitizers, valgrind), nothing is tested.
 */
#include "tap.h"
#include "tmalloc.h"
#include "../sched/proc.h"

enum {
	STEP     = 8,		/* bytes more stack for each thread */
	LOW      = (BUF_CLASSES - 1) * BUF_CLASS_SIZE - 512,
	HIGH     = (BUF_CLASSES + 1) * BUF_CLASS_SIZE + 512,
	THREADS  = (HIGH - LOW) / STEP + 1,
	SEQUENCE = 20000,	/* threads one after another */
	WARM     = 100,		/* of them, before allocations are counted */
	PAD      = 2048		/* bytes of stack each of them blocks with */
};

static const struct sched_ops *ops;
static void *threads[THREADS];
static int intact, finished;
static volatile int first_malloced;	/* a buffer of class BUF_CLASSES */
static int counting;
static long counted;			/* allocations while counting */

/* The allocation hook: notes a buffer of the first class malloc makes,
 * and counts allocations while asked to. */
static int see_buffer(size_t size, void *caller)
{
	(void)caller;
	if (size == BUF_CLASSES * BUF_CLASS_SIZE)
		first_malloced = 1;
	if (__atomic_load_n(&counting, __ATOMIC_RELAXED))
		__atomic_fetch_add(&counted, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Thread k blocks LOW + k * STEP bytes deeper than its bottom, or so. */
static __attribute__((noinline)) void deep_wait(long k)
{
	volatile char pad[LOW + k * STEP];

	fill_bytes(pad, sizeof pad, (char)k);
	if (ops->so_wait() == 0 && bytes_intact(pad, sizeof pad, (char)k))
		__atomic_fetch_add(&intact, 1, __ATOMIC_RELAXED);
}

static void member(void *arg)
{
	deep_wait((long)arg);
	__atomic_fetch_add(&finished, 1, __ATOMIC_RELAXED);
}

/* Queued after the members, so it runs once all of them have blocked. */
static void waker(void *arg)
{
	(void)arg;
	for (int k = 0; k < THREADS; k++)
		if (ops->so_wake(threads[k]) != 0)
			return;
}

static void buffers_come_back(const char *name)
{
	long bytes, blocks;

	ops = sched_find(name);
	intact = finished = first_malloced = 0;
	tmalloc_track(1);
	require(ops != NULL && ops->so_init(1, THREADS + 1) == 0);
	for (long k = 0; k < THREADS; k++)
		require((threads[k] = ops->so_spawn(member, (void *)k, 0)));
	require(ops->so_spawn(waker, NULL, 0) != NULL);
	tap_watchdog(60, "%s: the threads never finished", name);
	require(ops->so_start() == 0 && ops->so_fini() == 0);
	tap_watchdog_off();
	tmalloc_track(0);
	/* The processors' array (counters) is freed by the next init. */
	require(ops->so_init(1, 0) == 0 && ops->so_fini() == 0);
	ok(finished == THREADS && intact == THREADS, "%s: %d threads blocked "
	   "%d to %d bytes deep and finished, stacks intact (%d finished, %d "
	   "intact)", name, THREADS, LOW, HIGH, finished, intact);
	ok(first_malloced, "%s: a buffer of %d bytes, the first size past the "
	   "free lists, was malloc'd", name, BUF_CLASSES * BUF_CLASS_SIZE);
	blocks = tmalloc_outstanding(&bytes);
	ok(blocks == 0, "%s: after fini every buffer is freed (%ld blocks, "
	   "%ld bytes left)", name, blocks, bytes);
}

/*
 * Blocks once between two wakes of its parent, PAD bytes deep: buffers
 * not reused would take a new chunk every 500 children or so. Then ends.
 */
static void child(void *parent)
{
	volatile char pad[PAD];

	fill_bytes(pad, sizeof pad, 1);
	ops->so_wake(parent);
	if (ops->so_wait() == 0 &&	/* its stack is saved here */
	    bytes_intact(pad, sizeof pad, 1))
		__atomic_fetch_add(&finished, 1, __ATOMIC_RELAXED);
	ops->so_wake(parent);
}

/* Runs SEQUENCE children one at a time, counting after the first WARM. */
static void parent(void *arg)
{
	void *self = ops->so_self(), *c;

	(void)arg;
	for (int i = 0; i < SEQUENCE; i++) {
		if (i == WARM)
			__atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
		if ((c = ops->so_spawn(child, self, 0)) == NULL ||
		    ops->so_wait() != 0 || ops->so_wake(c) != 0 ||
		    ops->so_wait() != 0)
			break;
	}
	__atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
}

static void buffers_reused(const char *name)
{
	ops = sched_find(name);
	finished = 0;
	counted = 0;
	require(ops != NULL && ops->so_init(1, 2) == 0);
	require(ops->so_spawn(parent, NULL, 0) != NULL);
	tap_watchdog(60, "%s: the children never finished", name);
	require(ops->so_start() == 0 && ops->so_fini() == 0);
	tap_watchdog_off();
	ok(finished == SEQUENCE && counted == 0, "%s: %d threads one after "
	   "another, each blocking once, all finish intact (%d) and after the "
	   "first %d allocate nothing (%ld allocations)", name, SEQUENCE,
	   finished, WARM, counted);
}

int main(void)
{
	tmalloc_require_ours();
	tmalloc_hook = see_buffer;
	buffers_come_back("rr");
	buffers_come_back("ll");
	buffers_reused("rr");
	buffers_reused("ll");
	return tap_done();
}
