/*
 * A minimal single-native-thread scheduler for the dispatcher tests: the
 * schedulers' FIFO of ready threads (sched/proc.h), counting-permit
 * wait/wake, and allocation call-backs that count bytes and can be told to
 * fail. And, for the tests of the schedulers, their counters added up.
 */
#ifndef TSCHED_H
#define TSCHED_H

#include "../sched/proc.h"

/* The schedulers' thread struct; t_state is ST_WAITING or not. */
struct tthread {
	struct sched_thread t_s;	/* first: ustack_self() is a tthread */
};

struct tsched {
	struct usched      ts_s;	/* first */
	struct sched_queue ts_ready;
	long               ts_bytes;	/* allocated and not yet freed */
	long               ts_allocs;
	long               ts_unrounded;	/* sizes not a multiple of 16 */
	long               ts_fail_in;	/* fail the n-th next allocation */
	long               ts_done;	/* threads that finished */
	unsigned long      ts_seed;	/* nonzero: run a random ready thread */
};

void tsched_init(struct tsched *ts);
struct tthread *tsched_spawn(struct tsched *ts, void (*f)(void *), void *arg);
/* The same, with ustack_init's stack buffer and its size. */
struct tthread *tsched_spawn_buf(struct tsched *ts, void (*f)(void *),
				 void *arg, void *stack, int len);
/* A thread's function that returns at once, for threads only counted. */
void tsched_nop(void *arg);
/*
 * Blocks until woken (a wake before the wait is kept). Returns
 * ustack_block's code.
 */
int tsched_wait(void);
void tsched_wake(struct tthread *t);
/* Lets every other ready thread run once. */
int tsched_yield(void);
void tsched_run(struct tsched *ts);
/* usched_run(s) from a frame of 1 KiB further down the stack than a call
 * here would make it. */
void tsched_run_deeper(struct usched *s);
struct tthread *tsched_self(void);

/*
 * Adds up the counters of ops's processors, processor p's into sum[p % n]
 * (n >= 1; n = 1: the totals); ss_max_stack is the largest. Returns how
 * many processors there are.
 */
int tsched_stats_sum(const struct sched_ops *ops, struct sched_stats *sum,
		     int n);
/* Runs tests() with *ops set to each scheduler in turn, rr then ll. */
void tsched_each(const struct sched_ops **ops, void (*tests)(void));

#endif
