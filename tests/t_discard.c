/* Threads discarded while blocked, or before they ran, are never resumed. */
#include "tap.h"
#include "tsched.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

/* Stays blocked: reaching its end is a failure. */
static void sleep_forever(void *arg)
{
	int *state = arg;
	volatile char frame[200];

	fill_bytes(frame, sizeof frame, 7);	/* a stack worth saving */
	*state = 1;
	tsched_wait();
	*state = -1;
}

/* The discarded thread's dispatcher, and what its call-backs saw. */
static struct tsched *dts;
static void (*tsched_free_fn)(struct usched *, void *, int);
static struct ustack *free_self = (struct ustack *)1;

static void free_watched(struct usched *s, void *buf, int size)
{
	free_self = ustack_self();
	tsched_free_fn(s, buf, size);
}

static void watch_free(struct tsched *ts)
{
	dts = ts;
	tsched_free_fn = ts->ts_s.s_free;
	ts->ts_s.s_free = free_watched;
}

static void test_after_run(void)
{
	struct tsched ts;
	struct tthread *t;
	int state = 0, other = 0;

	tsched_init(&ts);
	t = tsched_spawn(&ts, sleep_forever, &state);
	tsched_run(&ts);
	require(state == 1 && ts.ts_bytes > 0 && ts.ts_done == 0);
	ustack_discard(&t->t_s.t_u);	/* s_done frees t */
	ok(ts.ts_bytes == 0, "a thread discarded after its run gives its "
	   "buffer back");
	ok(ts.ts_done == 1, "s_done is told of it");
	ok(state == 1, "its stack did not run again");
	/* Else the blocked thread would stop a run from another depth. */
	t = tsched_spawn(&ts, sleep_forever, &other);
	tsched_run_deeper(&ts.ts_s);
	ok(other == 1, "a run from another depth is allowed once it is "
	   "discarded");
	ustack_discard(&t->t_s.t_u);
	ok(ts.ts_bytes == 0 && ts.ts_done == 2, "so is the next one");
}

/* The threads the discarder (below) works on. */
static struct tthread *victim;
static long bytes_before;
static int discarder_ok;

static void discarder(void *arg)
{
	struct ustack *self = ustack_self();
	int *state = arg;

	*state = 1;
	bytes_before = dts->ts_bytes;
	free_self = (struct ustack *)1;
	ustack_discard(&victim->t_s.t_u);
	discarder_ok = ustack_self() == self && free_self == NULL &&
		       dts->ts_done == 1 && dts->ts_bytes < bytes_before;
	/* Its own stack still comes back after a block. */
	if (tsched_yield() != 0)
		discarder_ok = 0;
	*state = 2;
}

static void test_from_thread(void)
{
	struct tsched ts;
	int state = 0, dstate = 0;

	tsched_init(&ts);
	watch_free(&ts);
	victim = tsched_spawn(&ts, sleep_forever, &state);
	tsched_spawn(&ts, discarder, &dstate);
	tsched_run(&ts);
	ok(state == 1 && dstate == 2, "a thread discards a blocked one and "
	   "goes on");
	ok(discarder_ok, "it is still the running thread, the buffer went "
	   "back outside it, s_done was told");
	ok(ts.ts_bytes == 0 && ts.ts_done == 2, "every buffer is back, both "
	   "threads are over");
}

/* s_next discards the thread that just blocked, if it is the victim. */
static struct ustack *(*tsched_next_fn)(struct usched *);
static int next_saw_null = -1;

static struct ustack *next_discarding(struct usched *s)
{
	struct ustack *u = usched_blocked(s);

	if (victim != NULL && u == &victim->t_s.t_u) {
		victim = NULL;	/* freed by s_done */
		ustack_discard(u);
		next_saw_null = usched_blocked(s) == NULL;
	}
	return tsched_next_fn(s);
}

static void init_discarding(struct tsched *ts)
{
	tsched_init(ts);
	tsched_next_fn = ts->ts_s.s_next;
	ts->ts_s.s_next = next_discarding;
}

static void test_from_next(void)
{
	struct tsched ts;
	struct tthread *t;
	int state = 0, other = 0;

	init_discarding(&ts);
	victim = tsched_spawn(&ts, sleep_forever, &state);
	t = tsched_spawn(&ts, sleep_forever, &other);
	tsched_run(&ts);
	ok(state == 1 && other == 1, "both threads blocked");
	ok(next_saw_null == 1, "s_next discards the thread that blocked, and "
	   "usched_blocked() no longer names it");
	ok(ts.ts_done == 1, "s_done is told of it");
	ustack_discard(&t->t_s.t_u);
}

/*
 * s_done may unmap the struct of a thread s_next discards. Nothing of it
 * is read after, whether s_next then returns no thread (the run returns)
 * or another blocked one (here a yielder: it ends, then the run returns).
 */
static void (*tsched_done_fn)(struct usched *, struct ustack *);
static struct tthread *mapped;

static void done_unmapping(struct usched *s, struct ustack *u)
{
	if (u != &mapped->t_s.t_u)
		tsched_done_fn(s, u);
	else if (munmap(mapped, sizeof *mapped) != 0)
		exit(3);
}

static int reran;

static void mark_reran(void *arg)
{
	(void)arg;
	reran = tsched_yield() == 0 ? 1 : -1;
}

/* In a child: a fault there fails one point, not the whole file. */
static void run_unmapping(void *arg)
{
	void (*first)(void *) = arg;
	struct tsched ts;
	struct tthread *t;
	int state = 0, other = 0;

	init_discarding(&ts);
	tsched_done_fn = ts.ts_s.s_done;
	ts.ts_s.s_done = done_unmapping;
	t = tsched_spawn(&ts, first, &other);
	mapped = mmap(NULL, sizeof *mapped, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	require(mapped != MAP_FAILED);
	ustack_init(&mapped->t_s.t_u, &ts.ts_s, sleep_forever, &state,
		    NULL, 0);
	sched_enqueue(&ts.ts_ready, &mapped->t_s);
	victim = mapped;
	reran = 0;
	tsched_run(&ts);
	if (state != 1 || victim != NULL || ts.ts_done != (first == mark_reran))
		exit(4);
	if (first == mark_reran ? reran != 1 : other != 1)
		exit(5);
	if (first == sleep_forever)	/* still blocked */
		ustack_discard(&t->t_s.t_u);
	if (ts.ts_bytes != 0)
		exit(6);
}

static void test_from_next_unmapped(void)
{
	char out[4096];
	int status;

	status = stderr_of(run_unmapping, sleep_forever, out, sizeof out);
	diag_lines(out);
	ok(status == 0, "s_next discards the thread that blocked, s_done "
	   "unmaps it, the run returns (status %#x)", status);
	status = stderr_of(run_unmapping, mark_reran, out, sizeof out);
	diag_lines(out);
	ok(status == 0, "the same, and s_next returns a blocked thread, "
	   "which resumes and ends (status %#x)", status);
}

static void *nothing(void *arg)
{
	return arg;
}

/*
 * Under ThreadSanitizer, a thread's fiber left alive counts as a native
 * thread, and a child forked then may not start one.
 */
static void start_native_thread(void *arg)
{
	pthread_t t;

	(void)arg;
	if (pthread_create(&t, NULL, nothing, NULL) != 0 ||
	    pthread_join(t, NULL) != 0)
		exit(1);
}

/* Many threads blocked and discarded: nothing of them is left. */
static void test_many(void)
{
	enum { ROUNDS = 100, THREADS = 100 };
	struct tsched ts;
	struct tthread *t[THREADS];
	int state[THREADS], blocked = 0, status;
	char out[4096];

	tsched_init(&ts);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < THREADS; i++) {
			state[i] = 0;
			t[i] = tsched_spawn(&ts, sleep_forever, &state[i]);
		}
		tsched_run(&ts);
		for (int i = 0; i < THREADS; i++) {
			blocked += state[i] == 1;
			ustack_discard(&t[i]->t_s.t_u);
		}
	}
	ok(blocked == ROUNDS * THREADS && ts.ts_done == blocked,
	   "%d threads blocked and discarded, %d at a time", blocked, THREADS);
	ok(ts.ts_bytes == 0, "every buffer is back");
	status = stderr_of(start_native_thread, NULL, out, sizeof out);
	if (status != 0)
		diag_lines(out);
	ok(status == 0, "no fiber of theirs is left (a child forked now "
	   "starts a native thread)");
}

/* A thread that never ran gives back the buffer it was given. */
static int done_calls;

static void done_counted(struct usched *s, struct ustack *u)
{
	(void)s;
	(void)u;
	done_calls++;
}

static void test_never_ran(void)
{
	struct tsched ts;
	struct ustack u, bare;
	void *buf;

	tsched_init(&ts);
	ts.ts_s.s_done = done_counted;
	done_calls = 0;
	buf = ts.ts_s.s_alloc(&ts.ts_s, 256);
	require(buf != NULL && ts.ts_bytes == 256);
	ustack_init(&u, &ts.ts_s, tsched_nop, NULL, buf, 256);
	ustack_discard(&u);
	ok(ts.ts_bytes == 0 && u.u_stack == NULL && u.u_len == 0,
	   "a thread that never ran gives back its buffer");
	ok(done_calls == 1, "s_done is told of it");
	ustack_init(&bare, &ts.ts_s, tsched_nop, NULL, NULL, 0);
	ustack_discard(&bare);
	ok(done_calls == 2 && ts.ts_bytes == 0, "one without a buffer is "
	   "discarded too");
	ustack_discard(&u);
	ok(done_calls == 2, "a finished thread is left as it is");
}

/* A struct discarded while blocked runs again once set up anew. */
static void test_reuse(void)
{
	struct tsched ts;
	struct tthread t;
	int state = 0;

	tsched_init(&ts);
	ts.ts_s.s_done = done_counted;
	done_calls = 0;
	memset(&t, 0, sizeof t);
	ustack_init(&t.t_s.t_u, &ts.ts_s, sleep_forever, &state, NULL, 0);
	sched_enqueue(&ts.ts_ready, &t.t_s);
	tsched_run(&ts);
	require(state == 1);
	ustack_discard(&t.t_s.t_u);
	ustack_init(&t.t_s.t_u, &ts.ts_s, mark_reran, NULL, NULL, 0);
	sched_enqueue(&ts.ts_ready, &t.t_s);
	reran = 0;
	tsched_run(&ts);
	ok(reran == 1 && state == 1, "a discarded struct runs a new "
	   "function, blocks and ends");
	ok(done_calls == 2 && ts.ts_bytes == 0, "both lives ended, every "
	   "buffer back");
}

static void tests(void)
{
	test_after_run();
	test_from_thread();
	test_from_next();
	test_from_next_unmapped();
	test_never_ran();
	test_reuse();
	test_many();
}

int main(void)
{
	tests();
	return tap_done();
}
