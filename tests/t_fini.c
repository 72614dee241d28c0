/*
 * The schedulers' fini and start against what runs beside them: spawns
 * and wakes from native threads while fini waits, threads whose parents
 * ended before them, two fini at once, and start racing fini.
 */
#include "../sched/sched.h"
#include "tap.h"
#include "tsched.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

static const struct sched_ops *ops;

/* A thread that counts its run in the long at arg. */
static void count_run(void *arg)
{
	__atomic_fetch_add((long *)arg, 1, __ATOMIC_RELAXED);
}

/*
 * Spawns from a native thread while fini runs: each either fails (EINVAL,
 * and the spawner stops) or its thread runs before fini returns.
 */
enum { LATE_MAX = 20000 };
static long late_ran;

static void *late_spawner(void *arg)
{
	long *spawned = arg;

	for (int i = 0; i < LATE_MAX; i++) {
		if (ops->so_spawn(count_run, &late_ran, i) == NULL)
			return (void *)(long)errno;
		++*spawned;
	}
	return NULL;
}

static void test_spawn_during_fini(void)
{
	int rounds = (int)(test_threads(1000000) / 10000), bad = 0, cut = 0;
	long spawned_all = 0;

	tap_watchdog(120, "%s: fini racing with spawns hangs", ops->so_name);
	for (int r = 0; r < rounds; r++) {
		long spawned = 0;
		pthread_t th;
		void *err;

		late_ran = 0;
		require(ops->so_init(2, 0) == 0 && ops->so_start() == 0);
		require(pthread_create(&th, NULL, late_spawner,
				       &spawned) == 0);
		usleep(r % 10 * 100);
		require(ops->so_fini() == 0);
		pthread_join(th, &err);
		bad += (err != NULL && (long)err != EINVAL) ||
		       late_ran != spawned;
		cut += err != NULL;
		spawned_all += spawned;
	}
	tap_watchdog_off();
	ok(bad == 0, "%s: %d fini racing with spawns from a native thread "
	   "(%d cut short by fini, %ld spawned): each thread ran, or its "
	   "spawn said EINVAL; %d rounds wrong", ops->so_name, rounds, cut,
	   spawned_all, bad);
}

/*
 * A wake from a native thread while fini waits for its target, the last
 * thread: the wake lets it end, fini then frees the structs, and the wake
 * must be done with its target first (ASan sees it if not). Every other
 * round, the waker is a thread of the other scheduler.
 */
static void *fini_wakee;
static int fini_entered, fini_wake_rc;

static void fini_child(void *arg)
{
	(void)arg;
	__atomic_store_n(&fini_wakee, ops->so_self(), __ATOMIC_RELEASE);
	ops->so_wait();
}

static void *fini_waker(void *arg)
{
	while (!__atomic_load_n(&fini_entered, __ATOMIC_ACQUIRE))
		sched_yield();
	usleep(200 + (long)arg % 4 * 50);
	fini_wake_rc = ops->so_wake(fini_wakee);
	return NULL;
}

static void fini_waker_thread(void *arg)
{
	fini_waker(arg);
}

static void test_wake_during_fini(void)
{
	const struct sched_ops *other = ops == &ll_ops ? &rr_ops : &ll_ops;
	long bad = 0;
#ifdef TAP_ASAN
	long rounds = 2000;	/* the window is small */
#else
	long rounds = test_threads(50000) / 100;
#endif

	tap_watchdog(120, "%s: wakes during fini hang", ops->so_name);
	for (long r = 0; r < rounds; r++) {
		pthread_t w;

		fini_wakee = NULL;
		fini_entered = 0;
		require(ops->so_init(2, 1) == 0 &&
			ops->so_spawn(fini_child, NULL, 1) != NULL &&
			ops->so_start() == 0);
		while (__atomic_load_n(&fini_wakee, __ATOMIC_ACQUIRE) == NULL)
			sched_yield();
		if (r % 2 == 0)
			require(pthread_create(&w, NULL, fini_waker,
					       (void *)r) == 0);
		else
			require(other->so_init(1, 1) == 0 &&
				other->so_spawn(fini_waker_thread, (void *)r,
						0) != NULL &&
				other->so_start() == 0);
		__atomic_store_n(&fini_entered, 1, __ATOMIC_RELEASE);
		require(ops->so_fini() == 0);
		if (r % 2 == 0)
			pthread_join(w, NULL);
		else
			require(other->so_fini() == 0);
		bad += fini_wake_rc != 0;
	}
	tap_watchdog_off();
	ok(bad == 0, "%s: %ld wakes from a native thread or a thread of %s "
	   "that let fini end: each 0, %ld not", ops->so_name, rounds,
	   other->so_name, bad);
}

/*
 * Threads that outlive the thread that spawned them, which came from a
 * native thread: fini waits for them. A processor counts the threads it
 * spawns for itself apart from those spawned elsewhere, and a thread that
 * ends takes from either count; here the parent, counted with those from
 * elsewhere, ends first, and its children wait until a native thread
 * wakes them while fini runs.
 */
enum { ORPHANS = 3 };
static void *orphan[ORPHANS];
static long orphans_done;

static void orphan_child(void *arg)
{
	__atomic_store_n(&orphan[(long)arg], ops->so_self(), __ATOMIC_RELEASE);
	if (ops->so_wait() == 0)
		__atomic_fetch_add(&orphans_done, 1, __ATOMIC_RELAXED);
}

static void orphan_parent(void *arg)
{
	(void)arg;
	for (long k = 0; k < ORPHANS; k++)
		if (ops->so_spawn(orphan_child, (void *)k, 0) == NULL)
			return;
}

static void *orphan_waker(void *arg)
{
	long *failed = arg;

	while (!__atomic_load_n(&fini_entered, __ATOMIC_ACQUIRE))
		sched_yield();
	/* One at a time: the processor idles between, and must not stop. */
	for (long k = 0; k < ORPHANS; k++) {
		usleep(10000);
		*failed += ops->so_wake(orphan[k]) != 0;
	}
	return NULL;
}

static void test_orphans_fini(void)
{
	long failed = 0, ready;
	pthread_t w;

	memset(orphan, 0, sizeof orphan);
	orphans_done = 0;
	fini_entered = 0;
	tap_watchdog(60, "%s: fini with orphans hangs", ops->so_name);
	require(ops->so_init(1, 0) == 0 &&
		ops->so_spawn(orphan_parent, NULL, 0) != NULL &&
		ops->so_start() == 0);
	do {	/* every child is there and waits */
		sched_yield();
		ready = 0;
		for (long k = 0; k < ORPHANS; k++)
			ready += __atomic_load_n(&orphan[k],
						 __ATOMIC_ACQUIRE) != NULL;
	} while (ready < ORPHANS);
	require(pthread_create(&w, NULL, orphan_waker, &failed) == 0);
	__atomic_store_n(&fini_entered, 1, __ATOMIC_RELEASE);
	require(ops->so_fini() == 0);
	pthread_join(w, NULL);
	tap_watchdog_off();
	ok(orphans_done == ORPHANS && failed == 0, "%s: %d threads outlive "
	   "their parent from a native thread; fini waits until they are "
	   "woken and end: %ld ended, %ld wakes failed", ops->so_name,
	   ORPHANS, orphans_done, failed);
}

/*
 * fini from two native threads at once, while a thread keeps the
 * processors busy for a while: one fini waits and returns 0, the other
 * returns -EINVAL at once (it used to join the processors a second time,
 * and hang or worse).
 */
static int fini_pair_rc[2];
static long fini_pair_in;

static void fini_pair_busy(void *arg)
{
	(void)arg;
	/* both fini calls come in while this runs, or soon after */
	while (__atomic_load_n(&fini_pair_in, __ATOMIC_ACQUIRE) < 2 &&
	       ops->so_wake(ops->so_self()) == 0 && ops->so_wait() == 0)
		;
	usleep(20000);
}

static void *fini_pair(void *arg)
{
	__atomic_add_fetch(&fini_pair_in, 1, __ATOMIC_ACQ_REL);
	fini_pair_rc[(long)arg] = ops->so_fini();
	return NULL;
}

static void test_fini_concurrent(void)
{
	int bad = 0, rounds = 20;

	tap_watchdog(60, "%s: two fini calls at once hang", ops->so_name);
	for (int r = 0; r < rounds; r++) {
		pthread_t th[2];

		fini_pair_in = 0;
		require(ops->so_init(2, 1) == 0 &&
			ops->so_spawn(fini_pair_busy, NULL, 0) != NULL &&
			ops->so_start() == 0);
		for (long i = 0; i < 2; i++)
			require(pthread_create(&th[i], NULL, fini_pair,
					       (void *)i) == 0);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		bad += fini_pair_rc[0] + fini_pair_rc[1] != -EINVAL;
	}
	tap_watchdog_off();
	ok(bad == 0, "%s: %d rounds of fini from two native threads at once: "
	   "one 0, the other -EINVAL; %d rounds wrong", ops->so_name, rounds,
	   bad);
}

/*
 * start from two native threads at once, or start against fini: a
 * processor must be started once (two starts used to start it twice, and
 * its second native thread stopped the program). Two starts: one 0, the
 * other -EALREADY. Start against fini: fini 0, start 0 (first),
 * -EALREADY (after fini started them) or -EINVAL (once fini was called).
 */
static pthread_barrier_t ctl_pair_line;
static int ctl_pair_rc[2];
static long ctl_pair_ran;

/* arg: 0 or 1, start, its result in ctl_pair_rc[arg]; 2: fini, in [0]. */
static void *ctl_pair(void *arg)
{
	long k = (long)arg;

	pthread_barrier_wait(&ctl_pair_line);
	ctl_pair_rc[k % 2] = k == 2 ? ops->so_fini() : ops->so_start();
	return NULL;
}

enum { CTL_PROCS = 4, CTL_KIDS = 8 };

/*
 * A fresh scheduler with CTL_KIDS threads to run, then two native threads
 * at once: first (0 or 2, see ctl_pair) and start.
 */
static void ctl_pair_run(long first)
{
	pthread_t th[2];

	require(ops->so_init(CTL_PROCS, CTL_KIDS) == 0);
	for (int k = 0; k < CTL_KIDS; k++)
		require(ops->so_spawn(count_run, &ctl_pair_ran, k) != NULL);
	require(pthread_barrier_init(&ctl_pair_line, NULL, 2) == 0);
	require(pthread_create(&th[0], NULL, ctl_pair, (void *)first) == 0 &&
		pthread_create(&th[1], NULL, ctl_pair, (void *)1L) == 0);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	pthread_barrier_destroy(&ctl_pair_line);
}

static void test_start_concurrent(void)
{
	int rounds = 30, bad_starts = 0, bad_fini = 0, s;

	ctl_pair_ran = 0;
	for (int r = 0; r < rounds; r++) {
		ctl_pair_run(0);
		bad_starts += ctl_pair_rc[0] + ctl_pair_rc[1] != -EALREADY;
		bad_fini += ops->so_fini() != 0;
	}
	for (int r = 0; r < rounds; r++) {
		ctl_pair_run(2);
		s = ctl_pair_rc[1];
		bad_fini += ctl_pair_rc[0] != 0 ||
			    (s != 0 && s != -EALREADY && s != -EINVAL);
	}
	ok(bad_starts == 0, "%s: %d rounds of start from two native threads "
	   "at once: one 0, the other -EALREADY; %d rounds wrong",
	   ops->so_name, rounds, bad_starts);
	ok(bad_fini == 0 && ctl_pair_ran == 2L * rounds * CTL_KIDS,
	   "%s: %d rounds of start against fini: fini 0, start 0, -EALREADY "
	   "or -EINVAL, every thread ran once (%d wrong, %ld of %d ran)",
	   ops->so_name, rounds, bad_fini, ctl_pair_ran,
	   2 * rounds * CTL_KIDS);
}

static void tests(void)
{
	test_spawn_during_fini();
	test_wake_during_fini();
	test_orphans_fini();
	test_fini_concurrent();
	test_start_concurrent();
}

int main(void)
{
	tsched_each(&ops, tests);
	return tap_done();
}
