/*
 * Allocation failure at every allocation site in turn: the error reaches
 * the caller, nothing leaks, nothing crashes.
 *
 * malloc and friends are replaced in this program by versions that forward
 * to glibc's (tmalloc.c) and, when armed, make the k-th allocation fail.
 * Each scenario runs once for k = 1, 2, 3, ... in a child process (a crash
 * or a hang, caught by a watchdog, only ends the child), until a run needs
 * fewer than k allocations. The child reports through its exit status and
 * prints its findings as TAP comments once disarmed: stdio allocates.
 *
 * 1. The schedulers (rr, ll; 1 and 2 processors) through sched_ops: init,
 *    spawns before and after start and from a thread, a ring of threads
 *    passing a token with waits and yields at growing stack depths, wakes
 *    from the main native thread, fini; with so_start, or with so_fini
 *    starting the processors.
 * 2. The bare dispatcher with the test scheduler, whose s_alloc fails on
 *    demand: here the replaced malloc only checks that the dispatcher
 *    allocates nothing behind s_alloc's back.
 * 3. rr: a spawn that fails once a later spawn has taken the next turn
 *    keeps its turn, so that no turn is handed out twice.
 *
 * Sanitizers and valgrind bring their own malloc, which is then the one
 * called: scenario 1 is skipped and scenario 2 runs without that check.
 * First, the watchdog the children rely on ends a hang.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "tmalloc.h"
#include "tsched.h"
#include "../sched/sched.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
	MEMBERS   = 4,		/* threads in the ring */
	ROUNDS    = 4,		/* times the token goes round */
	SWEEP_MAX = 200,	/* a sweep longer than this is a failure */
	WATCHDOG  = 3		/* seconds a child may take */
};

/* Exit status of a child: bits. */
enum {
	CHILD_BAD     = 1,	/* a check failed */
	CHILD_NOFAULT = 2	/* the run made fewer than k allocations */
};

/* ---- Fault injection ---------------------------------------------------- */

static int fi_on;		/* count allocations, fail the k-th */
static long fi_countdown;	/* the allocation to fail; 0: none */
static long fi_calls;		/* allocations while on */
static int fi_fired;		/* one was made to fail */
static int interposing;		/* this program's malloc is the one called */

/* The failed allocation; shared with the parent, for crashes. */
struct where {
	void *w_caller;
	int   w_pthread;	/* inside pthread_create */
};

static struct where *fi_where;

/* The allocation hook: counts, and fails the k-th, while armed. */
static int fault_here(size_t size, void *caller)
{
	(void)size;
	if (!__atomic_load_n(&fi_on, __ATOMIC_ACQUIRE))
		return 0;
	__atomic_fetch_add(&fi_calls, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&fi_countdown, __ATOMIC_RELAXED) <= 0 ||
	    __atomic_sub_fetch(&fi_countdown, 1, __ATOMIC_RELAXED) != 0)
		return 0;
	__atomic_store_n(&fi_fired, 1, __ATOMIC_RELAXED);
	fi_where->w_caller = caller;
	fi_where->w_pthread = tmalloc_in_pthread_create();
	return 1;
}

static void fault_setup(void)
{
	fi_where = mmap(NULL, sizeof *fi_where, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	require(fi_where != MAP_FAILED);
	interposing = tmalloc_ours();
	tmalloc_hook = fault_here;
}

/* From now on, count and track allocations, and fail the k-th (k > 0). */
static void fault_arm(long k)
{
	fi_countdown = k;
	fi_calls = 0;
	fi_fired = 0;
	__atomic_store_n(&fi_on, 1, __ATOMIC_RELEASE);
	tmalloc_track(1);
}

/* Stops failing and tracking new allocations; frees are still seen. */
static void fault_disarm(void)
{
	__atomic_store_n(&fi_on, 0, __ATOMIC_SEQ_CST);
	tmalloc_track(0);
}

/* ---- The threads ------------------------------------------------------- */

static const char *config;	/* of the sweep running, for messages */
static long sweep_k;

/* What the threads did; written by several processors. */
static struct {
	void       *r_ring[MEMBERS];	/* the members that were created */
	int         r_n;
	long        r_got[MEMBERS];	/* tokens each member received */
	long        r_leaves;		/* leaves created */
	long        r_leaves_done;
	long        r_nomem;		/* -ENOMEM from wait, yield, spawn */
	long        r_bad;		/* other unexpected results */
	const char *r_bad_what;
	int         r_bad_rc;
} r;

static void (*wait_fn)(void);		/* waits, retrying on -ENOMEM */
static void (*wake_fn)(void *thread);
static int (*yield_fn)(void);

static void note_bad(const char *what, int rc)
{
	__atomic_fetch_add(&r.r_bad, 1, __ATOMIC_RELAXED);
	r.r_bad_what = what;
	r.r_bad_rc = rc;
}

static int wait_once(void)
{
	wait_fn();
	return 0;
}

/* A failed yield did not yield and took no wake: yield again. */
static int yield_retry(void)
{
	int rc;

	while ((rc = yield_fn()) == -ENOMEM)
		__atomic_fetch_add(&r.r_nomem, 1, __ATOMIC_RELAXED);
	if (rc != 0)
		note_bad("yield", rc);
	return 0;
}

/* Waits depth KiB down the stack: the saved copy must grow, often. */
static void deep_wait(int depth)
{
	if (tap_deep(depth, wait_once) == TAP_DEEP_BAD)
		note_bad("stack intact after wait", depth);
}

/* Yields deeper than it waited, for the copy to grow there too. */
static void deep_yield(int depth)
{
	if (tap_deep(depth, yield_retry) == TAP_DEEP_BAD)
		note_bad("stack intact after yield", depth);
}

/*
 * Member k of the ring: ROUNDS times, receive the token and pass it on;
 * member 0 starts it. Wakes are counting permits, so each member gets
 * exactly ROUNDS whatever the order.
 */
static void rounds(long k)
{
	void *right = r.r_ring[(k + 1) % r.r_n];

	for (int i = 0; i < ROUNDS; i++) {
		if (k == 0)
			wake_fn(right);
		deep_wait(2 * i);
		deep_yield(2 * i + 1);
		if (k != 0)
			wake_fn(right);
		__atomic_fetch_add(&r.r_got[k], 1, __ATOMIC_RELAXED);
	}
}

/* ---- Scenario 1: the schedulers ----------------------------------------- */

static const struct sched_ops *ops;
static int procs;
static int fini_starts;		/* no so_start: so_fini starts them */

/* A failed wait did not block and lost nothing: wait again. */
static void sched_wait(void)
{
	int rc;

	while ((rc = ops->so_wait()) == -ENOMEM)
		__atomic_fetch_add(&r.r_nomem, 1, __ATOMIC_RELAXED);
	if (rc != 0)
		note_bad("so_wait", rc);
}

static void sched_wake(void *t)
{
	int rc = ops->so_wake(t);

	if (rc != 0)
		note_bad("so_wake", rc);
}

static void *sched_spawn(void (*f)(void *), void *arg, int group)
{
	void *t = ops->so_spawn(f, arg, group);

	if (t == NULL && errno == ENOMEM)
		__atomic_fetch_add(&r.r_nomem, 1, __ATOMIC_RELAXED);
	else if (t == NULL)
		note_bad("so_spawn", errno);
	return t;
}

static void leaf(void *arg)
{
	(void)arg;
	sched_wait();
	__atomic_fetch_add(&r.r_leaves_done, 1, __ATOMIC_RELAXED);
}

static void spawn_leaf(int group)
{
	void *t = sched_spawn(leaf, NULL, group);

	if (t != NULL) {
		__atomic_fetch_add(&r.r_leaves, 1, __ATOMIC_RELAXED);
		sched_wake(t);
	}
}

static void sched_member(void *arg)
{
	long k = (long)arg;

	if (k == 0)
		spawn_leaf(1);		/* from a thread */
	sched_wait();			/* for the main native thread's wake */
	rounds(k);
}

/* Where the failed allocation was made, for messages. */
static const char *fault_site(char *buf, size_t len)
{
	const char *in = fi_where->w_pthread ? ", in pthread_create" : "";
	void *at = fi_where->w_caller;
	const char *file;
	Dl_info info;

	if (at == NULL)
		return "";
	if (dladdr(at, &info) == 0 || info.dli_fname == NULL) {
		snprintf(buf, len, " (from %p%s)", at, in);
		return buf;
	}
	file = strrchr(info.dli_fname, '/');
	snprintf(buf, len, " (from %s+%#lx%s%s%s)",
		 file != NULL ? file + 1 : info.dli_fname,
		 (unsigned long)((char *)at - (char *)info.dli_fbase),
		 info.dli_sname != NULL ? " " : "",
		 info.dli_sname != NULL ? info.dli_sname : "", in);
	return buf;
}

/* Prints why the run at this k failed; returns CHILD_BAD. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad(const char *fmt, ...)
{
	char site[256], why[256];
	va_list args;

	va_start(args, fmt);
	vsnprintf(why, sizeof why, fmt, args);
	va_end(args);
	if (fi_fired)
		diag("%s, allocation %ld%s fails: %s", config, sweep_k,
		     fault_site(site, sizeof site), why);
	else
		diag("%s, no allocation fails: %s", config, why);
	return CHILD_BAD;
}

/* No allocation made while armed is left; what says which. */
static int leak_check(const char *what)
{
	long bytes, blocks = tmalloc_outstanding(&bytes);

	if (blocks < 0)
		return bad("over %d allocations at once: leaks not checked",
			   TMALLOC_TRACK_MAX);
	if (blocks > 0)
		return bad("leak: %ld blocks, %ld bytes allocated %s", blocks,
			   bytes, what);
	return 0;
}

/*
 * Each failed allocation shows as exactly one error: so_init, so_spawn,
 * so_wait or so_yield -ENOMEM (the threads retry a wait or yield), or
 * so_start or so_fini. Then the program goes on: so_fini, tried once more
 * if it failed, returns 0 with every created thread done. Nothing
 * allocated since so_init is left after the next so_init (fini keeps the
 * counters until then).
 * fini_rc: of the first so_fini; again_rc: of a second, if it failed.
 */
static int sched_check(int init_rc, int start_rc, int fini_rc, int again_rc)
{
	long reported = r.r_nomem + (init_rc != 0) +
			(start_rc != 0 || fini_rc != 0);
	long unfinished = 0;
	int rc = 0;

	if (init_rc != 0 && init_rc != -ENOMEM)
		rc = bad("so_init returned %d", init_rc);
	if (start_rc > 0 || fini_rc > 0)
		rc = bad("so_start returned %d, so_fini %d: not -errno",
			 start_rc, fini_rc);
	if (fini_rc != 0 && start_rc == 0 && !fini_starts)
		rc = bad("so_fini returned %d after a good start", fini_rc);
	if (again_rc != 0)
		rc = bad("so_fini returned %d, and again %d", fini_rc,
			 again_rc);
	if (r.r_bad != 0)
		rc = bad("%ld unexpected results, the last: %s gave %d",
			 r.r_bad, r.r_bad_what, r.r_bad_rc);
	if (reported != fi_fired)
		rc = bad("%d allocation failed, %ld errors reported (init %d, "
			 "start %d, fini %d, -ENOMEM from wait/spawn %ld)",
			 fi_fired, reported, init_rc, start_rc, fini_rc,
			 r.r_nomem);
	if (init_rc == 0 && again_rc == 0) {
		for (int i = 0; i < r.r_n; i++)
			unfinished += r.r_got[i] != ROUNDS;
		unfinished += r.r_leaves - r.r_leaves_done;
		if (unfinished != 0)
			rc = bad("so_fini returned 0 (so_start %d, first "
				 "so_fini %d), but %ld of %ld threads did not "
				 "finish their work", start_rc, fini_rc,
				 unfinished, r.r_n + r.r_leaves);
	}
	/* The processors' array (counters) is kept until the next init. */
	if (ops->so_init(1, 0) != 0)
		rc = bad("so_init after so_fini fails");
	rc |= leak_check("since so_init, not freed by so_fini and the "
			 "next so_init");
	return rc | (fi_fired ? 0 : CHILD_NOFAULT);
}

static int sched_child(long k)
{
	int init_rc, start_rc = 0, fini_rc = 0, again_rc = 0;

	wait_fn = sched_wait;
	wake_fn = sched_wake;
	yield_fn = ops->so_yield;
	fault_arm(k);
	init_rc = ops->so_init(procs, MEMBERS);
	if (init_rc == 0) {
		for (int i = 0; i < MEMBERS; i++) {
			void *t = sched_spawn(sched_member,
					      (void *)(long)r.r_n, i);

			if (t != NULL)
				r.r_ring[r.r_n++] = t;
		}
		if (!fini_starts)
			start_rc = ops->so_start();
		spawn_leaf(0);		/* from the main native thread */
		for (int i = 0; i < r.r_n; i++)
			sched_wake(r.r_ring[i]);
		fini_rc = ops->so_fini();
		if (fini_rc != 0)	/* reported: a caller may try again */
			again_rc = ops->so_fini();
	}
	fault_disarm();
	return sched_check(init_rc, start_rc, fini_rc, again_rc);
}

/* ---- Scenario 2: the bare dispatcher ------------------------------------ */

static struct tsched ts;

static void tsched_wait_retry(void)
{
	int rc;

	while ((rc = tsched_wait()) == -ENOMEM)
		r.r_nomem++;
	if (rc != 0)
		note_bad("tsched_wait", rc);
}

static void tsched_wake_any(void *t)
{
	tsched_wake(t);
}

static void tsched_member(void *arg)
{
	rounds((long)arg);
}

static void quick(void *arg)
{
	(void)arg;
	r.r_leaves_done++;
}

/* s_alloc fails at its k-th call (ts_fail_in); malloc never does. */
static int usched_child(long k)
{
	int rc;

	wait_fn = tsched_wait_retry;
	wake_fn = tsched_wake_any;
	yield_fn = tsched_yield;
	tsched_init(&ts);
	for (r.r_n = 0; r.r_n < MEMBERS; r.r_n++)
		r.r_ring[r.r_n] = tsched_spawn(&ts, tsched_member,
					       (void *)(long)r.r_n);
	tsched_spawn(&ts, quick, NULL);
	ts.ts_fail_in = k;
	fault_arm(0);
	tsched_run(&ts);
	fault_disarm();
	fi_fired = ts.ts_fail_in == 0;
	rc = 0;
	if (r.r_bad != 0)
		rc = bad("%ld unexpected results, the last: %s gave %d",
			 r.r_bad, r.r_bad_what, r.r_bad_rc);
	if (r.r_nomem != fi_fired)
		rc = bad("s_alloc failed %d times, -ENOMEM reported %ld times",
			 fi_fired, r.r_nomem);
	for (int i = 0; i < MEMBERS; i++) {
		if (r.r_got[i] != ROUNDS)
			rc = bad("thread %d got %ld tokens, not %d", i,
				 r.r_got[i], ROUNDS);
	}
	if (ts.ts_done != MEMBERS + 1 || r.r_leaves_done != 1)
		rc = bad("%ld of %d threads finished", ts.ts_done, MEMBERS + 1);
	if (ts.ts_bytes != 0)
		rc = bad("leak: %ld bytes of stack buffers", ts.ts_bytes);
	if (interposing && fi_calls != ts.ts_allocs)
		rc = bad("%ld allocations, but s_alloc made only %ld: the "
			 "dispatcher allocates by itself", fi_calls,
			 ts.ts_allocs);
	rc |= leak_check("by usched_run, not freed");
	return rc | (fi_fired ? 0 : CHILD_NOFAULT);
}

/* ---- The sweep ---------------------------------------------------------- */

/* Runs child(k) in a child process; returns its wait status. */
static int run_child(int (*child)(long k), long k)
{
	pid_t pid = tap_fork();

	if (pid == 0) {
		alarm(WATCHDOG);
		_exit(child(k));
	}
	return tap_wait(pid);
}

/* Fails the 1st, 2nd, ... allocation, until a run needs fewer. */
static void sweep(const char *name, int (*child)(long k))
{
	long k, failed = 0;
	char buf[256];
	int status;

	config = name;
	for (k = 1; k <= SWEEP_MAX; k++) {
		sweep_k = k;
		*fi_where = (struct where){ NULL, 0 };
		status = run_child(child, k);
		if (WIFEXITED(status) && WEXITSTATUS(status) <= 3) {
			failed += WEXITSTATUS(status) & CHILD_BAD;
			if (WEXITSTATUS(status) & CHILD_NOFAULT)
				break;
			continue;
		}
		failed++;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			diag("%s, allocation %ld%s fails: hangs (killed after "
			     "%d s)", name, k, fault_site(buf, sizeof buf),
			     WATCHDOG);
		else if (WIFSIGNALED(status))
			diag("%s, allocation %ld%s fails: killed by signal %d "
			     "(%s)", name, k, fault_site(buf, sizeof buf),
			     WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			diag("%s, allocation %ld%s fails: exit status %d",
			     name, k, fault_site(buf, sizeof buf),
			     WEXITSTATUS(status));
	}
	ok(failed == 0 && k > 1 && k <= SWEEP_MAX,
	   "%s: each of %ld allocations failing in turn is reported, "
	   "leaks nothing, crashes nothing (%ld runs failed)", name, k - 1,
	   failed);
}

/*
 * Spawn A, from a native thread, takes turn 0 (processor 0) and fails in
 * the malloc of its processor's first chunk, but only after main's spawn B
 * took turn 1. C and D must then go to processors 2 and 0: one thread on
 * each of the three. A turn given back regardless would send C to 1 again.
 */
enum { TURN_CHUNK = 1 << 20 };
static __thread int turn_in_a;
static int turn_a_waiting, turn_b_done;

static int turn_fail_a(size_t size, void *caller)
{
	(void)caller;
	if (!turn_in_a || size < TURN_CHUNK)
		return 0;
	__atomic_store_n(&turn_a_waiting, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&turn_b_done, __ATOMIC_ACQUIRE))
		sched_yield();
	return 1;
}

static void *turn_spawn_a(void *failed)
{
	void *t;

	turn_in_a = 1;
	t = ops->so_spawn(tsched_nop, NULL, 0);
	turn_in_a = 0;
	*(int *)failed = t == NULL && errno == ENOMEM;
	return NULL;
}

static void test_turn_kept(void)
{
	struct sched_stats st[3];
	pthread_t a;
	int a_failed = 0;

	ops = sched_find("rr");
	require(ops != NULL && ops->so_init(3, 4) == 0);
	tmalloc_hook = turn_fail_a;
	require(pthread_create(&a, NULL, turn_spawn_a, &a_failed) == 0);
	while (!__atomic_load_n(&turn_a_waiting, __ATOMIC_ACQUIRE))
		sched_yield();
	require(ops->so_spawn(tsched_nop, NULL, 0) != NULL);
	__atomic_store_n(&turn_b_done, 1, __ATOMIC_RELEASE);
	require(pthread_join(a, NULL) == 0);
	tmalloc_hook = NULL;
	for (int i = 0; i < 2; i++)
		require(ops->so_spawn(tsched_nop, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	require(tsched_stats_sum(ops, st, 3) == 3);
	ok(a_failed && st[0].ss_switches == 1 && st[1].ss_switches == 1 &&
	   st[2].ss_switches == 1, "rr: a spawn that fails after a later one "
	   "took the next turn keeps its own: one thread on each processor "
	   "(%lu, %lu, %lu; A failed: %d)", st[0].ss_switches,
	   st[1].ss_switches, st[2].ss_switches, a_failed);
}

/*
 * The watchdog that ends the children's hangs: a child that hangs says so
 * and exits 3; one whose alarm cannot be handled (blocked here; TSan holds
 * it back inside its runtime) is ended by SIGKILL all the same.
 */
static void hang(void *alarm_blocked)
{
	sigset_t alrm;

	dup2(2, 1);	/* the bail line, to stderr_of's pipe */
	if (alarm_blocked != NULL) {
		sigemptyset(&alrm);
		sigaddset(&alrm, SIGALRM);
		sigprocmask(SIG_BLOCK, &alrm, NULL);
	}
	tap_watchdog(1, "a hang");
	for (;;)
		pause();
}

static void test_watchdog(void)
{
	char out[256];
	int status;

	tap_watchdog(10, "a child's watchdog did not end its hang");
	status = stderr_of(hang, NULL, out, sizeof out);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 3 &&
	   strcmp(out, "Bail out! a hang\n") == 0,
	   "the watchdog ends a hang, saying so: exit 3 (status %#x)", status);
	status = stderr_of(hang, "", out, sizeof out);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && out[0] == 0,
	   "the watchdog ends a hang whose alarm is not handled: SIGKILL "
	   "(status %#x)", status);
	tap_watchdog_off();
}

int main(void)
{
	static const char *const names[] = { "rr", "ll" };
	char name[64];

	fault_setup();
	test_watchdog();
	for (int i = 0; i < 4 * 2; i++) {
		ops = sched_find(names[i / 4]);
		require(ops != NULL);
		procs = 1 + i / 2 % 2;
		fini_starts = i % 2;
		snprintf(name, sizeof name, "%s P=%d%s", names[i / 4], procs,
			 fini_starts ? ", so_fini starts" : "");
		if (interposing)
			sweep(name, sched_child);
		else
			ok(1, "# SKIP %s: malloc is not this program's (a "
			   "sanitizer's or valgrind's): it cannot be made to "
			   "fail", name);
	}
	sweep("dispatcher, s_alloc failing", usched_child);
	if (interposing)
		test_turn_kept();
	else
		ok(1, "# SKIP rr's turns: malloc is not this program's");
	return tap_done();
}
