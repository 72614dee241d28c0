/* Threads that never block, block once, many times, return and abort. */
#include "tap.h"
#include "tsched.h"

static int ran;

static void no_block(void *arg)
{
	(void)arg;
	ran++;
}

static void block_n(void *arg)
{
	long n = (long)arg;
	volatile long mark = 0x5eed0000 + n;

	for (long i = 0; i < n; i++) {
		if (tsched_yield() != 0 || mark != 0x5eed0000 + n) {
			ran = -1000000;
			return;
		}
	}
	ran++;
}

static void test_no_block(void)
{
	struct tsched ts;

	tsched_init(&ts);
	ran = 0;
	tsched_spawn(&ts, no_block, NULL);
	tsched_spawn(&ts, no_block, NULL);
	tsched_run(&ts);
	ok(ran == 2, "two threads that never block ran once each");
	ok(ts.ts_allocs == 0, "a thread that never blocks allocates no buffer");
	ok(ts.ts_done == 2, "both finished");
}

/* Blocks without anyone to wake it: must be re-queued by the test. */
static struct tthread *sleeper;

static void block_once(void *arg)
{
	int *state = arg;

	*state = 1;
	*state = ustack_block() == 0 ? 2 : -1;
}

static void wake_sleeper(void *arg)
{
	int *state = arg;

	ok(*state == 1, "first thread is blocked while the second runs");
	tsched_wake(sleeper);
}

static void test_block_once(void)
{
	struct tsched ts;
	int state = 0;

	tsched_init(&ts);
	sleeper = tsched_spawn(&ts, block_once, &state);
	sleeper->t_s.t_state = ST_WAITING;	/* ustack_block directly */
	tsched_spawn(&ts, wake_sleeper, &state);
	tsched_run(&ts);
	ok(state == 2,
	   "a thread blocked once and resumed, ustack_block gave 0");
	ok(ts.ts_bytes == 0, "its buffer was freed when it finished");
}

/* Waits, keeping a local and a pointer to it across the block. */
static void wait_with_local(void *arg)
{
	volatile int local = 42, *where = &local;
	int *state = arg;

	*state = tsched_wait() == 0 && *where == 42 ? 2 : -1;
}

/*
 * A run that ends with threads blocked, then one that resumes them; once
 * none is blocked, a run from elsewhere is fine.
 */
static void test_later_run(void)
{
	struct tsched ts;
	struct tthread *t[2];
	int state[2] = { 0, 0 };

	tsched_init(&ts);
	for (int i = 0; i < 2; i++)
		t[i] = tsched_spawn(&ts, wait_with_local, &state[i]);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			for (int i = 0; i < 2; i++)
				tsched_wake(t[i]);
		tsched_run(&ts);	/* the same place both times */
		if (pass == 0)
			ok(state[0] == 0 && state[1] == 0 && ts.ts_done == 0,
			   "a run ends with its threads still blocked");
	}
	ok(state[0] == 2 && state[1] == 2 && ts.ts_done == 2,
	   "a later run from the same place resumes them intact");
	ran = 0;
	tsched_spawn(&ts, block_n, (void *)1L);
	/* stops the program if any counts as blocked */
	tsched_run_deeper(&ts.ts_s);
	ok(ran == 1 && ts.ts_done == 3,
	   "with none blocked, a run from deeper down runs new threads");
}

/* A NULL buffer with a size: the size is ignored, not trusted. */
static void test_null_buffer(void)
{
	struct tsched ts;
	struct tthread *t;
	int len;

	tsched_init(&ts);
	ran = 0;
	tsched_spawn_buf(&ts, block_n, (void *)3L, NULL, 4096);
	tsched_run(&ts);
	ok(ran == 1 && ts.ts_allocs == 1 && ts.ts_bytes == 0,
	   "ustack_init with no buffer but a size: the thread gets one of its "
	   "own when it blocks, freed when it ends");
	t = tsched_spawn_buf(&ts, block_n, (void *)3L, NULL, -1);
	len = t->t_s.t_u.u_len;
	tsched_run(&ts);
	ok(len == 0 && ran == 2 && ts.ts_done == 2 && ts.ts_bytes == 0,
	   "even a negative one (u_len %d)", len);
}

/* What s_done sees of a thread that blocked, and of the buffers. */
static long done_bytes = -1;
static int done_stack_gone;

static void done_after_free(struct usched *s, struct ustack *u)
{
	struct tsched *ts = (struct tsched *)s;

	done_bytes = ts->ts_bytes;
	done_stack_gone = u->u_stack == NULL && u->u_len == 0;
	ts->ts_done++;
	free(u);
}

/* usched.h: s_done is called once u's buffer was given back. */
static void test_done_after_free(void)
{
	struct tsched ts;

	tsched_init(&ts);
	ts.ts_s.s_done = done_after_free;
	ran = 0;
	tsched_spawn(&ts, block_n, (void *)3L);
	tsched_run(&ts);
	ok(ran == 1 && ts.ts_done == 1 && done_bytes == 0 && done_stack_gone,
	   "a thread that blocked ends with its buffer given back before "
	   "s_done, which finds u_stack NULL and u_len 0 (%ld bytes out)",
	   done_bytes);
}

/* A buffer of size 0 is a buffer too small for anything, not an error. */
static void test_empty_buffer(void)
{
	struct tsched ts;
	void *buf = malloc(16);

	tsched_init(&ts);
	ran = 0;
	require(buf != NULL);
	tsched_spawn_buf(&ts, block_n, (void *)3L, buf, 0);
	tsched_run(&ts);
	ok(ran == 1 && ts.ts_allocs == 1 && ts.ts_bytes == 0,
	   "ustack_init with a buffer of 0 bytes: the thread gets one that "
	   "fits when it blocks (%ld allocations)", ts.ts_allocs);
}

static void test_block_many(void)
{
	struct tsched ts;

	tsched_init(&ts);
	ran = 0;
	tsched_spawn(&ts, block_n, (void *)100000L);
	tsched_spawn(&ts, block_n, (void *)1000L);
	tsched_run(&ts);
	ok(ran == 2, "threads blocking 100000 and 1000 times finish intact");
	ok(ts.ts_bytes == 0 && ts.ts_done == 2, "buffers freed, both done");
}

/* ustack_abort from deep inside: no frame above it runs again. */
static int after_abort;

static int yield_then_abort(void)
{
	if (tsched_yield() == 0)
		ustack_abort();
	return 0;
}

static void aborter(void *arg)
{
	(void)arg;
	tap_deep(50, yield_then_abort);
	after_abort = 1;
}

static void test_abort(void)
{
	struct tsched ts;

	tsched_init(&ts);
	ran = 0;
	after_abort = 0;
	tsched_spawn(&ts, aborter, NULL);
	tsched_spawn(&ts, block_n, (void *)10L);
	tsched_run(&ts);
	ok(after_abort == 0, "ustack_abort from 50 frames deep never returns");
	ok(ran == 1 && ts.ts_done == 2, "the other thread still finished");
	ok(ts.ts_bytes == 0, "the aborted thread's buffer was freed");
}

/* usched_blocked: what s_next is told about the thread before it. */
static struct ustack *(*blocked_next)(struct usched *s);
static struct ustack *blocked_seen[8];
static int blocked_calls;

static struct ustack *record_blocked(struct usched *s)
{
	if (blocked_calls < 8)
		blocked_seen[blocked_calls] = usched_blocked(s);
	blocked_calls++;
	return blocked_next(s);
}

static void test_blocked(void)
{
	struct tsched ts;
	struct tthread *a;

	tsched_init(&ts);
	blocked_next = ts.ts_s.s_next;
	ts.ts_s.s_next = record_blocked;
	blocked_calls = 0;
	a = tsched_spawn(&ts, block_n, (void *)1);
	tsched_spawn(&ts, no_block, NULL);
	tsched_run(&ts);
	/* start; a blocks; b ends; a ends */
	ok(blocked_calls == 4 && blocked_seen[0] == NULL &&
	   blocked_seen[1] == &a->t_s.t_u && blocked_seen[2] == NULL &&
	   blocked_seen[3] == NULL && ts.ts_done == 2,
	   "usched_blocked() names the thread that blocked, NULL after a "
	   "start or an end (%d calls)", blocked_calls);
}

/*
 * A run that ends with a thread blocked: the next run's first s_next
 * follows its start, so it is told of none.
 */
static void test_blocked_next_run(void)
{
	struct tsched ts;
	struct tthread *a;
	int state = 0;

	tsched_init(&ts);
	blocked_next = ts.ts_s.s_next;
	ts.ts_s.s_next = record_blocked;
	a = tsched_spawn(&ts, wait_with_local, &state);
	tsched_run(&ts);	/* a blocks, and nothing else can run */
	tsched_wake(a);
	blocked_calls = 0;
	tsched_run(&ts);	/* the same place */
	ok(blocked_calls == 2 && blocked_seen[0] == NULL &&
	   blocked_seen[1] == NULL && state == 2 && ts.ts_done == 1,
	   "a run after one that ended with a thread blocked: usched_blocked() "
	   "is NULL at its start (%d calls)", blocked_calls);
}

/*
 * A thread whose function tail-calls the block (as `void f(void *a) {
 * ll_wait(); }` does when optimised) blocks with its stack pointer at the
 * bottom: nothing to save, no buffer. Under UBSan (without ASan) the copy
 * of those 0 bytes to a NULL buffer was reported as a NULL argument.
 */
static void tail_block(void *arg)
{
	struct tthread *self = tsched_self();
	struct tsched *ts = (struct tsched *)self->t_s.t_u.u_sched;

	(void)arg;
	sched_enqueue(&ts->ts_ready, &self->t_s);
	ustack_block();			/* a tail call at -O2 */
}

static void test_empty_stack(void)
{
	struct tsched ts;

	tsched_init(&ts);
	tsched_spawn(&ts, tail_block, NULL);
	tsched_spawn(&ts, tsched_nop, NULL);
	tsched_run(&ts);
	ok(ts.ts_done == 2 && ts.ts_bytes == 0,
	   "a thread blocking with an empty stack resumes and finishes (%ld "
	   "done, %ld bytes left allocated; %d bytes saved at most)",
	   ts.ts_done, ts.ts_bytes, ts.ts_s.s_max_used);
}

static void test_self(void)
{
	ok(ustack_self() == NULL, "ustack_self() is NULL outside threads");
}

int main(void)
{
	test_self();
	test_no_block();
	test_block_once();
	test_later_run();
	test_null_buffer();
	test_empty_buffer();
	test_done_after_free();
	test_block_many();
	test_abort();
	test_blocked();
	test_blocked_next_run();
	test_empty_stack();
	return tap_done();
}
