/*
 * Under AddressSanitizer, errors in thread code are still caught after
 * blocking: an overflow of a local array that was created before the
 * thread blocked (its redzones come back with the thread's saved shadow),
 * while other threads with other frame layouts ran in between.
 */
#include "tap.h"
#include "tsched.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef TAP_ASAN
#include <sanitizer/asan_interface.h>

static volatile int overflow_by;	/* 0 in the control run */

static __attribute__((noinline)) void other_layout(int depth)
{
	volatile char big[300];

	big[depth] = 1;
	if (depth > 0)
		other_layout(depth - 1);
	else
		tsched_yield();
	big[299 - depth] = big[depth];
}

static void other(void *arg)
{
	(void)arg;
	other_layout(5);
}

/* Out of line: UBSan's bounds and object-size checks cannot see the array. */
static __attribute__((noinline)) void poke(volatile char *p, int i)
{
	p[i] = 2;
}

static __attribute__((noinline)) void victim_frame(void)
{
	volatile char small[24];

	small[0] = 1;
	tsched_yield();			/* other threads run on this stack */
	tsched_yield();
	poke(small, 23 + overflow_by + small[0] - 1);	/* 24: one past */
}

static void victim(void *arg)
{
	(void)arg;
	victim_frame();
}

static void die_by_abort(void)
{
	abort();	/* so that the death test sees SIGABRT */
}

static void run(void *arg)
{
	struct tsched ts;

	overflow_by = (int)(long)arg;
	__asan_set_death_callback(die_by_abort);
	tsched_init(&ts);
	tsched_spawn(&ts, victim, NULL);
	tsched_spawn(&ts, other, NULL);
	tsched_spawn(&ts, other, NULL);
	tsched_run(&ts);
	if (ts.ts_done == 3)
		fputs("usched-asan: clean run\n", stderr);
	abort();
}

int main(void)
{
	dies_with(run, (void *)0L, "usched-asan: clean run",
		  "no report without a bug");
	dies_with(run, (void *)1L, "stack-buffer-overflow",
		  "an overflow after resuming is reported");
	return tap_done();
}
#else
int main(void)
{
	puts("1..0 # SKIP not built with AddressSanitizer");
	return 0;
}
#endif
