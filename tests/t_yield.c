/*
 * so_yield, with each scheduler: the threads ready on the processor run
 * before the yielder resumes, in turn; alone, it returns without a switch;
 * it takes no wake and loses none, kept before it or made during it;
 * threads woken from another processor run first too; from a deep stack
 * the saved copy comes back intact; one too deep to save fails and leaves
 * no wake; outside a thread, -EPERM.
 */
#include "../ll.h"
#include "../rr.h"
#include "tap.h"
#include "tsched.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

static const struct sched_ops *ops;

static char trace[32];
static int trace_n, yield_bad;

static void note(char c)
{
	if (trace_n < (int)sizeof trace - 1)
		trace[trace_n++] = c;
}

static void yield_ok(void)
{
	if (ops->so_yield() != 0)
		yield_bad++;
}

static void trace_reset(void)
{
	memset(trace, 0, sizeof trace);
	trace_n = yield_bad = 0;
}

static unsigned long switches(void)
{
	struct sched_stats st;

	require(tsched_stats_sum(ops, &st, 1) >= 1);
	return st.ss_switches;
}

/* Notes its name, then yields as often as the name's case says, noting it
 * again after each: A twice, B once, C never. */
static void turn_taker(void *arg)
{
	char c = *(const char *)arg;
	int n = c == 'A' ? 2 : c == 'B';

	note(c);
	for (int i = 0; i < n; i++) {
		yield_ok();
		note(c);
	}
}

static void test_turns(void)
{
	trace_reset();
	require(ops->so_init(1, 3) == 0);
	require(ops->so_spawn(turn_taker, "A", 0) != NULL &&
		ops->so_spawn(turn_taker, "B", 0) != NULL &&
		ops->so_spawn(turn_taker, "C", 0) != NULL);
	require(ops->so_fini() == 0);
	ok(strcmp(trace, "ABCABA") == 0 && yield_bad == 0, "%s: each yield "
	   "lets the ready threads run first, in turn (%s)", ops->so_name,
	   trace);
}

/* Alone, with two wakes kept: no switch, and both wakes still there. */
static int alone_ok;

static void alone(void *arg)
{
	void *self = ops->so_self();
	unsigned long before;

	(void)arg;
	before = switches();
	alone_ok = ops->so_wake(self) == 0 && ops->so_wake(self) == 0 &&
		   ops->so_yield() == 0 && ops->so_wait() == 0 &&
		   ops->so_wait() == 0 && switches() == before;
}

static void test_alone(void)
{
	alone_ok = 0;
	require(ops->so_init(1, 1) == 0);
	require(ops->so_spawn(alone, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(alone_ok, "%s: a yield with nothing else ready does not switch; "
	   "two wakes kept before it are still there", ops->so_name);
}

/*
 * Its own wake is taken by its resumption: P yields, then waits, and must
 * block until Q, spawned by O after the yield, wakes it. Q's second wake
 * comes while P is queued, and is kept: P's second wait returns at once.
 */
static void *waiter;

static void waker(void *arg)
{
	(void)arg;
	note('Q');
	if (ops->so_wake(waiter) != 0 || ops->so_wake(waiter) != 0)
		yield_bad++;
}

static void other(void *arg)
{
	(void)arg;
	note('O');
	if (ops->so_spawn(waker, NULL, 0) == NULL)
		yield_bad++;
}

static void yield_then_wait(void *arg)
{
	unsigned long before;

	(void)arg;
	yield_ok();
	note('P');
	if (ops->so_wait() != 0)
		yield_bad++;
	note('P');
	before = switches();
	if (ops->so_wait() != 0 || switches() != before)
		yield_bad++;
}

static void test_own_wake_taken(void)
{
	trace_reset();
	require(ops->so_init(1, 3) == 0);
	waiter = ops->so_spawn(yield_then_wait, NULL, 0);
	require(waiter != NULL && ops->so_spawn(other, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(strcmp(trace, "OPQP") == 0 && yield_bad == 0, "%s: a yield takes "
	   "its own wake, no other; a wake during it is kept (%s)",
	   ops->so_name, trace);
}

/*
 * Two processors: W waits on processor 0; Y, there too, yields once V, on
 * processor 1, has woken W. W must have run when Y resumes. (rr spreads
 * spawns 0, 1, 0; ll takes the group.)
 */
static void *woken;
static int y_running, v_woke, w_ran, w_ran_first;

static void woken_body(void *arg)
{
	(void)arg;
	if (ops->so_wait() != 0)
		yield_bad++;
	__atomic_store_n(&w_ran, 1, __ATOMIC_RELEASE);
}

static void remote_waker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&y_running, __ATOMIC_ACQUIRE))
		sched_yield();	/* W has blocked: it ran before Y */
	if (ops->so_wake(woken) != 0)
		yield_bad++;
	__atomic_store_n(&v_woke, 1, __ATOMIC_RELEASE);
}

static void remote_yielder(void *arg)
{
	(void)arg;
	__atomic_store_n(&y_running, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&v_woke, __ATOMIC_ACQUIRE))
		sched_yield();
	yield_ok();
	w_ran_first = __atomic_load_n(&w_ran, __ATOMIC_ACQUIRE);
}

static void test_woken_elsewhere_first(void)
{
	trace_reset();
	y_running = v_woke = w_ran = w_ran_first = 0;
	require(ops->so_init(2, 3) == 0);
	woken = ops->so_spawn(woken_body, NULL, 0);
	require(woken != NULL && ops->so_spawn(remote_waker, NULL, 1) != NULL &&
		ops->so_spawn(remote_yielder, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(w_ran_first && yield_bad == 0, "%s: a thread woken from another "
	   "processor runs before the yielder resumes", ops->so_name);
}

/* A yield 8 KiB down: the stack saved for it comes back intact. tap_deep
 * gives the yield's result, or TAP_DEEP_BAD for a changed stack. */
static int deep_rc;

static int yield_at_bottom(void)
{
	return ops->so_yield();
}

static void deep_yielder(void *arg)
{
	(void)arg;
	deep_rc = tap_deep(8, yield_at_bottom);
	note('D');
}

static void test_deep(void)
{
	trace_reset();
	deep_rc = 1;
	require(ops->so_init(1, 2) == 0);
	require(ops->so_spawn(deep_yielder, NULL, 0) != NULL &&
		ops->so_spawn(turn_taker, "C", 0) != NULL);
	require(ops->so_fini() == 0);
	ok(deep_rc == 0 && strcmp(trace, "CD") == 0, "%s: a yield 8 KiB "
	   "down lets the ready thread run, and its stack comes back intact "
	   "(%d, %s)", ops->so_name, deep_rc, trace);
}

/*
 * A yield over 1 MiB down fails with -E2BIG, without yielding, and leaves
 * no wake behind: F's wait then blocks until G wakes it.
 */
static int failed_rc;

static void failing_yielder(void *arg)
{
	(void)arg;
	failed_rc = tap_deep(1100, yield_at_bottom);
	note('F');
	if (ops->so_wait() != 0)
		yield_bad++;
	note('f');
}

static void failed_waker(void *arg)
{
	note('G');
	if (ops->so_wake(*(void **)arg) != 0)
		yield_bad++;
}

static void test_failed(void)
{
	static void *f;

	trace_reset();
	failed_rc = 0;
	require(ops->so_init(1, 2) == 0);
	f = ops->so_spawn(failing_yielder, NULL, 0);
	require(f != NULL && ops->so_spawn(failed_waker, &f, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(failed_rc == -E2BIG && strcmp(trace, "FGf") == 0 && yield_bad == 0,
	   "%s: a yield too deep to save: -E2BIG, not yielded, no wake left "
	   "behind (%d, %s)", ops->so_name, failed_rc, trace);
}

/* The other scheduler's yield, from this one's thread: -EPERM. */
static int foreign_rc;

static void foreign(void *arg)
{
	(void)arg;
	foreign_rc = ops == &ll_ops ? rr_yield() : ll_yield();
}

static void test_outside(void)
{
	ok(ops->so_yield() == -EPERM, "%s: a yield outside a thread: -EPERM",
	   ops->so_name);
	foreign_rc = 0;
	require(ops->so_init(1, 1) == 0);
	require(ops->so_spawn(foreign, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(foreign_rc == -EPERM, "%s: the other scheduler's yield in its "
	   "thread: -EPERM (%d)", ops->so_name, foreign_rc);
}

static void tests(void)
{
	tap_watchdog(10, "%s: the yield tests hang (a lost wake?)",
		     ops->so_name);
	test_turns();
	test_alone();
	test_own_wake_taken();
	test_woken_elsewhere_first();
	test_deep();
	test_failed();
	test_outside();
	tap_watchdog_off();
}

int main(void)
{
	tsched_each(&ops, tests);
	return tap_done();
}
