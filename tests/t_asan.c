/*
 * Under AddressSanitizer, errors in thread code are still caught after
 * blocking: an overflow of a local array that was created before the
 * thread blocked (its redzones come back with the thread's saved shadow),
 * while other threads with other frame layouts ran in between.
 */
#include "tap.h"
#include "tsched.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

/*
 * Signals during switches: a handler's frame, below the stack pointer,
 * must never get a resuming thread's redzones. A deep thread (frames with
 * redzones) and a shallow one take turns under a 20 kHz timer.
 */
enum { SIGNALS = 10000 };
static volatile int handled;

static void on_prof(int sig)
{
	volatile char a[64], b[64];	/* locals with redzones */

	(void)sig;
	for (int i = 0; i < 64; i++)
		b[i] = a[i] = (char)i;
	handled += b[63] - 62;
}

static __attribute__((noinline)) void deep(int depth)
{
	volatile char frame[40];

	frame[0] = (char)depth;
	if (depth > 0)
		deep(depth - 1);
	else
		tsched_yield();
	frame[39] = frame[0];
}

static void switcher(void *arg)
{
	while (handled < SIGNALS) {
		if (arg != NULL)
			deep(60);
		else
			tsched_yield();
	}
}

static void run_signals(void *arg)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL,
			       .sigev_signo = SIGPROF };
	struct itimerspec every = { { 0, 50000 }, { 0, 50000 } };
	timer_t timer;
	struct tsched ts;

	(void)arg;
	__asan_set_death_callback(die_by_abort);
	signal(SIGPROF, on_prof);
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0 ||
	    timer_settime(timer, 0, &every, NULL) != 0)
		abort();
	tsched_init(&ts);
	tsched_spawn(&ts, switcher, NULL);
	tsched_spawn(&ts, switcher, &ts);
	tsched_run(&ts);
	if (ts.ts_done == 2)
		fputs("usched-asan: clean run\n", stderr);
	abort();
}

/*
 * Fake frames (detect_stack_use_after_return) are per native thread: the
 * dispatcher refuses to run with them. Set here, as the environment may
 * not be: instrumented code reads the flag at every call.
 */
extern int __asan_option_detect_stack_use_after_return;

static void run_fake_stack(void *arg)
{
	struct tsched ts;

	(void)arg;
	__asan_option_detect_stack_use_after_return = 1;
	tsched_init(&ts);
	tsched_spawn(&ts, other, NULL);
	tsched_run(&ts);
	fputs("usched-asan: ran with fake frames\n", stderr);
	exit(0);
}

int main(void)
{
	dies_with(run_fake_stack, NULL, "detect_stack_use_after_return",
		  "detect_stack_use_after_return: refused with a message");
	dies_with(run, (void *)0L, "usched-asan: clean run",
		  "no report without a bug");
	dies_with(run_signals, NULL, "usched-asan: clean run",
		  "signals during switches: no report");
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
