/*
 * Allocation failure and the stack limit: reported, nothing lost; with the
 * schedulers too, whatever the native threads' default stack size.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "tsched.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static struct tsched ts;

/* Yields depth KiB down the stack. */
static int deep_block(int depth)
{
	return tap_deep(depth, tsched_yield);
}

static void nomem(void *arg)
{
	volatile int canary = 1234;
	int *rc = arg;

	ts.ts_fail_in = 1;			/* the first allocation fails */
	rc[0] = deep_block(0);
	rc[1] = canary == 1234 ? deep_block(0) : TAP_DEEP_BAD;
	ts.ts_fail_in = 1;			/* growing the buffer fails */
	rc[2] = deep_block(8);
	rc[3] = deep_block(0);			/* the old buffer remains */
	rc[4] = ts.ts_allocs;
}

static void test_nomem(void)
{
	int rc[5] = { 1, 1, 1, 1, 0 };

	tsched_init(&ts);
	tsched_spawn(&ts, nomem, rc);
	tsched_run(&ts);
	ok(rc[0] == -ENOMEM, "s_alloc failing: ustack_block returns -ENOMEM");
	ok(rc[1] == 0, "the thread went on and blocked fine afterwards");
	ok(rc[2] == -ENOMEM, "failing to grow the buffer: -ENOMEM");
	ok(rc[3] == 0 && rc[4] == 1, "the old buffer was kept and reused");
	ok(ts.ts_bytes == 0, "nothing leaked");
}

static void too_big(void *arg)
{
	int *rc = arg;

	rc[0] = deep_block(8);		/* about 9 KiB > 4 KiB */
	rc[1] = deep_block(0);
}

static void test_limit(void)
{
	int rc[2] = { 1, 1 };

	tsched_init(&ts);
	ts.ts_s.s_stack_max = 4096;
	tsched_spawn(&ts, too_big, rc);
	tsched_run(&ts);
	ok(rc[0] == -E2BIG, "stack over s_stack_max: -E2BIG");
	ok(rc[1] == 0, "a small stack still blocks fine (%d)", rc[1]);
	ok(ts.ts_bytes == 0, "nothing leaked");
}

/* A thread that blocks once: what it kept, and what the block returned. */
static int once_used, once_rc;

static void block_once_measured(void *arg)
{
	(void)arg;
	once_rc = tsched_yield();
	once_used = tsched_self()->t_s.t_u.u_used;
}

static int block_once_under(int stack_max)
{
	tsched_init(&ts);
	ts.ts_s.s_stack_max = stack_max;
	once_rc = 1;
	tsched_spawn(&ts, block_once_measured, NULL);
	tsched_run(&ts);
	return once_rc;
}

/* s_stack_max is the most a thread may keep: exactly that much blocks. */
static void test_exact_limit(void)
{
	int used, exact, under;

	require(block_once_under(0) == 0);
	used = once_used;
	exact = block_once_under(used);
	under = block_once_under(used - 1);
	ok(used > 0 && exact == 0 && under == -E2BIG, "a thread keeping %d "
	   "bytes blocks with s_stack_max %d (got %d), not with one byte less "
	   "(got %d)", used, used, exact, under);
	ok(ts.ts_bytes == 0, "nothing leaked");
}

/* The README's 1 MiB, not the header's macro, which a change would move. */
enum { MIB = 1 << 20 };

static __attribute__((noinline)) int block_big(void)
{
	volatile char big[MIB + 1];
	int rc;

	fill_bytes(big, sizeof big, 1);
	rc = tsched_yield();
	return bytes_intact(big, sizeof big, 1) ? rc : TAP_DEEP_BAD;
}

static void over_default(void *arg)
{
	int *rc = arg;

	rc[0] = block_big();
	rc[1] = deep_block(0);
}

static void test_default_limit(void)
{
	int rc[2] = { 1, 1 };

	tsched_init(&ts);
	tsched_spawn(&ts, over_default, rc);
	tsched_run(&ts);
	ok(rc[0] == -E2BIG, "over the default limit, 1 MiB: -E2BIG");
	ok(rc[1] == 0, "and the thread goes on");
}

/*
 * Near INT_MAX, growing a buffer by half overflows an int, and rounding
 * the size to 16 passes INT_MAX: the block must fail with -E2BIG before
 * s_alloc. A thread is given a buffer said to hold len bytes (never
 * touched), with s_stack_max INT_MAX, and blocks from a signal handler on
 * an alternate stack FAR bytes below, so that its buffer must grow. It
 * runs on a native thread whose stack tops a reservation of more than FAR
 * bytes, so that the range down there is always the test's own.
 */
enum { FAR = 1600000000, FAR_ALT = 64 << 10, FAR_STACK = 256 << 10 };
static char far_buf[16];
static int far_rc, far_allocs;
static uintptr_t far_lo, far_hi;	/* the reservation */

static void *far_alloc(struct usched *s, int size)
{
	(void)s;
	(void)size;
	far_allocs++;
	return NULL;
}

static void far_free(struct usched *s, void *buf, int size)
{
	(void)s;
	(void)size;
	require(buf == far_buf);
}

static void far_block(int sig)
{
	(void)sig;
	far_rc = ustack_block();
}

/* On an alternate stack FAR bytes down, in the reservation. */
static void far_thread(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t at = ((uintptr_t)&page - FAR) & ~(uintptr_t)(page - 1);
	void *alt;
	stack_t ss = { .ss_size = FAR_ALT }, old_ss;
	struct sigaction sa = { .sa_handler = far_block,
				.sa_flags = SA_ONSTACK }, old_sa;

	(void)arg;
	require(at >= far_lo && at + FAR_ALT <= far_hi);
	alt = mmap((void *)at, FAR_ALT, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	require(alt == (void *)at);
	ss.ss_sp = alt;
	require(sigaltstack(&ss, &old_ss) == 0 &&
		sigaction(SIGUSR1, &sa, &old_sa) == 0);
	raise(SIGUSR1);
	require(sigaction(SIGUSR1, &old_sa, NULL) == 0 &&
		sigaltstack(&old_ss, NULL) == 0);
}

static void *far_main(void *len)
{
	tsched_init(&ts);
	ts.ts_s.s_alloc = far_alloc;
	ts.ts_s.s_free = far_free;
	ts.ts_s.s_stack_max = INT_MAX;
	tsched_spawn_buf(&ts, far_thread, NULL, far_buf, (int)(intptr_t)len);
	tsched_run(&ts);
	return NULL;
}

/* A thread with a len-byte buffer blocks FAR bytes down: far_rc. */
static void block_far(int len)
{
	size_t size = (size_t)FAR + FAR_STACK + (1 << 20);
	char *base = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			  MAP_NORESERVE, -1, 0);
	char *stack;
	pthread_attr_t attr;
	pthread_t th;

	require(base != MAP_FAILED);
	stack = base + size - FAR_STACK;
	require(mprotect(stack, FAR_STACK, PROT_READ | PROT_WRITE) == 0);
	far_lo = (uintptr_t)base;
	far_hi = (uintptr_t)stack;
	far_rc = 1;
	far_allocs = 0;
	require(pthread_attr_init(&attr) == 0 &&
		pthread_attr_setstack(&attr, stack, FAR_STACK) == 0 &&
		pthread_create(&th, &attr, far_main,
			       (void *)(intptr_t)len) == 0 &&
		pthread_join(th, NULL) == 0);
	pthread_attr_destroy(&attr);
	munmap(base, size);
}

static void test_near_int_max(void)
{
	/* 1.5 times this is INT_MAX - 7, rounded to 16 past INT_MAX */
	block_far(1431655760);
	ok(far_rc == -E2BIG && far_allocs == 0, "a buffer whose growth rounds "
	   "past INT_MAX: -E2BIG (got %d), no s_alloc (%d)", far_rc,
	   far_allocs);
	/* 1.5 times this overflows an int */
	block_far(1500000000);
	ok(far_rc == -E2BIG && far_allocs == 0, "one whose growth by half "
	   "overflows an int: -E2BIG (got %d), no s_alloc (%d)", far_rc,
	   far_allocs);
}

static void waiter(void *arg)
{
	int *rc = arg;

	ts.ts_fail_in = 1;
	*rc = tsched_wait();
}

static void test_wait_fails(void)
{
	int rc = 1;

	tsched_init(&ts);
	tsched_spawn(&ts, waiter, &rc);
	tsched_run(&ts);
	ok(rc == -ENOMEM && ts.ts_done == 1,
	   "a failed wait returns the error and the thread finishes");
}

/*
 * The schedulers' processors run their threads on their own native stacks:
 * a small default (ulimit -s, here pthread_setattr_default_np) must not
 * turn a stack the limit allows into a crash, nor hide -E2BIG.
 */
enum { SMALL_DEFAULT = 256 << 10 };
static const struct sched_ops *ops;
static void *deep_thread;

static void deep_waiter(void *arg)
{
	int *rc = arg;

	rc[0] = tap_deep(600, ops->so_wait);	/* ~600 KiB: saved */
	rc[1] = tap_deep(1100, ops->so_wait);	/* over 1 MiB: -E2BIG */
}

static void deep_waker(void *arg)
{
	int *rc = arg;

	rc[2] = ops->so_wake(deep_thread);	/* it blocked: one processor */
}

static int small_stack_child(void)
{
	pthread_attr_t attr;
	int rc[3] = { 1, 1, 1 };

	if (pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setstacksize(&attr, SMALL_DEFAULT) != 0 ||
	    pthread_setattr_default_np(&attr) != 0 ||
	    ops->so_init(1, 1) != 0 ||
	    (deep_thread = ops->so_spawn(deep_waiter, rc, 0)) == NULL ||
	    ops->so_spawn(deep_waker, rc, 0) == NULL || ops->so_fini() != 0)
		return 2;
	return rc[0] == 0 && rc[1] == -E2BIG && rc[2] == 0 ? 0 : 1;
}

static void test_small_native_stack(const char *name)
{
	pid_t pid;
	int status;

	ops = sched_find(name);
	require(ops != NULL);
	pid = tap_fork();
	if (pid == 0) {
		alarm(30);
		_exit(small_stack_child());
	}
	status = tap_wait(pid);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "%s: with a %d KiB default native stack, a thread blocks at 600 "
	   "KiB, and gets -E2BIG over 1 MiB (status %#x)", name,
	   SMALL_DEFAULT >> 10, status);
}

int main(void)
{
	test_nomem();
	test_limit();
	test_exact_limit();
	test_default_limit();
	test_near_int_max();
	test_wait_fails();
	test_small_native_stack("rr");
	test_small_native_stack("ll");
	return tap_done();
}
