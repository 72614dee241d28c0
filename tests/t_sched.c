/*
 * The schedulers, through the function table: rings on one and several
 * processors, wake before wait (from a native thread too), banked wakes,
 * wake of a finished thread (from elsewhere and from its processor), a
 * wake that must get through to a processor that is never idle (its
 * threads waking each other, or only spawning), the order of a spawn and
 * a wake, counters read while the processors run (and where a wake
 * counts), idle processors, calls out of order and from the wrong thread,
 * spawning from threads and from native threads, a failed spawn (it takes
 * no processor's turn), and the memory spawning takes, buffers across the
 * largest class, a million threads, a shared floating-point control state
 * (sched_set_share_fpctl), the order of spawns and wakes from a native
 * thread, a struct that a wake from elsewhere holds (no spawn takes it).
 * Pinning is t_pin's, fini and start against what runs beside
 * them t_fini's.
 */
#include "../ll.h"
#include "../rr.h"
#include "tap.h"
#include "tsched.h"

#include <errno.h>
#include <fenv.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const struct sched_ops *ops;

/* The ring: R cycles of N threads pass a token M rounds. */
struct ring {
	int    r_n, r_m;
	void **r_thread;		/* N * R handles */
	long  *r_got;			/* tokens each thread received */
	long   r_errors;
};

static struct ring ring;

/* A wait or wake returned rc: the ring goes on, and fails if not 0. */
static void ring_count_failure(int rc)
{
	if (rc != 0)
		__atomic_fetch_add(&ring.r_errors, 1, __ATOMIC_RELAXED);
}

static void member(void *arg)
{
	long i = (long)arg;
	long cycle = i / ring.r_n, j = i % ring.r_n;
	void *right = ring.r_thread[cycle * ring.r_n + (j + 1) % ring.r_n];

	for (int round = 0; round < ring.r_m; round++) {
		if (round % ring.r_n == j) {
			ring_count_failure(ops->so_wake(right));
			ring_count_failure(ops->so_wait());
			ring.r_got[i]++;
		} else {
			ring_count_failure(ops->so_wait());
			ring.r_got[i]++;
			ring_count_failure(ops->so_wake(right));
		}
	}
}

/*
 * Sets up a ring of R cycles of N threads and spawns them. spread:
 * neighbours in different groups, so ll wakes cross processors.
 */
static long ring_spawn(int n, int r, int m, int procs, int spread)
{
	long total = (long)n * r;

	ring = (struct ring){ .r_n = n, .r_m = m,
			      .r_thread = calloc(total, sizeof(void *)),
			      .r_got = calloc(total, sizeof(long)) };
	require(ring.r_thread != NULL && ring.r_got != NULL);
	require(ops->so_init(procs, total) == 0);
	for (long i = 0; i < total; i++) {
		ring.r_thread[i] = ops->so_spawn(member, (void *)i,
						 (int)(spread ? i : i / n));
		require(ring.r_thread[i] != NULL);
	}
	return total;
}

/* After the run: how many threads did not get their M tokens. */
static long ring_wrong(long total)
{
	long bad = 0;

	for (long i = 0; i < total; i++)
		bad += ring.r_got[i] != ring.r_m;
	free(ring.r_thread);
	free(ring.r_got);
	return bad;
}

static void run_ring(int n, int r, int m, int procs, int spread)
{
	long total = ring_spawn(n, r, m, procs, spread), bad;
	struct sched_stats st;

	require(ops->so_start() == 0);
	require(ops->so_fini() == 0);
	bad = ring_wrong(total);
	require(tsched_stats_sum(ops, &st, 1) == procs);
	ok(bad == 0 && ring.r_errors == 0 &&
	   st.ss_switches >= (unsigned long)total,
	   "%s ring N=%d R=%d M=%d P=%d%s: every thread got %d tokens "
	   "(%ld wrong, %ld errors, %lu switches, %lu remote wakes)",
	   ops->so_name, n, r, m, procs, spread ? " spread" : "", m, bad,
	   ring.r_errors, st.ss_switches, st.ss_remote_wakes);
	if (spread && procs > 1)
		ok(st.ss_remote_wakes > (unsigned long)m,
		   "%s: wakes crossed processors", ops->so_name);
}

/*
 * so_stats from a native thread while the processors run: the counters
 * only grow, and ThreadSanitizer sees no race with the processors and
 * wakers that update them. The reader yields between rounds: under
 * valgrind, which runs one native thread at a time, it would otherwise
 * take most of the time.
 */
enum { STATS_PROCS = 3 };
static int stats_stop;

static int stats_grew(const struct sched_stats *now,
		      const struct sched_stats *was)
{
	return now->ss_switches >= was->ss_switches &&
	       now->ss_local_wakes >= was->ss_local_wakes &&
	       now->ss_remote_wakes >= was->ss_remote_wakes &&
	       now->ss_sleeps >= was->ss_sleeps &&
	       now->ss_max_stack >= was->ss_max_stack;
}

static void *stats_reader(void *arg)
{
	struct sched_stats was[STATS_PROCS] = { { 0 } }, now;
	long *reads = arg, bad = 0;

	do {
		for (int p = 0; p < STATS_PROCS; p++) {
			bad += ops->so_stats(p, &now) != 0 ||
			       !stats_grew(&now, &was[p]);
			was[p] = now;
		}
		++*reads;
		sched_yield();
	} while (!__atomic_load_n(&stats_stop, __ATOMIC_ACQUIRE));
	return (void *)bad;
}

static void test_stats_while_running(void)
{
	long total = ring_spawn(4, 6, 2000, STATS_PROCS, 1), reads = 0, bad;
	pthread_t th;
	void *rc;

	require(ops->so_start() == 0);
	stats_stop = 0;
	require(pthread_create(&th, NULL, stats_reader, &reads) == 0);
	require(ops->so_fini() == 0);
	__atomic_store_n(&stats_stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, &rc);
	bad = (long)rc + ring_wrong(total);
	ok(bad == 0 && ring.r_errors == 0,
	   "%s: counters read %ld times from a native thread during a "
	   "ring on %d processors: they only grow (%ld wrong)", ops->so_name,
	   reads, STATS_PROCS, bad);
}

/* Wake before wait: the wake is kept. */
static int early_result;

static void early(void *arg)
{
	early_result = ops->so_wake(*(void **)arg) == 0 &&
		       ops->so_wake(*(void **)arg) == 0 &&
		       ops->so_wait() == 0 && ops->so_wait() == 0;
}

static void test_wake_before_wait(void)
{
	static void *self;

	require(ops->so_init(1, 1) == 0);
	self = ops->so_spawn(early, &self, 0);
	require(self != NULL);
	early_result = 0;
	require(ops->so_fini() == 0);	/* fini starts the processors */
	ok(early_result, "%s: two wakes before two waits; neither blocks "
	   "forever", ops->so_name);
}

/*
 * A wake from a native thread that returned before the wait is kept as one
 * from the thread's processor is: the wait takes it at once, before the
 * thread spawned next in line runs, and without saving the stack, which
 * is too deep to save here.
 */
static int outside_woken, outside_ran, outside_result;

static void *outside_waker(void *t)
{
	__atomic_store_n(&outside_woken, ops->so_wake(t) == 0 ? 1 : -1,
			 __ATOMIC_RELEASE);
	return NULL;
}

static void outside_next(void *arg)
{
	(void)arg;
	outside_ran = 1;
}

static __attribute__((noinline)) int outside_deep_wait(void)
{
	volatile char deep[USCHED_STACK_MAX_DEFAULT + 4096];
	int rc;

	deep[0] = deep[sizeof deep - 1] = 1;
	rc = ops->so_wait();
	return rc == 0 && deep[0] == 1 ? 0 : rc == 0 ? -1 : rc;
}

static void outside_woken_thread(void *arg)
{
	pthread_t th;

	(void)arg;
	require(pthread_create(&th, NULL, outside_waker, ops->so_self()) == 0);
	while (__atomic_load_n(&outside_woken, __ATOMIC_ACQUIRE) == 0)
		;	/* the processor is this thread's meanwhile */
	pthread_join(th, NULL);
	require(ops->so_spawn(outside_next, NULL, 0) != NULL);
	outside_result = outside_woken == 1 ? outside_deep_wait() : -1;
	outside_result = outside_result != 0 ? outside_result : outside_ran;
}

static void test_wake_outside_before_wait(void)
{
	outside_woken = outside_ran = 0;
	outside_result = -1;
	require(ops->so_init(1, 2) == 0);
	require(ops->so_spawn(outside_woken_thread, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(outside_result == 0, "%s: a wake from a native thread before the "
	   "wait: taken at once, the stack not saved (%d: 1 if the next thread "
	   "ran first, else the wait's error)", ops->so_name, outside_result);
}

/*
 * A thread that banked 2^31 - 1 wakes takes one more: its wait then does
 * not block. The checker, next in line on the one processor, runs only if
 * it did.
 */
static int banked_result, banked_blocked;

static void banked(void *arg)
{
	struct sched_thread *t = ops->so_self();

	(void)arg;
	t->t_permits = INT_MAX;		/* as if woken that often */
	banked_result = ops->so_wake(t) == 0 && ops->so_wait() == 0 &&
			!banked_blocked && t->t_permits == INT_MAX;
	t->t_permits = 0;
}

static void banked_check(void *arg)
{
	banked_blocked = 1;
	ops->so_wake(*(void **)arg);
}

static void test_many_banked(void)
{
	static void *t;

	require(ops->so_init(1, 2) == 0);
	t = ops->so_spawn(banked, NULL, 0);
	require(t != NULL && ops->so_spawn(banked_check, &t, 0) != NULL);
	banked_result = banked_blocked = 0;
	require(ops->so_fini() == 0);
	ok(banked_result, "%s: 2^31 banked wakes: the wait after takes one, "
	   "and does not block", ops->so_name);
}

/*
 * Saved stacks are 16-byte aligned, for the copy and the prefetch, though
 * structs and buffers are carved from one arena: a chain of threads, each
 * spawning the next (a struct) and then blocking with a frame of its own
 * size (a buffer), is checked by the thread after the last.
 */
enum { ALIGN_KIDS = 64 };
static void *align_kid[ALIGN_KIDS];
static int align_bad;

static void align_check(void *arg)
{
	(void)arg;
	for (int i = 0; i < ALIGN_KIDS; i++) {
		struct sched_thread *t = align_kid[i];

		align_bad += t->t_u.u_stack == NULL ||
			     (uintptr_t)t->t_u.u_stack % 16 != 0;
		ops->so_wake(t);
	}
}

static void align_wait(void *arg)
{
	long i = (long)arg;
	volatile char pad[i * 24 + 8];

	fill_bytes(pad, sizeof pad, 1);
	align_kid[i] = ops->so_self();
	align_bad += ops->so_spawn(i + 1 < ALIGN_KIDS ? align_wait :
				   align_check, (void *)(i + 1), 0) == NULL;
	ops->so_wait();
	align_bad += !bytes_intact(pad, sizeof pad, 1);
}

static void test_buffer_align(void)
{
	align_bad = 0;
	require(ops->so_init(1, ALIGN_KIDS + 1) == 0);
	require(ops->so_spawn(align_wait, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(align_bad == 0, "%s: %d saved stacks of as many sizes, carved "
	   "between structs: 16-byte aligned and intact", ops->so_name,
	   ALIGN_KIDS);
}

/*
 * Stacks across the largest class of buffers (4 KiB): on one processor,
 * each waiter, deeper than the one before, gets a first buffer of just
 * what it saves, so a sweep in 8-byte steps takes a buffer of every
 * 16-byte class near the limit, and the first size past it; the last
 * thread wakes them all, and each gives its buffer back as it ends.
 */
enum { EDGE_FROM = 3900, EDGE_STEP = 8, EDGE_N = 50 };
static void *edge_thread[EDGE_N];
static long edge_bad;

static void edge_wait(void *arg)
{
	long i = (long)arg;
	volatile char pad[EDGE_FROM + i * EDGE_STEP];

	fill_bytes(pad, sizeof pad, (char)i);
	edge_bad += ops->so_wait() != 0;
	edge_bad += !bytes_intact(pad, sizeof pad, (char)i);
}

static void edge_wake(void *arg)
{
	(void)arg;
	for (int i = 0; i < EDGE_N; i++)
		edge_bad += ops->so_wake(edge_thread[i]) != 0;
}

static void test_buffer_classes_edge(void)
{
	struct sched_stats st;

	edge_bad = 0;
	require(ops->so_init(1, EDGE_N + 1) == 0);
	for (long i = 0; i < EDGE_N; i++) {
		edge_thread[i] = ops->so_spawn(edge_wait, (void *)i, 0);
		require(edge_thread[i] != NULL);
	}
	require(ops->so_spawn(edge_wake, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	require(ops->so_stats(0, &st) == 0);
	ok(edge_bad == 0 && st.ss_max_stack > EDGE_FROM + EDGE_N * EDGE_STEP,
	   "%s: stacks of %d bytes and more in %d-byte steps, across the "
	   "largest buffer class: saved intact, given back (%lu at most)",
	   ops->so_name, EDGE_FROM, EDGE_STEP, st.ss_max_stack);
}

/*
 * sched_set_share_fpctl: a thread woken by one that changed the rounding
 * mode and blocked finds that mode if they share the state, else its own.
 */
static void *fp_sleeper, *fp_waker;
static int fp_found;

/* Runs first (FIFO), so it has blocked when it is woken. */
static void fp_sleep(void *arg)
{
	(void)arg;
	ops->so_wait();
	fp_found = fegetround();
	fesetround(FE_TONEAREST);
	ops->so_wake(fp_waker);
}

static void fp_wake(void *arg)
{
	(void)arg;
	fesetround(FE_UPWARD);
	ops->so_wake(fp_sleeper);
	ops->so_wait();
	fesetround(FE_TONEAREST);
}

static int run_share_fpctl(int on)
{
	sched_set_share_fpctl(on);
	fp_found = -1;
	require(ops->so_init(1, 2) == 0);
	fp_sleeper = ops->so_spawn(fp_sleep, NULL, 0);
	fp_waker = ops->so_spawn(fp_wake, NULL, 0);
	require(fp_sleeper != NULL && fp_waker != NULL);
	require(ops->so_fini() == 0);
	sched_set_share_fpctl(0);
	return fp_found;
}

static void test_share_fpctl(void)
{
	ok(run_share_fpctl(0) == FE_TONEAREST, "%s: a woken thread has its "
	   "own rounding mode", ops->so_name);
	ok(run_share_fpctl(1) == FE_UPWARD, "%s: sharing the FP control "
	   "state, it has its waker's", ops->so_name);
}

/*
 * A spawn that fails takes no processor's turn: the first thread after it
 * runs on processor 0, as the first after init does.
 */
static void test_failed_spawn_turn(void)
{
	struct sched_stats st[2];

	require(ops->so_init(2, 1) == 0);
	errno = 0;
	require(ops->so_spawn(NULL, NULL, 0) == NULL && errno == EINVAL);
	require(ops->so_spawn(tsched_nop, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	require(tsched_stats_sum(ops, st, 2) == 2);
	ok(st[0].ss_switches == 1 && st[1].ss_switches == 0, "%s: a failed "
	   "spawn takes no turn: the next thread runs on processor 0 (%lu, "
	   "%lu switches)", ops->so_name, st[0].ss_switches,
	   st[1].ss_switches);
}

static void *finished;
static int finished_rc;

static void wake_finished(void *arg)
{
	(void)arg;
	ops->so_wait();		/* woken by main after `finished` ended */
	finished_rc = ops->so_wake(finished);
}

static void test_wake_finished(void)
{
	void *waker;
	int rc;

	require(ops->so_init(2, 2) == 0);
	finished = ops->so_spawn(tsched_nop, NULL, 0);
	waker = ops->so_spawn(wake_finished, NULL, 1);
	require(finished != NULL && waker != NULL);
	require(ops->so_start() == 0);
	/* Until that thread has ended, the wakes are kept as permits. */
	tap_watchdog(60, "%s: wakes of a finished thread never fail",
		     ops->so_name);
	while ((rc = ops->so_wake(finished)) == 0)
		usleep(50);
	tap_watchdog_off();
	ok(rc == -ESRCH, "%s: waking a finished thread from a native thread: "
	   "-ESRCH (got %d)", ops->so_name, rc);
	require(ops->so_wake(waker) == 0);
	require(ops->so_fini() == 0);
	ok(finished_rc == -ESRCH, "%s: and from a thread: -ESRCH",
	   ops->so_name);
	/* fini freed the structs: the wake must not read them. */
	rc = ops->so_wake(waker);
	ok(rc == -ESRCH, "%s: waking a thread after fini: -ESRCH (got %d)",
	   ops->so_name, rc);
}

/*
 * The same from a thread of its own processor: -ESRCH, and no wake-up
 * counted. On one processor, the thread has ended before the waker runs.
 */
static void wake_finished_here(void *arg)
{
	(void)arg;
	finished_rc = ops->so_wake(finished);
}

/*
 * Runs `finished` = f (group 0) and, after it, wake_finished_here (group
 * waker_group) on procs processors, to the end.
 */
static void run_wake_of(void (*f)(void *), int procs, int waker_group)
{
	require(ops->so_init(procs, 2) == 0);
	finished = ops->so_spawn(f, NULL, 0);
	require(finished != NULL &&
		ops->so_spawn(wake_finished_here, NULL, waker_group) != NULL);
	require(ops->so_fini() == 0);
}

static void test_wake_finished_here(void)
{
	struct sched_stats st;

	finished_rc = 0;
	run_wake_of(tsched_nop, 1, 0);
	require(ops->so_stats(0, &st) == 0);
	ok(finished_rc == -ESRCH && st.ss_local_wakes == 0,
	   "%s: waking a finished thread from its own processor: -ESRCH (got "
	   "%d), not counted (%lu local wakes)", ops->so_name, finished_rc,
	   st.ss_local_wakes);
}

/*
 * A wake counts at the processor of the thread woken, not the waker's:
 * one on processor 1 wakes one on processor 0 (waiting by then, or not).
 */
static void wait_once(void *arg)
{
	(void)arg;
	require(ops->so_wait() == 0);
}

static void test_wake_counted_at_target(void)
{
	struct sched_stats st[2];

	finished_rc = 1;
	run_wake_of(wait_once, 2, 1);
	require(tsched_stats_sum(ops, st, 2) == 2);
	ok(finished_rc == 0 && st[0].ss_remote_wakes == 1 &&
	   st[1].ss_remote_wakes == 0 && st[0].ss_local_wakes == 0 &&
	   st[1].ss_local_wakes == 0, "%s: a wake counts at the woken "
	   "thread's processor (%d; remote wakes %lu, %lu; local %lu, %lu)",
	   ops->so_name, finished_rc, st[0].ss_remote_wakes,
	   st[1].ss_remote_wakes, st[0].ss_local_wakes, st[1].ss_local_wakes);
}

/*
 * A wake from a native thread that returned 0 counts, also when its thread
 * ends and the processors stop before the wake reaches them (ll: its inbox
 * is then read by fini alone). The waker wakes until -ESRCH while fini
 * runs; the counters must hold each 0 it got.
 */
static void *late_wakee;
static long late_oks;
static int late_go, late_rc;

static void late_child(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&late_go, __ATOMIC_ACQUIRE))
		;	/* until the waker is under way */
}

static void *late_waker(void *arg)
{
	(void)arg;
	__atomic_store_n(&late_go, 1, __ATOMIC_RELEASE);
	while ((late_rc = ops->so_wake(late_wakee)) == 0)
		late_oks++;
	return NULL;
}

static void test_late_wakes_counted(void)
{
	long rounds = test_threads(10000) / 25, off = 0, other_rc = 0;
	struct sched_stats st;

	for (long r = 0; r < rounds; r++) {
		pthread_t w;

		late_oks = 0;
		late_go = 0;
		require(ops->so_init(1, 1) == 0 &&
			(late_wakee = ops->so_spawn(late_child, NULL, 0)) &&
			ops->so_start() == 0 &&
			pthread_create(&w, NULL, late_waker, NULL) == 0);
		require(ops->so_fini() == 0);
		pthread_join(w, NULL);
		require(tsched_stats_sum(ops, &st, 1) == 1);
		off += st.ss_local_wakes + st.ss_remote_wakes !=
		       (unsigned long)late_oks;
		other_rc += late_rc != -ESRCH;
	}
	ok(off == 0 && other_rc == 0, "%s: wakes from a native thread while "
	   "their thread ends and fini runs: each that returned 0 counts "
	   "(%ld of %ld rounds off; %ld ended other than with -ESRCH)",
	   ops->so_name, off, rounds, other_rc);
}

/*
 * Two threads that keep waking each other never leave their processor
 * idle; a wake from another processor must still reach a third thread
 * there, which then stops them (ll reads its inbox also when there are
 * threads ready). Spawned in the order that puts them so with rr too:
 * the pair and the sleeper on processor 0 (rr: the pair split), the
 * waker on processor 1.
 */
static void *pp_pair[2], *pp_sleeper;
static int pp_waiting, pp_stop;

static void pp_member(void *arg)
{
	long i = (long)arg;

	while (!__atomic_load_n(&pp_stop, __ATOMIC_ACQUIRE)) {
		ops->so_wake(pp_pair[!i]);
		ops->so_wait();
	}
	ops->so_wake(pp_pair[!i]);	/* out of its last wait */
}

static void pp_sleep(void *arg)
{
	(void)arg;
	__atomic_store_n(&pp_waiting, 1, __ATOMIC_RELEASE);
	ops->so_wait();
	__atomic_store_n(&pp_stop, 1, __ATOMIC_RELEASE);
}

/* Wakes the sleeper once the pair runs and it waits (or is about to). */
static void pp_wake(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&pp_waiting, __ATOMIC_ACQUIRE))
		sched_yield();
	ops->so_wake(pp_sleeper);
}

static void test_wake_among_busy(void)
{
	pp_waiting = pp_stop = 0;
	require(ops->so_init(2, 4) == 0);
	for (long i = 0; i < 2; i++)
		pp_pair[i] = ops->so_spawn(pp_member, (void *)i, 0);
	pp_sleeper = ops->so_spawn(pp_sleep, NULL, 0);
	require(pp_pair[0] != NULL && pp_pair[1] != NULL &&
		pp_sleeper != NULL && ops->so_spawn(pp_wake, NULL, 1) != NULL);
	tap_watchdog(30, "%s: a wake from another processor never reached a "
		     "thread among busy ones", ops->so_name);
	require(ops->so_fini() == 0);
	tap_watchdog_off();
	ok(pp_stop, "%s: a wake from another processor reaches a thread whose "
	   "processor is never idle", ops->so_name);
}

/*
 * The same when the processor's threads never wait: each spawns the next
 * on its own processor and ends (a wait would take the wake itself). The
 * second of them holds its processor until a native thread's wake of a
 * waiting thread has returned; that thread must run within two more.
 */
enum { CHAIN_LEN = 1000, CHAIN_WAKE_AT = 1 };
static void *chain_sleeper;
static int chain_at, chain_woken_at, chain_go, chain_wake_rc;

static void chain_sleep(void *arg)
{
	(void)arg;
	require(ops->so_wait() == 0);
	chain_woken_at = chain_at;
}

static void chain_link(void *arg)
{
	long k = (long)arg;

	chain_at = (int)k;
	if (k == CHAIN_WAKE_AT) {
		__atomic_store_n(&chain_go, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&chain_wake_rc, __ATOMIC_ACQUIRE) == 1)
			;
	}
	if (k < CHAIN_LEN)
		require(ops->so_spawn(chain_link, (void *)(k + 1), 0) != NULL);
}

static void *chain_wake(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&chain_go, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_store_n(&chain_wake_rc, ops->so_wake(chain_sleeper),
			 __ATOMIC_RELEASE);
	return NULL;
}

static void test_wake_among_spawners(void)
{
	pthread_t waker;

	chain_go = 0;
	chain_wake_rc = 1;
	chain_woken_at = -1;
	require(ops->so_init(1, 2) == 0);
	chain_sleeper = ops->so_spawn(chain_sleep, NULL, 0);
	require(chain_sleeper != NULL &&
		ops->so_spawn(chain_link, (void *)0L, 0) != NULL);
	require(pthread_create(&waker, NULL, chain_wake, NULL) == 0);
	require(ops->so_fini() == 0);
	require(pthread_join(waker, NULL) == 0);
	ok(chain_wake_rc == 0 && chain_woken_at >= CHAIN_WAKE_AT &&
	   chain_woken_at <= CHAIN_WAKE_AT + 2, "%s: a wake from a native "
	   "thread reaches a processor whose threads only spawn and end: "
	   "its thread ran after link %d of %d, woken during link %d",
	   ops->so_name, chain_woken_at, CHAIN_LEN, CHAIN_WAKE_AT);
}

/*
 * On one processor, threads run in the order they became ready: one
 * spawned before a wake runs before the thread woken.
 */
static void *mix_woken;
static char mix_seen[3];
static int mix_nr;

static void mix_note(void *arg)
{
	mix_seen[mix_nr++] = *(char *)arg;
}

static void mix_wait(void *arg)
{
	require(ops->so_wait() == 0);
	mix_note(arg);
}

static void mix_parent(void *arg)
{
	(void)arg;
	require(ops->so_spawn(mix_note, "X", 0) != NULL);
	require(ops->so_wake(mix_woken) == 0);
}

static void test_spawn_wake_order(void)
{
	mix_nr = 0;
	memset(mix_seen, 0, sizeof mix_seen);
	require(ops->so_init(1, 3) == 0);
	mix_woken = ops->so_spawn(mix_wait, "W", 0);
	require(mix_woken != NULL &&
		ops->so_spawn(mix_parent, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(strcmp(mix_seen, "XW") == 0, "%s: a thread spawned before a wake "
	   "runs before the thread woken (order %s)", ops->so_name,
	   mix_seen);
}

/*
 * A struct reused for a new thread carries nothing over from the thread
 * it served, which ended with a wake banked: the new thread's wait
 * blocks until the thread queued after it wakes it. The first thread the
 * parent spawns settles the struct owed for the parent's own spawn from
 * the native thread (sched/pool.c), so the second one's goes to the
 * processor's free list, for the next spawn there.
 */
static void *fresh_old, *fresh_new;
static int fresh_checked, fresh_saw;

static void fresh_leave(void *arg)
{
	ops->so_wake(ops->so_self());	/* banked, never waited for */
	ops->so_wake(arg);
}

static void fresh_wait(void *arg)
{
	(void)arg;
	if (ops->so_wait() == 0)
		fresh_saw = fresh_checked;
}

static void fresh_check(void *arg)
{
	(void)arg;
	fresh_checked = 1;
	ops->so_wake(fresh_new);
}

static void fresh_parent(void *arg)
{
	(void)arg;
	ops->so_spawn(tsched_nop, NULL, 0);
	fresh_old = ops->so_spawn(fresh_leave, ops->so_self(), 0);
	ops->so_wait();		/* fresh_leave has ended when this returns */
	fresh_new = ops->so_spawn(fresh_wait, NULL, 0);
	ops->so_spawn(fresh_check, NULL, 0);
}

static void test_reuse_fresh(void)
{
	fresh_old = fresh_new = NULL;
	fresh_checked = fresh_saw = 0;
	require(ops->so_init(1, 4) == 0);
	require(ops->so_spawn(fresh_parent, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(fresh_new != NULL && fresh_new == fresh_old && fresh_saw,
	   "%s: a thread reusing the struct of one that ended with a wake "
	   "banked does not get that wake: its wait blocks", ops->so_name);
}

/* done() ends the thread; code after it never runs. */
static int before_done, after_done;

static void doner(void *arg)
{
	(void)arg;
	before_done = 1;
	ops->so_done();
	after_done = 1;
}

/* Threads spawning threads: a binary tree, leaves counted. */
static long leaves;

static void tree(void *arg)
{
	long depth = (long)arg;

	if (depth == 0) {
		__atomic_fetch_add(&leaves, 1, __ATOMIC_RELAXED);
		return;
	}
	for (int i = 0; i < 2; i++) {
		if (ops->so_spawn(tree, (void *)(depth - 1),
				  (int)depth) == NULL)
			__atomic_fetch_add(&leaves, -1000000, __ATOMIC_RELAXED);
	}
}

/* start and fini from one of the scheduler's threads. */
static int inside_start, inside_fini, cross_wait, cross_self;

static void inside(void *arg)
{
	(void)arg;
	inside_start = ops->so_start();
	inside_fini = ops->so_fini();
}

/* wait and self from a thread of the other scheduler. */
static void crosser(void *arg)
{
	(void)arg;
	cross_wait = ops->so_wait();
	cross_self = ops->so_self() == NULL;
}

static void test_misc(void)
{
	const struct sched_ops *other = ops == &ll_ops ? &rr_ops : &ll_ops;
	struct sched_stats st;

	ok(ops->so_init(0, 1) == -EINVAL && ops->so_init(4097, 1) == -EINVAL,
	   "%s: init of 0 or 4097 processors: -EINVAL", ops->so_name);
	ok(ops->so_init(1, -1) == -EINVAL,
	   "%s: init expecting -1 threads: -EINVAL", ops->so_name);
	require(ops->so_init(2, 0) == 0);
	ok(ops->so_fini() == 0, "%s: fini with nothing spawned returns",
	   ops->so_name);
	ok(ops->so_start() == -EINVAL && ops->so_fini() == -EINVAL,
	   "%s: start and fini after fini: -EINVAL", ops->so_name);
	ok(ops->so_wait() == -EPERM, "%s: wait outside a thread: -EPERM",
	   ops->so_name);
	ok(ops->so_wake(NULL) == -EINVAL, "%s: wake of NULL: -EINVAL",
	   ops->so_name);
	ok(ops->so_stats(0, NULL) == -EINVAL, "%s: stats into NULL: -EINVAL",
	   ops->so_name);

	require(ops->so_init(1, 0) == 0);
	errno = 0;
	ok(ops->so_spawn(NULL, NULL, 0) == NULL && errno == EINVAL,
	   "%s: spawn of a NULL function: NULL, EINVAL", ops->so_name);
	errno = 0;
	if (ops == &ll_ops)
		ok(ops->so_spawn(tsched_nop, NULL, -1) == NULL &&
		   errno == EINVAL,
		   "ll: spawn in a negative group: NULL, EINVAL");
	else
		ok(ops->so_spawn(tsched_nop, NULL, -1) != NULL,
		   "rr: the group is ignored, a negative one too");
	ok(ops->so_spawn(tsched_nop, NULL, 0) != NULL && ops->so_fini() == 0,
	   "%s: and the scheduler goes on", ops->so_name);

	require(ops->so_init(2, 0) == 0);
	before_done = after_done = 0;
	require(ops->so_spawn(doner, NULL, 0) != NULL);
	ok(ops->so_init(1, 0) == -EBUSY, "%s: init again before fini: -EBUSY",
	   ops->so_name);
	tap_watchdog(30, "%s: a thread that called done() never ended",
		     ops->so_name);
	require(ops->so_fini() == 0);
	tap_watchdog_off();
	ok(before_done && !after_done && ops->so_stats(1, &st) == 0,
	   "%s: done() ends the thread, on the first init's 2 processors",
	   ops->so_name);

	require(ops->so_init(4, 0) == 0);
	require(ops->so_start() == 0);
	ok(ops->so_start() == -EALREADY, "%s: start again: -EALREADY",
	   ops->so_name);
	leaves = 0;
	require(ops->so_spawn(tree, (void *)14L, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(leaves == 1 << 14, "%s: threads spawning threads on 4 processors: "
	   "%ld leaves", ops->so_name, leaves);
	ok(ops->so_stats(3, &st) == 0 && ops->so_stats(4, &st) == -EINVAL &&
	   ops->so_stats(-1, &st) == -EINVAL,
	   "%s: counters of processor 3 of 4, not of 4 or -1", ops->so_name);

	require(ops->so_init(4, 1) == 0);
	require(ops->so_start() == 0);
	require(ops->so_spawn(tsched_nop, NULL, 0) != NULL);
	ok(ops->so_fini() == 0, "%s: fini returns though 3 of 4 processors "
	   "never got a thread", ops->so_name);
	require(ops->so_stats(0, &st) == 0);
	ok(st.ss_switches == 1, "%s: an init's first thread runs on processor "
	   "0 (%lu switches there)", ops->so_name, st.ss_switches);
	ok(ops->so_spawn(tsched_nop, NULL, 0) == NULL && errno == EINVAL,
	   "%s: spawn after fini: NULL, EINVAL", ops->so_name);

	require(ops->so_init(2, 1) == 0);
	require(ops->so_spawn(inside, NULL, 0) != NULL);
	tap_watchdog(30, "%s: fini from a thread hangs", ops->so_name);
	require(ops->so_fini() == 0);
	tap_watchdog_off();
	require(other->so_init(1, 1) == 0 &&
		other->so_spawn(crosser, NULL, 0) != NULL);
	tap_watchdog(30, "%s: wait from a thread of %s hangs", ops->so_name,
		     other->so_name);
	require(other->so_fini() == 0);
	tap_watchdog_off();
	ok(cross_wait == -EPERM && cross_self,
	   "%s: from a thread of %s, wait: -EPERM (got %d), self: NULL",
	   ops->so_name, other->so_name, cross_wait);
	ok(inside_start == -EPERM && inside_fini == -EDEADLK,
	   "%s: from a thread, start: -EPERM (got %d), fini: -EDEADLK (got "
	   "%d)", ops->so_name, inside_start, inside_fini);
}

/*
 * A handle of the other scheduler's thread, given to this one's wake: the
 * wake is refused, and the thread it names neither woken nor harmed.
 */
static const struct sched_ops *cross_other;
static void *cross_handle;
static int cross_inside, cross_waited = 1, cross_early;
static int cross_ready, cross_right;	/* atomic */

static void cross_waiter(void *arg)
{
	(void)arg;
	__atomic_store_n(&cross_ready, 1, __ATOMIC_RELEASE);
	cross_waited = cross_other->so_wait();
	cross_early = !__atomic_load_n(&cross_right, __ATOMIC_ACQUIRE);
}

static void cross_waker(void *arg)
{
	(void)arg;
	cross_inside = ops->so_wake(cross_handle);
}

static void test_wake_other_scheduler(void)
{
	int outside;

	cross_other = ops == &ll_ops ? &rr_ops : &ll_ops;
	cross_ready = cross_right = 0;
	require(cross_other->so_init(1, 1) == 0);
	cross_handle = cross_other->so_spawn(cross_waiter, NULL, 0);
	require(cross_handle != NULL && cross_other->so_start() == 0);
	tap_watchdog(30, "%s: a thread of %s never waited", ops->so_name,
		     cross_other->so_name);
	while (!__atomic_load_n(&cross_ready, __ATOMIC_ACQUIRE))
		sched_yield();
	require(ops->so_init(1, 1) == 0);
	outside = ops->so_wake(cross_handle);
	require(ops->so_spawn(cross_waker, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	__atomic_store_n(&cross_right, 1, __ATOMIC_RELEASE);
	require(cross_other->so_wake(cross_handle) == 0);
	require(cross_other->so_fini() == 0);
	tap_watchdog_off();
	ok(cross_inside == -EINVAL && outside == -EINVAL,
	   "%s: wake of a thread of %s, from a thread and from outside: "
	   "-EINVAL (got %d, %d)", ops->so_name, cross_other->so_name,
	   cross_inside, outside);
	ok(cross_waited == 0 && !cross_early,
	   "%s: that thread waits on, and its own wake ends the wait",
	   ops->so_name);
}

/* Before the first init: nothing to start, finish, count or spawn on. */
static void test_before_init(void)
{
	struct sched_stats st;
	int start = ops->so_start(), fini = ops->so_fini();
	int stats = ops->so_stats(0, &st);

	errno = 0;
	ok(start == -EINVAL && fini == -EINVAL && stats == -EINVAL &&
	   ops->so_spawn(tsched_nop, NULL, 0) == NULL && errno == EINVAL,
	   "%s: before init: start, fini and stats -EINVAL (got %d, %d, %d), "
	   "spawn NULL with EINVAL", ops->so_name, start, fini, stats);
}

/*
 * A processor with nothing to run goes to sleep, and counts it. Waits for
 * it: spinning first, it may take a moment.
 */
static void test_sleeps(void)
{
	struct sched_stats st = { 0 };

	require(ops->so_init(2, 0) == 0 && ops->so_start() == 0);
	tap_watchdog(30, "%s: an idle processor never counted a sleep",
		     ops->so_name);
	while (ops->so_stats(1, &st) == 0 && st.ss_sleeps == 0)
		sched_yield();
	tap_watchdog_off();
	require(ops->so_fini() == 0);
	ok(st.ss_sleeps > 0, "%s: an idle processor sleeps and counts it",
	   ops->so_name);
}

/*
 * Threads spawned from outside their processor, from a native thread or
 * from a thread of another processor, in waves: the structs of one wave
 * serve the next, so the handles (the structs) are few, also while a
 * native thread keeps waking the last one spawned (a wake holds a
 * finished struct for a moment).
 */
static long wave_done, wave_target, wave_kids, wave_n, wave_failed;
static void *wave_waiter, **wave_handle;
static int wave_stop;

static void wave_child(void *arg)
{
	(void)arg;
	if (__atomic_add_fetch(&wave_done, 1, __ATOMIC_ACQ_REL) ==
	    __atomic_load_n(&wave_target, __ATOMIC_ACQUIRE) && wave_waiter)
		ops->so_wake(wave_waiter);
}

/* One wave onto processor 1 (ll; rr spreads them), waited for. */
static void wave(long *at)
{
	__atomic_add_fetch(&wave_target, wave_kids, __ATOMIC_RELEASE);
	for (long i = 0; i < wave_kids; i++, ++*at) {
		void *t = ops->so_spawn(wave_child, NULL, 1);

		wave_failed += t == NULL;
		__atomic_store_n(&wave_handle[*at], t, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&wave_done, __ATOMIC_ACQUIRE) < wave_target) {
		if (wave_waiter == NULL)
			sched_yield();
		else
			ops->so_wait();
	}
}

static void waves(void *arg)
{
	long at = 0;

	(void)arg;
	wave_waiter = ops->so_self();	/* NULL: a native thread */
	for (long i = 0; i < wave_n; i++)
		wave(&at);
	__atomic_store_n(&wave_stop, 1, __ATOMIC_RELEASE);
}

static void *wave_waker(void *arg)
{
	long total = wave_n * wave_kids, last = 0;

	(void)arg;
	while (!__atomic_load_n(&wave_stop, __ATOMIC_ACQUIRE)) {
		void *t;

		while (last + 1 < total &&
		       __atomic_load_n(&wave_handle[last + 1],
				       __ATOMIC_ACQUIRE) != NULL)
			last++;
		t = __atomic_load_n(&wave_handle[last], __ATOMIC_ACQUIRE);
		if (t != NULL && ops->so_wake(t) == -ESRCH)
			sched_yield();
	}
	return NULL;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return (x > y) - (x < y);
}

static long distinct(void **v, long n)
{
	long d = 0;

	qsort(v, n, sizeof *v, cmp_ptr);
	for (long i = 0; i < n; i++)
		d += i == 0 || v[i] != v[i - 1];
	return d;
}

static void run_waves(int from_thread, long kids, long n)
{
	const char *from[] = { "a native thread", "a thread of a processor" };
	long structs;
	pthread_t w;

	wave_done = wave_target = wave_failed = 0;
	wave_kids = kids;
	wave_n = n;
	wave_stop = 0;
	wave_handle = calloc(n * kids, sizeof *wave_handle);
	require(wave_handle != NULL);
	require(ops->so_init(2, 0) == 0 && ops->so_start() == 0);
	tap_watchdog(120, "%s: waves of spawns hang", ops->so_name);
	require(pthread_create(&w, NULL, wave_waker, NULL) == 0);
	if (from_thread)
		require(ops->so_spawn(waves, NULL, 0) != NULL);
	else
		waves(NULL);
	pthread_join(w, NULL);	/* before fini frees what it wakes */
	require(ops->so_fini() == 0);
	tap_watchdog_off();
	structs = wave_failed == 0 ? distinct(wave_handle, n * kids) : -1;
	ok(wave_done == n * kids && structs > 0 && structs <= 2 * kids + 8,
	   "%s: %ld threads spawned from %s in waves of %ld, the last one "
	   "woken all along: %ld structs", ops->so_name, n * kids,
	   from[from_thread], kids, structs);
	free(wave_handle);
}

static void test_spawn_elsewhere_reuse(void)
{
	for (int i = 0; i < 2; i++) {
		run_waves(i, 1000, test_threads(100000) / 1000);
		run_waves(i, 1, test_threads(100000) / 20);
	}
}

/*
 * One thread at a time spawned from a native thread onto a processor that
 * ran out of work, which is then about to sleep: a kick it misses leaves
 * the thread in the inbox of a sleeping processor, a hang. Only ll: its
 * processors look for work without a lock, which would order the store
 * announcing the sleep before the look. Under qemu-user, where aarch64's
 * ldar may pass an earlier stlr, 3 runs of t_sched in 4 hung here without
 * proc_idle's fence.
 */
static void test_spawn_onto_sleeper(void)
{
	if (ops == &ll_ops)
		run_waves(0, 1, test_threads(200000));
}

/*
 * Wakes from a native thread that pile up before their thread runs (ll:
 * while it is in its processor's inbox) hold its struct only until they
 * are applied: a second round of as many spawns reuses the structs of the
 * first. On one processor, all but the last thread's struct are back once
 * that thread has run. The second round's first thread holds the
 * processor until the round is spawned, so that its threads cannot reuse
 * one another's structs instead.
 */
enum { PILE_KIDS = 100 };
static long pile_ran;
static int pile_spawned;

static void pile_kid(void *second)
{
	while (second && !__atomic_load_n(&pile_spawned, __ATOMIC_ACQUIRE))
		;
	__atomic_fetch_add(&pile_ran, 1, __ATOMIC_RELEASE);
}

static void test_piled_wakes_reuse(void)
{
	void *h[2 * PILE_KIDS];
	long bad = 0, structs;

	pile_ran = pile_spawned = 0;
	require(ops->so_init(1, PILE_KIDS) == 0);
	for (int i = 0; i < PILE_KIDS; i++) {
		h[i] = ops->so_spawn(pile_kid, NULL, 0);
		require(h[i] != NULL);
		bad += ops->so_wake(h[i]) != 0 || ops->so_wake(h[i]) != 0;
	}
	require(ops->so_start() == 0);
	tap_watchdog(30, "%s: threads woken before they ran hang",
		     ops->so_name);
	while (__atomic_load_n(&pile_ran, __ATOMIC_ACQUIRE) < PILE_KIDS)
		sched_yield();
	tap_watchdog_off();
	for (int i = PILE_KIDS; i < 2 * PILE_KIDS; i++) {
		h[i] = ops->so_spawn(pile_kid, &pile_spawned, 0);
		require(h[i] != NULL);
	}
	__atomic_store_n(&pile_spawned, 1, __ATOMIC_RELEASE);
	require(ops->so_fini() == 0);
	structs = distinct(h, 2 * PILE_KIDS);
	ok(bad == 0 && structs <= PILE_KIDS + 1, "%s: %d threads woken twice "
	   "from a native thread before they ran, then %d more: %ld structs",
	   ops->so_name, PILE_KIDS, PILE_KIDS, structs);
}

/*
 * On one processor, threads spawned from a native thread start in the
 * order they were spawned, and threads woken from one run in the order of
 * their wakes, however the processor takes them in (ll: in batches from
 * its inbox, a stack that holds the newest first). The last thread spawned
 * runs once all the others wait, and tells the waker to begin.
 */
enum { ORDER_KIDS = 1000, ORDER_STEP = 7919 };	/* coprime: a permutation */
static int order_started[ORDER_KIDS], order_woken[ORDER_KIDS];
static int order_starts, order_wakes, order_ready;

static void order_kid(void *arg)
{
	order_started[order_starts++] = (int)(long)arg;
	if (ops->so_wait() == 0)
		order_woken[order_wakes++] = (int)(long)arg;
}

static void order_last(void *arg)
{
	(void)arg;
	__atomic_store_n(&order_ready, 1, __ATOMIC_RELEASE);
	ops->so_wait();
}

static int order_wrong(const int *seen, int n, int step)
{
	for (int i = 0; i < n; i++)
		if (seen[i] != (int)((long)i * step % n))
			return 1;
	return 0;
}

static void test_order_from_outside(void)
{
	void *h[ORDER_KIDS], *last;
	long bad = 0;

	order_starts = order_wakes = order_ready = 0;
	require(ops->so_init(1, ORDER_KIDS + 1) == 0);
	for (long i = 0; i < ORDER_KIDS; i++) {
		h[i] = ops->so_spawn(order_kid, (void *)i, 0);
		require(h[i] != NULL);
	}
	require((last = ops->so_spawn(order_last, NULL, 0)) != NULL);
	require(ops->so_start() == 0);
	tap_watchdog(30, "%s: the last of the threads spawned in order never "
		     "ran", ops->so_name);
	while (!__atomic_load_n(&order_ready, __ATOMIC_ACQUIRE))
		sched_yield();
	tap_watchdog_off();
	for (long i = 0; i < ORDER_KIDS; i++)
		bad += ops->so_wake(h[i * ORDER_STEP % ORDER_KIDS]) != 0;
	bad += ops->so_wake(last) != 0;
	require(ops->so_fini() == 0);
	ok(bad == 0 && order_starts == ORDER_KIDS &&
	   !order_wrong(order_started, ORDER_KIDS, 1),
	   "%s: %d threads spawned from a native thread start in that order",
	   ops->so_name, ORDER_KIDS);
	ok(bad == 0 && order_wakes == ORDER_KIDS &&
	   !order_wrong(order_woken, ORDER_KIDS, ORDER_STEP),
	   "%s: woken from a native thread in another order, they run in "
	   "that one", ops->so_name);
}

/*
 * Wakes that race with their target's end and the reuse of its struct: a
 * spawner on processor 0 spawns rounds of children (on both processors),
 * each of which waits once; two native threads keep waking the handles of
 * the current round, so many wakes overlap a child's end or reach a
 * finished (maybe reused) one. A corrupted inbox or queue shows as a hang
 * (watchdog) or a panic; every wake must give 0 or -ESRCH.
 */
enum { REUSE_KIDS = 16 };
static void *reuse_slot[REUSE_KIDS], *reuse_spawner;
static long reuse_left, reuse_rounds_done, reuse_bad;
static int reuse_stop;

static void reuse_child(void *arg)
{
	__atomic_store_n(&reuse_slot[(long)arg], ops->so_self(),
			 __ATOMIC_RELEASE);
	ops->so_wait();
	if (__atomic_sub_fetch(&reuse_left, 1, __ATOMIC_ACQ_REL) == 0 &&
	    ops->so_wake(reuse_spawner) != 0)
		__atomic_fetch_add(&reuse_bad, 1, __ATOMIC_RELAXED);
}

static void reuse_spawn_rounds(void *arg)
{
	for (long r = 0; r < (long)arg; r++) {
		__atomic_store_n(&reuse_left, REUSE_KIDS, __ATOMIC_RELAXED);
		for (long i = 0; i < REUSE_KIDS; i++)
			if (ops->so_spawn(reuse_child, (void *)i,
					  (int)(i & r & 1)) == NULL)
				__atomic_fetch_add(&reuse_bad, 1,
						   __ATOMIC_RELAXED);
		ops->so_wait();
		reuse_rounds_done++;
	}
	__atomic_store_n(&reuse_stop, 1, __ATOMIC_RELEASE);
}

static void reuse_wake(void *h)
{
	int rc = h != NULL ? ops->so_wake(h) : 0;

	if (rc != 0 && rc != -ESRCH)
		__atomic_fetch_add(&reuse_bad, 1, __ATOMIC_RELAXED);
}

/*
 * Wakes every slot, from a random one on, then yields. One yield a sweep,
 * not a wake: on a loaded machine a yield may cost a time slice, and 2000
 * rounds of children each waiting for a random pick took minutes.
 */
static void *reuse_waker(void *arg)
{
	unsigned long seed = (unsigned long)arg;

	while (!__atomic_load_n(&reuse_stop, __ATOMIC_ACQUIRE)) {
		unsigned long from = tap_rand(&seed);

		for (unsigned long i = from; i < from + REUSE_KIDS; i++)
			reuse_wake(__atomic_load_n(&reuse_slot[i % REUSE_KIDS],
						   __ATOMIC_ACQUIRE));
		sched_yield();	/* under valgrind, the processors run too */
	}
	return NULL;
}

static void test_wake_reuse(void)
{
	long rounds = test_threads(100000) / 50;
	pthread_t w[2];

	memset(reuse_slot, 0, sizeof reuse_slot);
	reuse_left = reuse_rounds_done = reuse_bad = 0;
	reuse_stop = 0;
	require(ops->so_init(2, 0) == 0);
	reuse_spawner = ops->so_spawn(reuse_spawn_rounds, (void *)rounds, 0);
	require(reuse_spawner != NULL && ops->so_start() == 0);
	tap_watchdog(120, "%s: wakes racing with reuse hang", ops->so_name);
	for (long i = 0; i < 2; i++)
		require(pthread_create(&w[i], NULL, reuse_waker,
				       (void *)(i + 1)) == 0);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	require(ops->so_fini() == 0);
	tap_watchdog_off();
	ok(reuse_rounds_done == rounds && reuse_bad == 0,
	   "%s: %ld rounds of wakes racing with ends and reuse: no hang, "
	   "every wake 0 or -ESRCH", ops->so_name, rounds);
}

/*
 * Memory with many processors: each arena's first chunk is left to fault
 * in page by page, so a few threads on each of many processors take a few
 * pages each, not the 1 MiB chunks of their arenas. Measured before the
 * processors start, so that no native thread (nor what a tool such as
 * valgrind adds to each) is counted.
 */
enum { SPARSE_PROCS = 256, SPARSE_THREADS = 2 * SPARSE_PROCS };

/* Resident bytes of this process. */
static long resident(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, pages = -1;

	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &size, &pages) != 2)
			pages = -1;
		fclose(f);
	}
	return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

static void test_sparse_memory(void)
{
	long before, grew;

	malloc_trim(0);	/* what the last test freed would be reused */
	before = resident();
	require(before > 0);
	require(ops->so_init(SPARSE_PROCS, SPARSE_THREADS) == 0);
	for (int i = 0; i < SPARSE_THREADS; i++)
		require(ops->so_spawn(tsched_nop, NULL, i) != NULL);
	grew = resident() - before;
	require(ops->so_fini() == 0);
	ok(grew < 32L << 20, "%s: %d threads on %d processors take %ld KiB "
	   "(< 32 MiB)", ops->so_name, SPARSE_THREADS, SPARSE_PROCS,
	   grew >> 10);
}

/* Sleepers, each woken by the main thread: a million, and 4096 processors. */
static long sleepers_woken;

static void sleeper(void *arg)
{
	(void)arg;
	if (ops->so_wait() == 0)
		__atomic_fetch_add(&sleepers_woken, 1, __ATOMIC_RELAXED);
}

static void test_million(void)
{
	long N = test_threads(1000000);
	void **t = malloc(N * sizeof *t);
	long failed = 0;

	require(t != NULL);
	require(ops->so_init(2, N) == 0);
	sleepers_woken = 0;
	for (long i = 0; i < N; i++)
		t[i] = ops->so_spawn(sleeper, NULL, (int)(i & 1));
	require(ops->so_start() == 0);
	for (long i = 0; i < N; i++)
		failed += t[i] == NULL || ops->so_wake(t[i]) != 0;
	require(ops->so_fini() == 0);
	ok(failed == 0 && sleepers_woken == N,
	   "%s: %ld threads on 2 processors woken from a native thread: "
	   "%ld woke, %ld failed", ops->so_name, N, sleepers_woken, failed);
	free(t);
}

/*
 * The most processors init takes, a thread on each, all woken from main.
 * 4096 native threads: not under sanitizers, valgrind or qemu, which
 * scale test_threads down and run far fewer.
 */
static void test_most_procs(void)
{
	enum { MOST = 4096 };
	static void *t[MOST];
	struct sched_stats st = { 0 };
	long failed = 0;

	if (test_threads(1000000) < 1000000) {
		diag("%s: %d processors not tried here", ops->so_name, MOST);
		return;
	}
	require(ops->so_init(MOST, MOST) == 0);
	sleepers_woken = 0;
	for (int i = 0; i < MOST; i++)
		t[i] = ops->so_spawn(sleeper, NULL, i);
	require(ops->so_start() == 0);
	for (int i = 0; i < MOST; i++)
		failed += t[i] == NULL || ops->so_wake(t[i]) != 0;
	require(ops->so_fini() == 0);
	ok(failed == 0 && sleepers_woken == MOST &&
	   ops->so_stats(MOST - 1, &st) == 0 && st.ss_switches > 0 &&
	   ops->so_stats(MOST, &st) == -EINVAL,
	   "%s: %d processors, a thread on each woken from outside: %ld "
	   "woke, %ld failed, processor %d ran", ops->so_name, MOST,
	   sleepers_woken, failed, MOST - 1);
}

static void *names_of(void *arg)
{
	return strcmp(sched_names(), arg) == 0 ? arg : NULL;
}

/* done() where it cannot end a thread of its scheduler: a message. */
static void (*const dones[])(void) = { rr_done, ll_done };

static void done_outside(void *which)
{
	dones[(intptr_t)which]();
}

static void done_in_ll(void *which)
{
	if (ll_init(1, 1) != 0 ||
	    ll_thread_init(done_outside, which, 0) == NULL)
		exit(2);
	ll_fini();
}

static void test_done_misplaced(void)
{
	dies_with(done_outside, (void *)0, "rr_done() called outside",
		  "rr_done() outside a thread");
	dies_with(done_outside, (void *)1, "ll_done() called outside",
		  "ll_done() outside a thread");
	dies_with(done_in_ll, (void *)0, "rr_done() called outside",
		  "rr_done() in an ll thread, which it would have ended");
}

/* The first calls of sched_names, at once from several native threads. */
static void test_names(void)
{
	pthread_t t[4];
	void *rc;
	int good = 0;

	for (int i = 0; i < 4; i++)
		require(pthread_create(&t[i], NULL, names_of, "rr|ll") == 0);
	for (int i = 0; i < 4; i++) {
		require(pthread_join(t[i], &rc) == 0);
		good += rc != NULL;
	}
	ok(good == 4, "names, asked by 4 native threads at once: rr|ll for "
	   "%d of them", good);
}

/*
 * A struct that a wake from elsewhere holds is not reused, though its
 * thread has ended (sched/pool.c, thread_claim): the wake would reach the
 * new thread. rr's waker takes its processor's lock while it holds a
 * struct, and the test takes it first to hold the waker still (rr.c's
 * struct rr_proc: a struct proc, then the lock, as rr.c asserts). A
 * native thread wakes the running thread and waits with its hold; the
 * thread ends, and its struct goes back for spawns from elsewhere (it was
 * one); another native thread's spawn must take another struct.
 */
static void *held_thread, *held_spawned;
static int held_running, held_go, held_wake_rc;

static void held_body(void *arg)
{
	(void)arg;
	__atomic_store_n(&held_running, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&held_go, __ATOMIC_ACQUIRE))
		;
}

static void *held_waker(void *arg)
{
	(void)arg;
	held_wake_rc = ops->so_wake(held_thread);
	return NULL;
}

static void *held_spawner(void *arg)
{
	(void)arg;
	held_spawned = ops->so_spawn(tsched_nop, NULL, 0);
	return NULL;
}

static void test_held_not_reused(void)
{
	struct sched_thread *t;
	struct sched_lock *lock;
	struct proc *p;
	pthread_t w, sp;

	if (strcmp(ops->so_name, "rr") != 0)
		return;
	held_running = held_go = 0;
	held_spawned = NULL;
	require(ops->so_init(1, 2) == 0);
	held_thread = ops->so_spawn(held_body, NULL, 0);	/* owed: 1 */
	require(held_thread != NULL && ops->so_start() == 0);
	t = held_thread;
	p = proc_of(t);
	lock = (struct sched_lock *)(p + 1);	/* r_lock */
	tap_watchdog(60, "rr: a held struct's reuse test hangs");
	while (!__atomic_load_n(&held_running, __ATOMIC_ACQUIRE))
		sched_yield();
	sched_lock(lock);
	require(pthread_create(&w, NULL, held_waker, NULL) == 0);
	while (__atomic_load_n(&t->t_holds, __ATOMIC_ACQUIRE) == 0)
		sched_yield();	/* the waker holds t, waits for the lock */
	__atomic_store_n(&held_go, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&p->p_spare, __ATOMIC_ACQUIRE) == NULL)
		sched_yield();	/* t ended, its struct given back */
	require(pthread_create(&sp, NULL, held_spawner, NULL) == 0);
	while (__atomic_load_n(&p->p_owed, __ATOMIC_ACQUIRE) < 2)
		sched_yield();	/* the spawn has its struct */
	sched_unlock(lock);
	pthread_join(w, NULL);
	pthread_join(sp, NULL);
	require(ops->so_fini() == 0);
	tap_watchdog_off();
	ok(held_spawned != NULL && held_spawned != held_thread &&
	   held_wake_rc == -ESRCH, "%s: a struct held by a wake from "
	   "elsewhere is not reused when its thread ends (wake %d)",
	   ops->so_name, held_wake_rc);
}

/*
 * The same for a spawn from a thread of the struct's own processor, which
 * takes p_free (thread_mem's own path), with ll. Its remote waker holds a
 * struct only from thread_hold_alive to ll_post's add to l_remote, without
 * a lock: it is stopped there by a page fault. The test carves the
 * running thread's struct across a page boundary, its struct sched_thread
 * (which the hold and the check of the state touch) on one page, l_remote
 * on the next, which it makes read-only; the waker's handler of the fault
 * waits until the test has made the page writable again. Meanwhile the
 * thread ends, and a thread of its processor spawns: it must take another
 * struct of p_free. Nothing the processor does meanwhile writes to that
 * page: every struct and buffer it uses was carved before it (a fault
 * there, not the waker's, kills the test).
 */
static void *own_thread, *own_spawner, *own_spawned;
static int own_running, own_end, own_parked, own_go, own_woke, own_wake_rc;
static char *own_page;
static size_t own_page_size;
static __thread int own_is_waker;

static void own_segv(int sig, siginfo_t *si, void *ctx)
{
	char *at = si->si_addr;
	int err = errno;

	(void)ctx;
	if (!own_is_waker || at < own_page || at >= own_page + own_page_size) {
		/* not the waker's stop: dies on return */
		signal(sig, SIG_DFL);
		return;
	}
	__atomic_store_n(&own_parked, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&own_go, __ATOMIC_ACQUIRE))
		sched_yield();
	errno = err;
}

static void *own_waker(void *arg)
{
	(void)arg;
	own_is_waker = 1;
	own_wake_rc = ops->so_wake(own_thread);
	__atomic_store_n(&own_woke, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void own_body(void *arg)
{
	(void)arg;
	__atomic_store_n(&own_running, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&own_end, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void own_spawn(void *arg)
{
	(void)arg;
	if (ops->so_wait() == 0)
		__atomic_store_n(&own_spawned,
				 ops->so_spawn(tsched_nop, NULL, 0),
				 __ATOMIC_RELEASE);
}

/*
 * On the processor (spawned from elsewhere, its struct goes to p_spare
 * when it ends): the spawner, which blocks, a thread that ends at once,
 * whose struct the spawn is to take from p_free, then the running thread,
 * its struct sched_thread ending where a page of the arena starts: small
 * buffers are carved (s_alloc) up to there, and past the chunk's end if
 * the whole page is not in it. -1 in own_running if one failed.
 */
static void own_setup(void *arg)
{
	struct proc *p = proc_of(ops->so_self());
	struct arena *a = &p->p_arena;
	size_t off = (sizeof(struct sched_thread) + 15) & ~(size_t)15;
	size_t page = own_page_size;

	(void)arg;
	own_spawner = ops->so_spawn(own_spawn, NULL, 0);
	if (own_spawner == NULL || ops->so_yield() != 0 ||
	    ops->so_spawn(tsched_nop, NULL, 0) == NULL)
		goto fail;
	while (a->a_left < off + page ||
	       ((uintptr_t)a->a_next + off) % page != 0) {
		if (p->p_sched.s_alloc(&p->p_sched,
				       a->a_left < off + page ? 4096 : 16) ==
		    NULL)
			goto fail;
	}
	own_thread = ops->so_spawn(own_body, NULL, 0);
	if (own_thread != NULL) {
		own_page = (char *)own_thread + off;
		return;
	}
fail:
	__atomic_store_n(&own_running, -1, __ATOMIC_RELEASE);
}

static void test_held_not_reused_own(void)
{
	struct sigaction sa = { .sa_sigaction = own_segv,
				.sa_flags = SA_SIGINFO }, old;
	int running, parked;
	pthread_t w;

	if (strcmp(ops->so_name, "ll") != 0)
		return;
#ifdef TAP_TSAN
	/* The waker stops inside TSan's atomic, which holds its slot of
	 * TSan's clocks: a reset of them waits for it, and every thread's
	 * next atomic for the reset (hung once, in CI; the watchdog's alarm
	 * never ran, as TSan delivers a signal outside its runtime only). */
	ok(1, "# SKIP %s: held struct, own spawn: a waker stopped inside "
	   "TSan's runtime may hang every thread", ops->so_name);
	return;
#endif
	own_thread = own_spawner = own_spawned = NULL;
	own_running = own_end = own_parked = own_go = own_woke = 0;
	own_page_size = sysconf(_SC_PAGESIZE);
	require(ops->so_init(1, 0) == 0);
	require(ops->so_spawn(own_setup, NULL, 0) != NULL &&
		ops->so_start() == 0);
	tap_watchdog(60, "ll: a held struct's reuse test, own spawn, hangs");
	while (!(running = __atomic_load_n(&own_running, __ATOMIC_ACQUIRE)))
		sched_yield();
	require(running == 1 &&
		((uintptr_t)own_page) % own_page_size == 0);
	sigemptyset(&sa.sa_mask);
	require(sigaction(SIGSEGV, &sa, &old) == 0);
	require(mprotect(own_page, own_page_size, PROT_READ) == 0);
	require(pthread_create(&w, NULL, own_waker, NULL) == 0);
	while (!(parked = __atomic_load_n(&own_parked, __ATOMIC_ACQUIRE)) &&
	       !__atomic_load_n(&own_woke, __ATOMIC_ACQUIRE))
		sched_yield();
	if (parked) {	/* it holds the running thread, which now ends */
		__atomic_store_n(&own_end, 1, __ATOMIC_RELEASE);
		require(ops->so_wake(own_spawner) == 0);
		while (!__atomic_load_n(&own_spawned, __ATOMIC_ACQUIRE))
			sched_yield();
	}
	require(mprotect(own_page, own_page_size,
			 PROT_READ | PROT_WRITE) == 0);
	__atomic_store_n(&own_go, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	if (!parked) {
		__atomic_store_n(&own_end, 1, __ATOMIC_RELEASE);
		require(ops->so_wake(own_spawner) == 0);
	}
	require(ops->so_fini() == 0);
	require(sigaction(SIGSEGV, &old, NULL) == 0);
	tap_watchdog_off();
	ok(parked && own_spawned != NULL && own_spawned != own_thread &&
	   own_wake_rc == 0, "%s: a struct held by a wake from elsewhere is "
	   "not reused by a spawn on its processor (waker %s, wake %d, "
	   "struct %s)", ops->so_name, parked ? "held" : "not held",
	   own_wake_rc, own_spawned == own_thread ? "reused" : "not reused");
}

/* Each scheduler's tests, after every scheduler's test_before_init. */
static void tests(void)
{
	run_ring(2, 1, 1000, 1, 0);
	run_ring(8, 100, 100, 1, 0);
	run_ring(8, 100, 100, 2, 0);
	run_ring(2, 1000, 100, 3, 0);
	run_ring(5, 7, 1000, 2, 0);
	run_ring(2, 4, 20000, 2, 1);
	run_ring(3, 50, 2000, 3, 1);
	test_stats_while_running();
	test_wake_before_wait();
	test_wake_outside_before_wait();
	test_many_banked();
	test_buffer_align();
	test_buffer_classes_edge();
	test_reuse_fresh();
	/* first: test_wake_finished waits for -ESRCH, which a finished
	 * thread that passes for a live one never gives, until its watchdog */
	test_wake_finished_here();
	test_wake_finished();
	test_failed_spawn_turn();
	test_wake_counted_at_target();
	test_late_wakes_counted();
	test_wake_among_busy();
	test_wake_among_spawners();
	test_spawn_wake_order();
	test_share_fpctl();
	test_misc();
	test_wake_other_scheduler();
	test_sleeps();
	test_wake_reuse();
	test_spawn_elsewhere_reuse();
	test_spawn_onto_sleeper();
	test_piled_wakes_reuse();
	test_held_not_reused();
	test_held_not_reused_own();
	test_order_from_outside();
	test_sparse_memory();
	test_million();
	test_most_procs();
}

int main(void)
{
	test_names();
	test_done_misplaced();
	ok(sched_find("nope") == NULL, "unknown scheduler name: NULL");
	ok(sched_find(NULL) == NULL, "no scheduler name: NULL");
	ok(ll_wake(NULL) == -EINVAL && rr_wake(NULL) == -EINVAL,
	   "ll_wake and rr_wake of NULL, called directly: -EINVAL");
	tsched_each(&ops, test_before_init);
	tsched_each(&ops, tests);
	return tap_done();
}
