/*
 * Pinning of the schedulers' processors to CPUs: USCHED_PIN ("0", "1",
 * unset or empty, anything else refused by init and start), which CPUs
 * the processors run on (of those the starting native thread may use),
 * and sched_set_pinning() against USCHED_PIN, and a CPU that cannot be
 * pinned to.
 */
#define _GNU_SOURCE	/* sched_getaffinity */
#include "../sched/sched.h"
#include "tap.h"
#include "tsched.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct sched_ops *ops;

/* Non-negative: sched_getaffinity says only that CPU may be used. */
static int fake_cpu = -1;

/* Replaces glibc's, for the library too. */
int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	if (fake_cpu >= 0) {
		CPU_ZERO_S(size, set);
		CPU_SET_S(fake_cpu, size, set);
		return 0;
	}
	memset(set, 0, size);	/* the kernel fills only its own size */
	return syscall(SYS_sched_getaffinity, pid, size, set) < 0 ? -1 : 0;
}

/*
 * USCHED_PIN: "0" or "1", unset or empty for the default, else -EINVAL
 * from init (before anything is spawned) and from start.
 */
static void test_pin_env(void)
{
	int bad_init, bad, empty, off;

	setenv("USCHED_PIN", "yes", 1);
	bad_init = ops->so_init(2, 1);
	unsetenv("USCHED_PIN");
	require(ops->so_init(2, 1) == 0);
	setenv("USCHED_PIN", "yes", 1);
	bad = ops->so_start();
	setenv("USCHED_PIN", "", 1);
	empty = ops->so_start();
	require(ops->so_fini() == 0);
	require(ops->so_init(1, 1) == 0);
	setenv("USCHED_PIN", "0", 1);
	off = ops->so_start();
	unsetenv("USCHED_PIN");
	require(ops->so_spawn(tsched_nop, NULL, 0) != NULL);
	require(ops->so_fini() == 0);
	ok(bad_init == -EINVAL && bad == -EINVAL && empty == 0 && off == 0,
	   "%s: USCHED_PIN=yes: init and start -EINVAL (got %d, %d), empty: "
	   "as unset (got %d), 0: runs (got %d)", ops->so_name, bad_init, bad,
	   empty, off);
}

/*
 * sched_set_pinning: with it on, each processor's native thread may run on
 * one CPU, and two processors on two CPUs when there are two; processors
 * past the CPUs start over from the first. Off, on all the process may
 * use. One thread per processor (rr spreads them in turn, ll puts group i
 * on processor i) reads its affinity.
 */
enum { PIN_MAX = 65 };
static int pin_cpus[PIN_MAX], pin_first[PIN_MAX];

static void pin_probe(void *arg)
{
	long i = (long)arg;
	cpu_set_t set;

	require(sched_getaffinity(0, sizeof set, &set) == 0);
	pin_cpus[i] = CPU_COUNT(&set);
	for (pin_first[i] = 0; !CPU_ISSET(pin_first[i], &set); pin_first[i]++)
		;
}

/* Runs the probes on procs processors; 1 if each saw want CPUs. */
static int pin_run_on(int on, int want, int procs)
{
	int each = 1;

	sched_set_pinning(on);
	require(ops->so_init(procs, procs) == 0);
	for (long i = 0; i < procs; i++)
		require(ops->so_spawn(pin_probe, (void *)i, (int)i) != NULL);
	require(ops->so_fini() == 0);
	for (int i = 0; i < procs; i++)
		each &= pin_cpus[i] == want;
	return each;
}

static int pin_run(int on, int want)
{
	return pin_run_on(on, want, 2);
}

static void test_pinning(void)
{
	cpu_set_t all;
	int n, on, apart, wraps, off;

	require(sched_getaffinity(0, sizeof all, &all) == 0);
	n = CPU_COUNT(&all);
	on = pin_run_on(1, 1, n < PIN_MAX ? n + 1 : PIN_MAX);
	apart = n < 2 || pin_first[0] != pin_first[1];
	wraps = n >= PIN_MAX || pin_first[n] == pin_first[0];
	off = pin_run(0, n);
	sched_set_pinning(-1);
	ok(on && apart && wraps && off, "%s: pinning on: one CPU a "
	   "processor, two apart%s, and the one past the %d CPUs on the "
	   "first's; off: all %d (got %d, %d)", ops->so_name,
	   n < 2 ? " (one CPU here: not checked)" : "", n, n, pin_cpus[0],
	   pin_cpus[1]);
}

/*
 * Without sched_set_pinning, USCHED_PIN decides: "1" pins, "0" does not.
 * A call to it wins over USCHED_PIN, which is then not read at all.
 */
static void test_pin_precedence(void)
{
	cpu_set_t all;
	int n, env_on, env_off, call_off, bad_unread;

	require(sched_getaffinity(0, sizeof all, &all) == 0);
	n = CPU_COUNT(&all);
	setenv("USCHED_PIN", "1", 1);
	env_on = pin_run(-1, 1);
	call_off = pin_run(0, n);
	setenv("USCHED_PIN", "0", 1);
	env_off = pin_run(-1, n);
	setenv("USCHED_PIN", "yes", 1);
	sched_set_pinning(0);
	bad_unread = ops->so_init(1, 1) == 0 && ops->so_start() == 0 &&
		     ops->so_fini() == 0;
	unsetenv("USCHED_PIN");
	sched_set_pinning(-1);
	ok(env_on && env_off && call_off && bad_unread, "%s: USCHED_PIN=1 "
	   "pins, 0 does not; sched_set_pinning(0) wins over USCHED_PIN=1 and "
	   "over a bad one%s (%d, %d, %d, %d)", ops->so_name, n < 2 ?
	   " (one CPU here: pinned or not looks the same)" : "", env_on,
	   env_off, call_off, bad_unread);
}

/* Unset or empty, USCHED_PIN pins, as "1" does. */
static void test_pin_default(void)
{
	cpu_set_t all;
	int n, unset, empty;

	require(sched_getaffinity(0, sizeof all, &all) == 0);
	n = CPU_COUNT(&all);
	unsetenv("USCHED_PIN");
	unset = pin_run(-1, 1);
	setenv("USCHED_PIN", "", 1);
	empty = pin_run(-1, 1);
	unsetenv("USCHED_PIN");
	ok(unset && empty, "%s: USCHED_PIN unset or empty pins%s (%d, %d)",
	   ops->so_name, n < 2 ? " (one CPU here: pinned or not looks the "
	   "same)" : "", unset, empty);
}

/*
 * The CPUs counted are those the starting native thread may use, not the
 * machine's: started from one allowed only its last CPU, both processors
 * run there.
 */
static void test_pin_allowed(void)
{
	cpu_set_t all, last;
	int cpu, one;

	require(sched_getaffinity(0, sizeof all, &all) == 0);
	if (CPU_COUNT(&all) < 2) {
		ok(1, "# SKIP %s: one CPU here, no other to leave out",
		   ops->so_name);
		return;
	}
	for (cpu = CPU_SETSIZE - 1; !CPU_ISSET(cpu, &all); cpu--)
		;
	CPU_ZERO(&last);
	CPU_SET(cpu, &last);
	require(sched_setaffinity(0, sizeof last, &last) == 0);
	one = pin_run(1, 1);
	require(sched_setaffinity(0, sizeof all, &all) == 0);
	sched_set_pinning(-1);
	ok(one && pin_first[0] == cpu && pin_first[1] == cpu, "%s: started "
	   "from a native thread allowed only CPU %d, processors pinned there "
	   "(got %d, %d)", ops->so_name, cpu, pin_first[0], pin_first[1]);
}

/*
 * A CPU gone between start reading the caller's CPUs and making a
 * processor (faked: one that never was) fails start with pthread_create's
 * error. Nothing is lost: fini starts the processors, pinned, and the
 * threads spawned before run.
 */
static void test_pin_gone(void)
{
	int bad;

	if (sysconf(_SC_NPROCESSORS_CONF) >= CPU_SETSIZE) {
		ok(1, "# SKIP %s: no CPU number is free to fake", ops->so_name);
		return;
	}
	pin_cpus[0] = pin_cpus[1] = 0;
	sched_set_pinning(1);
	require(ops->so_init(2, 2) == 0);
	for (long i = 0; i < 2; i++)
		require(ops->so_spawn(pin_probe, (void *)i, (int)i) != NULL);
	fake_cpu = CPU_SETSIZE - 1;
	bad = ops->so_start();
	fake_cpu = -1;
	require(ops->so_fini() == 0);
	sched_set_pinning(-1);
	ok(bad == -EINVAL && pin_cpus[0] == 1 && pin_cpus[1] == 1, "%s: start "
	   "pinning to a CPU that is not there: -EINVAL (got %d); fini starts "
	   "the processors, pinned, and runs the threads (CPUs seen: %d, %d)",
	   ops->so_name, bad, pin_cpus[0], pin_cpus[1]);
}

static void tests(void)
{
	test_pin_env();
	test_pinning();
	test_pin_precedence();
	test_pin_default();
	test_pin_allowed();
	test_pin_gone();
}

int main(void)
{
	tsched_each(&ops, tests);
	return tap_done();
}
