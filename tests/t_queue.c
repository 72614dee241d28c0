/*
 * The schedulers' ready queue (sched/proc.h): first in, first out through
 * sched_enqueue and sched_dequeue, also with threads that were queued
 * before, and ll's batch of woken threads, built with sched_push_front and
 * put behind the ready ones by sched_append, either side empty or not.
 * Most checks queue one more thread before they empty the queue, so that
 * its end is checked too. A fault in them loses threads, which mostly
 * hangs ll and rr; here it fails at once.
 */
#include "tap.h"
#include "../sched/proc.h"

#include <stdio.h>
#include <string.h>

enum { N = 6 };
static struct sched_thread t[N];

/* Queues the threads whose digits are in which, in that order. */
static void add(struct sched_queue *q, const char *which)
{
	for (; *which != 0; which++)
		sched_enqueue(q, &t[*which - '0']);
}

/* Pushes them in front of q, in that order. */
static void push(struct sched_queue *q, const char *which)
{
	for (; *which != 0; which++)
		sched_push_front(q, &t[*which - '0']);
}

/*
 * Empties q: the threads it gave, as digits, at most N + 1 of them (a
 * queue that loops gives more than N).
 */
static const char *take(struct sched_queue *q)
{
	static char seen[N + 2];
	struct sched_thread *x;
	int n = 0;

	while (n < N + 1 && (x = sched_dequeue(q)) != NULL)
		seen[n++] = (char)('0' + (x - t));
	seen[n] = 0;
	return seen;
}

/*
 * Puts behind q's threads a batch made as ll_drain makes it: the threads
 * of which pushed in front of one another, in that order.
 */
static void append(struct sched_queue *q, const char *which)
{
	struct sched_queue batch = { NULL, NULL };

	push(&batch, which);
	sched_append(q, &batch);
}

/* Adds thread 5 to q, then empties it: whether q gave expect, then 5. */
static int gives(struct sched_queue *q, const char *expect)
{
	char want[N + 2];

	add(q, "5");
	snprintf(want, sizeof want, "%s5", expect);
	return strcmp(take(q), want) == 0;
}

int main(void)
{
	struct sched_queue q = { NULL, NULL };

	add(&q, "012");
	ok(gives(&q, "012"), "enqueued threads come out in that order");
	ok(gives(&q, ""), "an emptied queue takes threads again");
	add(&q, "210");
	ok(strcmp(take(&q), "210") == 0, "threads queued before come out in "
	   "their new order, and no others");
	push(&q, "0");
	ok(gives(&q, "0"), "a thread pushed in front of an empty queue is "
	   "also its end");
	push(&q, "432");
	ok(gives(&q, "234"), "threads pushed in front come out the last "
	   "pushed first");
	add(&q, "01");
	append(&q, "32");
	ok(gives(&q, "0123"), "a batch appended comes out behind the queue's "
	   "threads, in its order");
	append(&q, "32");
	ok(gives(&q, "23"), "a batch appended to an empty queue comes out "
	   "in its order");
	add(&q, "01");
	append(&q, "");
	ok(gives(&q, "01"), "an empty batch appended changes nothing");
	return tap_done();
}
