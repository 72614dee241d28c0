/*
 * ring: the ping-pong ring over usched.
 *
 * R cycles of N threads pass a token M rounds: in round i, thread i % N of
 * every cycle sends it to its right neighbour, the others relay what they
 * get from the left, and the round ends when the token is back. Each thread
 * keeps D extra bytes live in its frame; P processors run the threads. The
 * cycles are split in P runs of neighbours, each one scheduling group, so
 * with ll a cycle lives on one processor and processors share no data.
 *
 * Token check: a thread counts the tokens handed to it by its left
 * neighbour (only that neighbour writes the count) and checks, after every
 * wait, that it has not been woken more often than that. A spurious
 * wake-up fails the run; a lost one would leave it hanging.
 * USCHED_RING_FAULT=spurious injects a spurious wake-up, to test the check;
 * USCHED_RING_FAULT=pad changes a byte of D, to test that of the stack.
 * With -f the threads share the floating-point control state, as the
 * C++20, Go and Rust peers' do: switches neither save nor restore it.
 *
 * usage: ring [--sched rr|ll] [-v] [-f] N R M D P
 * Prints the elapsed seconds (stdout); -v adds figures on stderr.
 */
#include "../ll.h"
#include "../rr.h"
#include "args.h"
#include "common.h"
#include "peers/ring-check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/*
 * make perf's placement sweep (scripts/perf.py): RING_SHIFT bytes of int3,
 * never run, in the cold section, which the linker puts before the hot
 * code, move every hot function of the ring and of the library on by as
 * much. A multiple of 16 keeps their alignment, so each moves by exactly
 * that.
 */
#ifdef RING_SHIFT
#if RING_SHIFT <= 0 || RING_SHIFT % 16
#error "RING_SHIFT must be a positive multiple of 16"
#endif
#define RING_STR(x)	#x
#define RING_XSTR(x)	RING_STR(x)
__asm__(".pushsection .text.unlikely\n"
	".skip " RING_XSTR(RING_SHIFT) ", 0xcc\n"
	".popsection");
#endif

static const char usage[] =
	"[--sched NAME] [-v] [-f] N R M D P\n"
	"  --sched NAME  scheduler: rr or ll (default ll)\n"
	"  -v            also print rates, counters and memory on stderr\n"
	"  -f            threads share the FP control state\n"
	"  N R M D P     threads per cycle, cycles, rounds, extra stack bytes,\n"
	"                native threads\n";

struct ring {
	const struct sched_ops *r_ops;
	void                  (*r_rounds)(uint64_t t);	/* r_ops's own */
	struct ring_args        r_args;
	void                  **r_thread;	/* by slot(), cycle by cycle */
	uint32_t               *r_handed;	/* tokens handed, per thread */
	uint64_t                r_bad;		/* failed token checks */
	uint64_t                r_errors;	/* failed waits and wakes */
	int                     r_first_error;	/* the first one's -errno */
	long                    r_rss_before;	/* KiB, before any thread's */
};

static struct ring ring;

static void count_error(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/*
 * A wait or wake returned rc (-errno): the run goes on, and fails. Out of
 * line: inlined into rounds(), it made every member save 16 bytes more.
 */
static __attribute__((noinline, cold)) void call_failed(int rc)
{
	int none = 0;

	count_error(&ring.r_errors);
	__atomic_compare_exchange_n(&ring.r_first_error, &none, rc, 0,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* D bytes the thread keeps live across every block. */
static void pad_write(volatile unsigned char *pad, size_t d, uint64_t i)
{
	for (size_t k = 0; k < d; k += 64)
		pad[k] = (unsigned char)(i + k);
	pad[d - 1] = (unsigned char)i;
}

static int pad_kept(volatile unsigned char *pad, size_t d, uint64_t i)
{
	for (size_t k = 0; k < d - 1; k += 64)
		if (pad[k] != (unsigned char)(i + k))
			return 0;
	return pad[d - 1] == (unsigned char)i;
}

/*
 * Where thread t's handle and count are: each group's handles and counts
 * begin a page after the last group's. A cache line apart is not enough:
 * a processor walking its counts in order has the hardware prefetch the
 * lines that follow, the next group's, which the other processor writes
 * (P=2 at R=100 was 15 % slower than two processes with half the cycles
 * each). Prefetchers stay within a page.
 */
enum { GROUP_GAP = 4096 / sizeof(uint32_t) };	/* a page of counts */

static int group_of(uint64_t t)
{
	const struct ring_args *a = &ring.r_args;

	return (int)(t / a->ra_n * a->ra_p / a->ra_r);
}

static uint64_t slot(uint64_t t)
{
	return t + (uint64_t)group_of(t) * GROUP_GAP;
}

/*
 * Hands the token to thread i, counted in its r_handed (ring-check.h's,
 * as the peers count theirs): only its left neighbour calls this.
 */
static inline __attribute__((always_inline))
void pass(uint64_t i, int (*wake)(void *))
{
	int rc;

	ring_count_handed(&ring.r_handed[i]);
	if ((rc = wake(ring.r_thread[i])) != 0)
		call_failed(rc);
}

/*
 * The M rounds of thread t. Only a few values live across a wait, so the
 * stack saved at each block stays small.
 */
static inline __attribute__((always_inline))
void rounds(uint64_t t, int (*wait)(void), int (*wake)(void *))
{
	uint64_t n = ring.r_args.ra_n, j = t % n, i = slot(t);
	uint64_t right = i - j + (j + 1) % n;
	/* rounds until this thread sends: no division */
	uint64_t turn = j;
	uint32_t *mine = &ring.r_handed[i];
	uint64_t got;
	int rc;

	for (got = 0; got < ring.r_args.ra_m; got++) {
		if (turn == 0)
			pass(right, wake);
		turn = turn == 0 ? ring.r_args.ra_n - 1 : turn - 1;
		if ((rc = wait()) != 0)
			call_failed(rc);
		else if (!ring_token_handed(mine, got + 1))
			count_error(&ring.r_bad);	/* woken, no token */
		if (turn != ring.r_args.ra_n - 1)	/* it did not send */
			pass(right, wake);
	}
}

/*
 * Each scheduler's rounds call its wait and wake directly, as a program
 * written for it does (and as the peers use their own primitives), not
 * through its function table: that costs ~10 % at small R.
 */
static int ll_wake_thread(void *t)
{
	return ll_wake(t);
}

static int rr_wake_thread(void *t)
{
	return rr_wake(t);
}

static __attribute__((noinline)) void rounds_ll(uint64_t t)
{
	rounds(t, ll_wait, ll_wake_thread);
}

static __attribute__((noinline)) void rounds_rr(uint64_t t)
{
	rounds(t, rr_wait, rr_wake_thread);
}

static const struct {
	const struct sched_ops *d_ops;
	void                  (*d_rounds)(uint64_t t);
} direct[] = {
	{ &ll_ops, rounds_ll },
	{ &rr_ops, rounds_rr },
};

/* The rounds for ops; NULL for a scheduler that has none here yet. */
static void (*rounds_of(const struct sched_ops *ops))(uint64_t)
{
	for (size_t k = 0; k < sizeof direct / sizeof direct[0]; k++)
		if (direct[k].d_ops == ops)
			return direct[k].d_rounds;
	return NULL;
}

static __attribute__((noinline)) void member_padded(uint64_t i)
{
	size_t d = ring.r_args.ra_d;
	volatile unsigned char pad[d];

	pad_write(pad, d, i);
	pad_fault(&ring.r_args, pad, i % ring.r_args.ra_n);
	ring.r_rounds(i);
	if (!pad_kept(pad, d, i))
		count_error(&ring.r_bad);
}

static void member(void *arg)
{
	if (ring.r_args.ra_d == 0)
		ring.r_rounds((uintptr_t)arg);
	else
		member_padded((uintptr_t)arg);
}

static double timeval_seconds(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

static void print_details(double secs)
{
	const struct ring_args *a = &ring.r_args;
	unsigned long switches;
	struct rusage ru;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "messages/s: %.0f (%llu messages)\n", a->ra_msgs / secs,
		(unsigned long long)a->ra_msgs);
	switches = bench_print_procs(ring.r_ops);
	/* of one CPU's time: P processors share at most all CPUs */
	fprintf(stderr, "switches: %lu (%.1f ns each)\n", switches,
		secs * 1e9 *
		(a->ra_p < (uint64_t)cpus ? a->ra_p : (uint64_t)cpus) /
		(switches ? switches : 1));
	/* the first figure is the goal's; the second, what the threads
	 * added, still says something with a few of them */
	fprintf(stderr, "peak RSS: %ld KiB, %.1f bytes per thread; %.1f a "
		"thread above the %ld KiB before allocating for them\n",
		ru.ru_maxrss,
		ru.ru_maxrss * 1024.0 / a->ra_threads,
		(ru.ru_maxrss - ring.r_rss_before) * 1024.0 / a->ra_threads,
		ring.r_rss_before);
	/* with many threads, system time is the kernel mapping fresh memory */
	fprintf(stderr, "CPU time: user %.2f s, system %.2f s\n",
		timeval_seconds(&ru.ru_utime), timeval_seconds(&ru.ru_stime));
}

/*
 * Writes every page of the n bytes at mem, so that they are mapped before
 * the clock starts, as the peers' members are. calloc's pages are the
 * shared zero page until written: the first pass() read one, then wrote
 * it, and the copy that write made flushed the other processors' TLBs, an
 * IPI each (P=2, M=1, 800 000 threads: 16 % of the run's samples).
 */
static void page_in(void *mem, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t off = 0; off < n; off += page)
		((volatile char *)mem)[off] = 0;
}

/*
 * Options, arguments and USCHED_RING_FAULT into ring, with the limits of
 * this program, and its handle and count arrays: exits 2 on bad ones,
 * before allocating, 1 if the run cannot fit. Returns the BENCH_* flags
 * given.
 */
static unsigned ring_setup(int argc, char **argv)
{
	/* The schedulers count threads in an int; D and the frames beside it
	 * stay within a thread's default stack limit. */
	static const struct ring_limits limits = {
		.rl_threads = INT32_MAX, .rl_d = USCHED_STACK_MAX_DEFAULT / 2
	};
	const char *prog = argv[0];
	struct ring_args *a = &ring.r_args;
	struct ring_why why;
	struct rusage ru;
	unsigned flags = 0;
	size_t slots;
	int i;

	i = bench_options(argc, argv, usage, "ll", 0, &ring.r_ops,
			  BENCH_VERBOSE | BENCH_SHARE_FPCTL, &flags);
	sched_set_share_fpctl(flags & BENCH_SHARE_FPCTL);
	ring.r_rounds = rounds_of(ring.r_ops);
	if (ring.r_rounds == NULL) {	/* sched_find knows one more */
		fprintf(stderr, "%s: internal error: no rounds for scheduler "
			"'%s'\n", prog, ring.r_ops->so_name);
		exit(1);
	}
	if (ring_args_read(a, argc - i + 1, argv + i - 1, 0, &limits,
			   &why) != 0)
		usage_fail(prog, usage, "%s", why.w_text);
	/* struct, stack copy, handle, count: ~200 bytes a thread, plus D */
	check_memory(prog, (double)a->ra_threads * (200 + a->ra_d));
	getrusage(RUSAGE_SELF, &ru);
	ring.r_rss_before = ru.ru_maxrss;
	/* before the clock starts, as the peers allocate their members */
	slots = a->ra_threads + a->ra_p * GROUP_GAP;
	ring.r_thread = malloc(slots * sizeof(void *));
	ring.r_handed = calloc(slots, sizeof(uint32_t));
	if (ring.r_thread == NULL || ring.r_handed == NULL) {
		fprintf(stderr, "%s: out of memory for %llu threads\n", prog,
			(unsigned long long)a->ra_threads);
		exit(1);
	}
	page_in(ring.r_thread, slots * sizeof(void *));
	page_in(ring.r_handed, slots * sizeof(uint32_t));
	return flags;
}

/* Sets up the scheduler and spawns every member: 0, or -1 with a message. */
static int ring_spawn(const char *prog)
{
	const struct ring_args *a = &ring.r_args;
	int rc = ring.r_ops->so_init(a->ra_p, a->ra_threads);

	if (rc != 0) {
		fprintf(stderr, "%s: cannot set up %llu threads on %llu "
			"processors: %s\n", prog,
			(unsigned long long)a->ra_threads,
			(unsigned long long)a->ra_p, strerror(-rc));
		return -1;
	}
	for (uint64_t t = 0; t < a->ra_threads; t++) {
		void *h = ring.r_ops->so_spawn(member, (void *)t, group_of(t));

		ring.r_thread[slot(t)] = h;
		if (h == NULL) {
			fprintf(stderr, "%s: out of memory at thread %llu\n",
				prog, (unsigned long long)t);
			return -1;
		}
	}
	return 0;
}

/* After the run: nonzero, with a message, if a call or a check failed. */
static int ring_failed(const char *prog)
{
	if (ring.r_errors != 0) {	/* token checks after it mean little */
		fprintf(stderr, "%s: %llu waits or wakes failed, the first "
			"with: %s\n", prog, (unsigned long long)ring.r_errors,
			strerror(-ring.r_first_error));
		return 1;
	}
	if (ring.r_bad != 0) {
		fprintf(stderr, "%s: token check failed: %llu times a thread "
			"was woken without a token or its stack changed\n",
			prog, (unsigned long long)ring.r_bad);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *prog = argv[0];
	const struct ring_args *a = &ring.r_args;
	int rc;
	unsigned flags = ring_setup(argc, argv);
	double secs = bench_seconds();

	if (ring_spawn(prog) != 0)
		return 1;
	if (a->ra_fault == RING_FAULT_SPURIOUS &&
	    (rc = ring.r_ops->so_wake(ring.r_thread[slot(0)])) != 0)
		call_failed(rc);
	if ((rc = ring.r_ops->so_start()) != 0 ||
	    (rc = ring.r_ops->so_fini()) != 0) {
		fprintf(stderr, "%s: cannot run the processors: %s\n", prog,
			strerror(-rc));
		return 1;
	}
	secs = bench_seconds() - secs;
	if (ring_failed(prog))
		return 1;
	printf("%.6f\n", secs);
	if (flags & BENCH_VERBOSE)
		print_details(secs);
	free(ring.r_thread);
	free(ring.r_handed);
	return bench_output_status(prog);
}
