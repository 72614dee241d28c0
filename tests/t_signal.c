/*
 * A SIGPROF timer every 100 us (a POSIX timer on the monotonic clock:
 * setitimer's profiling timer only ticks at the scheduler's rate) whose
 * handler uses 4 KiB of stack, during a million switches at varying
 * depths; every thread checks its locals after every resume.
 * USCHED_TEST_SWITCHES=N runs N switches instead (the long run: tens of
 * millions). Signals must also land between two threads:
 * while a stack is copied out, or the next one picked.
 */
#include "tap.h"
#include "tsched.h"

#include <signal.h>
#include <stdint.h>
#include <time.h>

enum { THREADS = 8, MIN_TICKS = 100 };

static volatile sig_atomic_t ticks;
static volatile sig_atomic_t live;	/* threads started, not ended */
static volatile sig_atomic_t between;	/* ticks with no thread running */
static volatile unsigned sink;	/* keeps the handler's stack use real */
static long bad;
static long switches;
static long target;

static void on_prof(int sig)
{
	volatile unsigned char scratch[4096];

	(void)sig;
	for (size_t i = 0; i < sizeof scratch; i++)
		scratch[i] = (unsigned char)(i * 31 + ticks);
	sink += scratch[0] + scratch[4095];
	ticks++;
	if (live > 0 && ustack_self() == NULL)
		between++;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	return x * 0xbf58476d1ce4e5b9ULL;
}

static __attribute__((noinline)) void work(uint64_t id, int depth)
{
	volatile uint64_t loc[8];

	for (int i = 0; i < 8; i++)
		loc[i] = mix(id + depth * 8 + i);
	if (depth > 0 && (mix(id ^ switches) & 3) != 0) {
		work(id, depth - 1);
	} else {
		switches++;
		if (tsched_yield() != 0)
			bad++;
	}
	for (int i = 0; i < 8; i++)
		bad += loc[i] != mix(id + depth * 8 + i);
}

/*
 * At least target switches, and on until MIN_TICKS signals came (10 ms at
 * 10 kHz), one of them between two threads, so that a fast machine still
 * switches under signals (up to ten times target).
 */
static int more_switches(void)
{
	return switches < target ||
	       ((ticks < MIN_TICKS || between == 0) &&
		switches < 10 * target);
}

static void thread(void *arg)
{
	uint64_t id = (uintptr_t)arg;

	live++;
	while (more_switches())
		work(id, (int)(id * 7 % 40));
	live--;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_prof, .sa_flags = SA_RESTART };
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL,
			       .sigev_signo = SIGPROF };
	struct itimerspec every = { { 0, 100000 }, { 0, 100000 } };
	struct timespec t0, t1;
	double secs;
	timer_t timer;
	struct tsched ts;

	target = test_env_count("USCHED_TEST_SWITCHES");
	if (target == 0)
		target = 1000000;
	sigemptyset(&sa.sa_mask);
	require(sigaction(SIGPROF, &sa, NULL) == 0);
	require(timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0);
	tsched_init(&ts);
	for (uintptr_t i = 1; i <= THREADS; i++)
		tsched_spawn(&ts, thread, (void *)(i * 0x1234567));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	require(timer_settime(timer, 0, &every, NULL) == 0);
	tsched_run(&ts);
	timer_delete(timer);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	diag("%ld switches in %.2f s", switches, secs);
	/*
	 * The timer asks for 10 kHz; what arrives depends on how much CPU
	 * this process gets (pending signals coalesce), so no rate is asserted.
	 */
	diag("%d signals, %.0f per second (sink %u)", (int)ticks, ticks / secs,
	     sink);
	ok(ticks >= MIN_TICKS, "signals arrived during the switches (%d)",
	   (int)ticks);
	ok(between > 0, "signals landed between two threads (%d)",
	   (int)between);
	ok(bad == 0, "no locals corrupted (%ld bad)", bad);
	ok(ts.ts_bytes == 0 && ts.ts_done == THREADS, "all done and freed");
	return tap_done();
}
