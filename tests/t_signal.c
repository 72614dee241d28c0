/*
 * A SIGPROF timer every 100 us whose handler uses 4 KiB of stack, during a
 * million switches at varying depths; every thread checks its locals after
 * every resume.
 */
#include "tap.h"
#include "tsched.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>

enum { THREADS = 8, SWITCHES = 1000000 };

static volatile sig_atomic_t ticks;
static long bad;
static long switches;

static void on_prof(int sig)
{
	volatile unsigned char scratch[4096];

	(void)sig;
	for (size_t i = 0; i < sizeof scratch; i++)
		scratch[i] = (unsigned char)(i * 31 + ticks);
	ticks += scratch[4095] != 0 || scratch[0] == 0;
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

static void thread(void *arg)
{
	uint64_t id = (uintptr_t)arg;

	while (switches < SWITCHES)
		work(id, (int)(id * 7 % 40));
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_prof, .sa_flags = SA_RESTART };
	struct itimerval every = { { 0, 100 }, { 0, 100 } };
	struct itimerval stop = { { 0, 0 }, { 0, 0 } };
	struct tsched ts;

	sigemptyset(&sa.sa_mask);
	require(sigaction(SIGPROF, &sa, NULL) == 0);
	require(setitimer(ITIMER_PROF, &every, NULL) == 0);
	tsched_init(&ts);
	for (uintptr_t i = 1; i <= THREADS; i++)
		tsched_spawn(&ts, thread, (void *)(i * 0x1234567));
	tsched_run(&ts);
	setitimer(ITIMER_PROF, &stop, NULL);
	ok(switches >= SWITCHES, "%ld switches", switches);
	ok(ticks > 10, "%d signals delivered during them", (int)ticks);
	ok(bad == 0, "no locals corrupted (%ld bad)", bad);
	ok(ts.ts_bytes == 0 && ts.ts_done == THREADS, "all done and freed");
	return tap_done();
}
