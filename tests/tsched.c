#include "tsched.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Moves a random ready thread to the head of the queue. */
static void tsched_shuffle(struct sched_queue *q, unsigned long *seed)
{
	struct sched_thread *prev = NULL, *t = q->q_head;
	unsigned long n;

	for (n = tap_rand(seed) % 64; n > 0 && t->t_next != NULL; n--) {
		prev = t;
		t = t->t_next;
	}
	if (prev == NULL)
		return;
	prev->t_next = t->t_next;
	if (q->q_tail == t)
		q->q_tail = prev;
	t->t_next = q->q_head;
	q->q_head = t;
}

static struct ustack *tsched_next(struct usched *s)
{
	struct tsched *ts = (struct tsched *)s;
	struct sched_thread *t;

	if (ts->ts_ready.q_head != NULL && ts->ts_seed != 0)
		tsched_shuffle(&ts->ts_ready, &ts->ts_seed);
	t = sched_dequeue(&ts->ts_ready);
	return t != NULL ? &t->t_u : NULL;
}

static void *tsched_alloc(struct usched *s, int size)
{
	struct tsched *ts = (struct tsched *)s;

	if (ts->ts_fail_in > 0 && --ts->ts_fail_in == 0)
		return NULL;
	ts->ts_bytes += size;
	ts->ts_allocs++;
	ts->ts_unrounded += size % 16 != 0;
	return malloc(size);
}

static void tsched_free(struct usched *s, void *buf, int size)
{
	struct tsched *ts = (struct tsched *)s;

	ts->ts_bytes -= size;
	free(buf);
}

static void tsched_done(struct usched *s, struct ustack *u)
{
	struct tsched *ts = (struct tsched *)s;

	ts->ts_done++;
	free(u);
}

void tsched_init(struct tsched *ts)
{
	*ts = (struct tsched){
		.ts_s = {
			.s_next  = tsched_next,
			.s_alloc = tsched_alloc,
			.s_free  = tsched_free,
			.s_done  = tsched_done,
		},
	};
}

struct tthread *tsched_spawn_buf(struct tsched *ts, void (*f)(void *),
				 void *arg, void *stack, int len)
{
	struct tthread *t = calloc(1, sizeof *t);

	if (t == NULL) {
		perror("tsched_spawn");
		exit(1);
	}
	ustack_init(&t->t_s.t_u, &ts->ts_s, f, arg, stack, len);
	t->t_s.t_state = ST_READY;
	sched_enqueue(&ts->ts_ready, &t->t_s);
	return t;
}

struct tthread *tsched_spawn(struct tsched *ts, void (*f)(void *), void *arg)
{
	return tsched_spawn_buf(ts, f, arg, NULL, 0);
}

void tsched_nop(void *arg)
{
	(void)arg;
}

struct tthread *tsched_self(void)
{
	return (struct tthread *)ustack_self();
}

int tsched_wait(void)
{
	struct sched_thread *t = &tsched_self()->t_s;
	int rc;

	if (t->t_permits > 0) {
		t->t_permits--;
		return 0;
	}
	t->t_state = ST_WAITING;
	rc = ustack_block();
	if (rc != 0)
		t->t_state = ST_RUNNING;
	return rc;
}

void tsched_wake(struct tthread *thread)
{
	struct sched_thread *t = &thread->t_s;
	struct tsched *ts = (struct tsched *)t->t_u.u_sched;

	if (t->t_state == ST_WAITING) {
		t->t_state = ST_READY;
		sched_enqueue(&ts->ts_ready, t);
	} else {
		t->t_permits++;
	}
}

/* A failed block returns at once, so t is still the last in the queue. */
static void tsched_unqueue_tail(struct sched_queue *q)
{
	struct sched_thread *prev = NULL, *p = q->q_head;

	while (p != q->q_tail) {
		prev = p;
		p = p->t_next;
	}
	if (prev != NULL)
		prev->t_next = NULL;
	else
		q->q_head = NULL;
	q->q_tail = prev;
}

int tsched_yield(void)
{
	struct sched_thread *t = &tsched_self()->t_s;
	struct tsched *ts = (struct tsched *)t->t_u.u_sched;
	int rc;

	sched_enqueue(&ts->ts_ready, t);
	rc = ustack_block();
	if (rc != 0)
		tsched_unqueue_tail(&ts->ts_ready);
	return rc;
}

void tsched_run(struct tsched *ts)
{
	usched_run(&ts->ts_s);
}

__attribute__((noinline)) void tsched_run_deeper(struct usched *s)
{
	volatile char frame[1024];

	fill_bytes(frame, sizeof frame, 1);	/* used whole: not shrunk */
	usched_run(s);
	if (!bytes_intact(frame, sizeof frame, 1))
		abort();
}

int tsched_stats_sum(const struct sched_ops *ops, struct sched_stats *sum,
		     int n)
{
	struct sched_stats st;
	int p;

	memset(sum, 0, n * sizeof *sum);
	for (p = 0; ops->so_stats(p, &st) == 0; p++) {
		struct sched_stats *s = &sum[p % n];

		s->ss_switches += st.ss_switches;
		s->ss_local_wakes += st.ss_local_wakes;
		s->ss_remote_wakes += st.ss_remote_wakes;
		s->ss_sleeps += st.ss_sleeps;
		if (st.ss_max_stack > s->ss_max_stack)
			s->ss_max_stack = st.ss_max_stack;
	}
	return p;
}

void tsched_each(const struct sched_ops **ops, void (*tests)(void))
{
	static const char *const names[] = { "rr", "ll" };

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		*ops = sched_find(names[i]);
		require(*ops != NULL && strcmp((*ops)->so_name, names[i]) == 0);
		tests();
	}
}
