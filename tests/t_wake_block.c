/*
 * A wake that comes while a waiting thread's stack is being saved is not
 * lost. rr and ll mark a thread waiting only in s_next, once its stack is
 * saved (usched_blocked); a thread woken before that runs again, and that
 * wake is used up.
 *
 * The wake is made from inside malloc, which a thread's first block calls
 * (for its processor's arena) while the dispatcher saves its stack: this
 * program's malloc (tmalloc.c) forwards to glibc's and, when armed, first
 * wakes the thread. Where another malloc is the one called (sanitizers,
 * valgrind), there is nothing to test.
 */
#include "tap.h"
#include "tmalloc.h"
#include "../sched/sched.h"

enum { CHUNK = 1 << 20 };	/* an arena chunk: sched/pool.c */

static const struct sched_ops *ops;
static void *volatile armed;	/* the thread to wake in malloc */
static volatile int woke, waited, wait_rc, checked, checker_ran;

/* The allocation hook: wakes the armed thread when a chunk is allocated. */
static int wake_armed(size_t size, void *caller)
{
	void *t = armed;

	(void)caller;
	if (t != NULL && size >= CHUNK) {
		armed = NULL;
		woke = ops->so_wake(t) == 0;
	}
	return 0;
}

/* Runs only if the sleeper's second wait blocked; wakes it. */
static void checker(void *arg)
{
	checker_ran = 1;
	ops->so_wake(arg);
}

/*
 * Its first wait is woken while its stack is saved; the wake is then used
 * up, so the second one blocks until the checker, queued after it, runs.
 */
static void sleeper(void *arg)
{
	(void)arg;
	armed = ops->so_self();
	wait_rc = ops->so_wait();
	waited = 1;
	if (ops->so_spawn(checker, ops->so_self(), 0) != NULL &&
	    ops->so_wait() == 0)
		checked = checker_ran;
}

static void wake_during_block(const char *name)
{
	ops = sched_find(name);
	woke = waited = checked = checker_ran = 0;
	wait_rc = 1;
	require(ops != NULL && ops->so_init(1, 1) == 0);
	require(ops->so_spawn(sleeper, NULL, 0) != NULL);
	tap_watchdog(10, "%s: the woken thread never ran again", name);
	require(ops->so_start() == 0 && ops->so_fini() == 0);
	tap_watchdog_off();
	ok(woke && waited && wait_rc == 0, "%s: woken while its stack was "
	   "being saved, the thread ran on (wake %d, wait %d)", name, woke,
	   wait_rc);
	ok(checked, "%s: that wake was used up: its next wait blocked", name);
}

int main(void)
{
	tmalloc_require_ours();
	tmalloc_hook = wake_armed;
	wake_during_block("rr");
	wake_during_block("ll");
	return tap_done();
}
