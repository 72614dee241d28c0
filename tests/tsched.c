#include "tsched.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static void tsched_enqueue(struct tsched *ts, struct tthread *t)
{
	t->t_next = NULL;
	if (ts->ts_tail != NULL)
		ts->ts_tail->t_next = t;
	else
		ts->ts_head = t;
	ts->ts_tail = t;
}

/* Moves a random ready thread to the head of the queue. */
static void tsched_shuffle(struct tsched *ts)
{
	struct tthread **p = &ts->ts_head, *t;
	unsigned long n;

	ts->ts_seed = ts->ts_seed * 6364136223846793005UL + 1442695040888963407UL;
	for (n = (ts->ts_seed >> 33) % 64; n > 0 && (*p)->t_next != NULL; n--)
		p = &(*p)->t_next;
	t = *p;
	if (t == ts->ts_head)
		return;
	*p = t->t_next;
	if (ts->ts_tail == t)
		ts->ts_tail = (struct tthread *)((char *)p -
				offsetof(struct tthread, t_next));
	t->t_next = ts->ts_head;
	ts->ts_head = t;
}

static struct ustack *tsched_next(struct usched *s)
{
	struct tsched *ts = (struct tsched *)s;
	struct tthread *t;

	if (ts->ts_head != NULL && ts->ts_seed != 0)
		tsched_shuffle(ts);
	t = ts->ts_head;
	if (t == NULL)
		return NULL;
	ts->ts_head = t->t_next;
	if (ts->ts_head == NULL)
		ts->ts_tail = NULL;
	return &t->t_u;
}

static void *tsched_alloc(struct usched *s, int size)
{
	struct tsched *ts = (struct tsched *)s;

	if (ts->ts_fail_in > 0 && --ts->ts_fail_in == 0)
		return NULL;
	ts->ts_bytes += size;
	ts->ts_allocs++;
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

struct tthread *tsched_spawn(struct tsched *ts, void (*f)(void *), void *arg)
{
	struct tthread *t = calloc(1, sizeof *t);

	if (t == NULL) {
		perror("tsched_spawn");
		exit(1);
	}
	ustack_init(&t->t_u, &ts->ts_s, f, arg, NULL, 0);
	tsched_enqueue(ts, t);
	return t;
}

struct tthread *tsched_self(void)
{
	return (struct tthread *)ustack_self();
}

int tsched_wait(void)
{
	struct tthread *t = tsched_self();
	int rc;

	if (t->t_permits > 0) {
		t->t_permits--;
		return 0;
	}
	t->t_waiting = 1;
	rc = ustack_block();
	if (rc != 0)
		t->t_waiting = 0;
	return rc;
}

void tsched_wake(struct tthread *t)
{
	struct tsched *ts = (struct tsched *)t->t_u.u_sched;

	if (t->t_waiting) {
		t->t_waiting = 0;
		tsched_enqueue(ts, t);
	} else {
		t->t_permits++;
	}
}

/* A failed block returns at once, so t is still the last in the queue. */
static void tsched_unqueue_tail(struct tsched *ts)
{
	struct tthread *prev = NULL, *p = ts->ts_head;

	while (p != ts->ts_tail) {
		prev = p;
		p = p->t_next;
	}
	if (prev != NULL)
		prev->t_next = NULL;
	else
		ts->ts_head = NULL;
	ts->ts_tail = prev;
}

int tsched_yield(void)
{
	struct tthread *t = tsched_self();
	struct tsched *ts = (struct tsched *)t->t_u.u_sched;
	int rc;

	tsched_enqueue(ts, t);
	rc = ustack_block();
	if (rc != 0)
		tsched_unqueue_tail(ts);
	return rc;
}

void tsched_run(struct tsched *ts)
{
	usched_run(&ts->ts_s);
}
