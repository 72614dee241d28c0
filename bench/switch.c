/*
 * switch: nanoseconds per usched switch against the size of the saved
 * stack. A cycle of threads (two by default) hand control on, each to the
 * next; each keeps `extra` bytes live in its frame, so every switch copies
 * the stack out and back in. With many threads the copies come from
 * farther caches, as in a ring of as many. With -s STRIDE they take their
 * turns as a ring of THREADS / STRIDE cycles of STRIDE threads does (thread
 * j of every cycle, then thread j + 1), over buffers handed out first, in
 * address order, as that ring's are: the hardware prefetchers follow a
 * cycle through memory in address order, not in that one. With -f the
 * threads share the floating-point control state (s_share_fpctl), which a
 * switch then neither saves nor restores. With --floor it times the same
 * copies with no usched at all (floor.c): what a switch by stack copying
 * costs at the least on this machine. With -v it prints on stderr which
 * threads take the first turns of each cycle timed. USCHED_BENCH_FAULT=stack,
 * to test the checks, has a byte of one thread's stack change, or the
 * floor's copies come 16 bytes short.
 *
 * usage: switch [-n ROUNDS] [-t THREADS] [-s STRIDE] [-f] [-v] [--floor]
 *               [EXTRA_BYTES...]
 */
#include "../usched.h"
#include "args.h"
#include "common.h"
#include "floor.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

enum { TURNS_SHOWN = 16 };	/* -v: the first turns of a cycle */

struct cycle {
	struct usched  c_s;
	struct ustack *c_u;		/* c_n threads */
	struct ustack *c_next;
	uint64_t       c_rounds;
	size_t         c_extra;
	int            c_n;
	int            c_stride;	/* turns go c_stride threads on */
	int            c_allocs;	/* buffers usched asked for */
	int            c_asked;		/* the largest of them */
	int            c_error;	/* a block's -errno; 1: a stack changed */
	int            c_finished;
	int            c_spoil;		/* the fault: thread 0 changes a byte */
	int            c_turns;		/* first turns seen, to TURNS_SHOWN */
	int            c_turn[TURNS_SHOWN];	/* the threads that took them */
};

static struct ustack *cycle_next(struct usched *s)
{
	struct cycle *c = (struct cycle *)s;
	struct ustack *u = c->c_next;

	c->c_next = NULL;
	return u;
}

/*
 * The thread c_stride on from u, or past the last, the one after u's
 * first: thread j of every ring cycle, then thread j + 1. Out of line, so
 * that the thread's frame, which every switch copies, keeps only what its
 * loop needs. Called in u's first turn, which it notes for -v.
 */
static __attribute__((noinline)) struct ustack *cycle_after(struct cycle *c,
							    struct ustack *u)
{
	int k = (int)(u - c->c_u), stride = c->c_stride;

	if (c->c_turns < TURNS_SHOWN)
		c->c_turn[c->c_turns++] = k;
	if (k + stride < c->c_n)
		return u + stride;
	return c->c_u + (k % stride + 1) % stride;
}

/* s_alloc: the sizes tell what to hand out, the count that none grew. */
static void *cycle_alloc(struct usched *s, int size)
{
	struct cycle *c = (struct cycle *)s;

	c->c_allocs++;
	if (size > c->c_asked)
		c->c_asked = size;
	return bench_alloc(s, size);
}

static __attribute__((noinline)) void cycle_end(struct cycle *c,
						struct ustack *next)
{
	if (++c->c_finished < c->c_n)	/* the next one has yet to end */
		c->c_next = next;
}

static void cycle_thread(void *arg)
{
	struct cycle *c = arg;
	struct ustack *other = cycle_after(c, ustack_self());
	char pad[c->c_extra + 1];

	memset(pad, 0x5a, sizeof pad);
	if (c->c_spoil && ustack_self() == c->c_u)
		pad[c->c_extra] ^= 1;	/* as a stack not kept whole would */
	for (uint64_t i = 0; i < c->c_rounds; i++) {
		int rc;

		c->c_next = other;
		if ((rc = ustack_block()) != 0)
			c->c_error = rc;
	}
	cycle_end(c, other);
	if (pad[c->c_extra] != 0x5a)
		c->c_error = 1;
}

static int share_fpctl;	/* -f */
static int floor_only;	/* --floor */
static int verbose;	/* -v */
static int fault;	/* USCHED_BENCH_FAULT=stack */
static const char *prog = "switch";	/* argv[0], for messages */

static __attribute__((noreturn, format(printf, 1, 2)))
void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * Times a cycle; sets *used and *asked, the largest buffer usched asked
 * for. With buf > 0 each thread starts with a buffer of buf bytes, handed
 * out in address order, and none may have to grow: the order would be
 * lost. With show, prints the cycle's first turns (-v).
 */
static double ns_per_switch(int threads, int stride, uint64_t rounds,
			    size_t extra, int buf, int show, int *used,
			    int *asked)
{
	struct cycle c = {
		.c_s = { .s_next = cycle_next, .s_alloc = cycle_alloc,
			 .s_free = bench_free, .s_share_fpctl = share_fpctl },
		.c_u = calloc(threads, sizeof(struct ustack)),
		.c_rounds = rounds,
		.c_extra = extra,
		.c_n = threads,
		.c_stride = stride,
		/* --floor: the copies */
		.c_spoil = fault && !floor_only,
	};
	double secs;

	if (c.c_u == NULL)
		fail("no memory for %d threads", threads);
	for (int i = 0; i < threads; i++) {
		void *stack = NULL;

		if (buf > 0 && (stack = bench_alloc(&c.c_s, buf)) == NULL)
			fail("no memory for %d threads' stacks", threads);
		ustack_init(&c.c_u[i], &c.c_s, cycle_thread, &c, stack, buf);
	}
	c.c_next = &c.c_u[0];
	secs = bench_seconds();
	usched_run(&c.c_s);
	secs = bench_seconds() - secs;
	if (c.c_error < 0)
		fail("a block failed: %s", strerror(-c.c_error));
	if (c.c_error > 0)
		fail("a thread's stack changed across its blocks");
	if (c.c_finished != threads)
		fail("%d of %d threads did not finish",
		     threads - c.c_finished, threads);
	if (buf > 0 && c.c_allocs > 0)
		fail("a thread outgrew its first buffer of %d B", buf);
	if (show) {
		fprintf(stderr, "first turns, by thread in address order:");
		for (int k = 0; k < c.c_turns; k++)
			fprintf(stderr, " %d", c.c_turn[k]);
		fprintf(stderr, "%s\n", threads > c.c_turns ? " ..." : "");
	}
	*used = c.c_s.s_max_used;
	*asked = c.c_asked;
	free(c.c_u);
	return secs * 1e9 / ((double)threads * rounds);
}

static const char usage[] =
	"[-n ROUNDS] [-t THREADS] [-s STRIDE] [-f] [-v] [--floor] "
	"[EXTRA_BYTES...]\n"
	"  -n ROUNDS    hand-overs per thread and size (default 10000000)\n"
	"  -t THREADS   threads in the cycle (default 2)\n"
	"  -s STRIDE    each hands on to the one STRIDE buffers on, as a ring\n"
	"               of THREADS/STRIDE cycles does (default 1: the next)\n"
	"  -f           threads share the FP control state (s_share_fpctl)\n"
	"  -v           prints each cycle's first 16 turns on stderr\n"
	"  --floor      no usched: only save the registers, copy as many bytes\n"
	"               out and other bytes in with memcpy, restore (no -t, -s)\n"
	"  EXTRA_BYTES  extra live stack per thread (default: 0 to 8192)\n"
	"Prints the saved stack size and nanoseconds per switch.\n";

/*
 * The threads run on this native stack: a thread with extra bytes that do
 * not fit under ulimit -s would die of SIGSEGV. Slack: the frames of main,
 * usched and printf.
 */
enum { STACK_SLACK = 64 << 10 };

static void check_stack(uint64_t extra)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    extra + STACK_SLACK > rl.rlim_cur)
		fail("EXTRA_BYTES %llu needs more stack than ulimit -s allows "
		     "(%llu KiB)", (unsigned long long)extra,
		     (unsigned long long)rl.rlim_cur >> 10);
}

/* Every size is checked before the first is timed. */
static void run_sizes(const char *const *sizes, int nsizes, int threads,
		      int stride, uint64_t rounds)
{
	uint64_t extra[nsizes], most = 0;
	int used;

	for (int k = 0; k < nsizes; k++) {
		extra[k] = arg_u64(prog, usage, "EXTRA_BYTES", sizes[k], 0,
				   USCHED_STACK_MAX_DEFAULT / 2);
		if (extra[k] > most)
			most = extra[k];
	}
	/* thread, saved frames and context, the extra bytes */
	check_memory(prog, (double)threads * (sizeof(struct ustack) + 256 +
					     most));
	check_stack(most);
	printf("%10s %10s\n", "saved B", "ns/switch");
	for (int k = 0; k < nsizes; k++) {
		double ns;
		int asked;

		/* what a thread saves, and the buffer usched gives it */
		ns_per_switch(2, 1, 1, extra[k], 0, 0, &used, &asked);
		if (floor_only)
			ns = floor_ns(rounds, used, share_fpctl, fault);
		else	/* in the order of their first turns, unless -s */
			ns = ns_per_switch(threads, stride, rounds, extra[k],
					   stride > 1 ? asked : 0, verbose,
					   &used, &asked);
		printf("%10d %10.2f\n", used, ns);
	}
}

/*
 * The options before EXTRA_BYTES: -f, --floor and -v into their flags,
 * -n, -t and -s into *rounds, *threads and *stride, each checked against
 * the others; exits 2 on bad ones. Returns the index of the first size.
 */
static int switch_options(int argc, char **argv, uint64_t *rounds,
			  uint64_t *threads, uint64_t *stride)
{
	const char *cycle_option = NULL;	/* -t or -s, if given */
	int i = 1;

	for (; i < argc && (strcmp(argv[i], "-f") == 0 ||
			    strcmp(argv[i], "--floor") == 0 ||
			    strcmp(argv[i], "-v") == 0 ||
			    strcmp(argv[i], "-n") == 0 ||
			    strcmp(argv[i], "-t") == 0 ||
			    strcmp(argv[i], "-s") == 0); i++) {
		if (argv[i][1] == 'f') {
			share_fpctl = 1;
			continue;
		}
		if (argv[i][1] == '-') {
			floor_only = 1;
			continue;
		}
		if (argv[i][1] == 'v') {
			verbose = 1;
			continue;
		}
		if (i + 1 == argc)
			usage_fail(prog, usage, "%s needs a value", argv[i]);
		if (argv[i][1] == 'n') {
			*rounds = arg_u64(prog, usage, "ROUNDS", argv[++i],
					  1, BENCH_MAX_COUNT);
			continue;
		}
		cycle_option = argv[i];
		if (argv[i][1] == 't')
			*threads = arg_u64(prog, usage, "THREADS", argv[++i],
					   1, 1 << 24);
		else
			*stride = arg_u64(prog, usage, "STRIDE", argv[++i],
					  1, 1 << 24);
	}
	if (floor_only && verbose)
		usage_fail(prog, usage, "--floor runs no threads: -v means "
			   "nothing with it");
	if (floor_only && cycle_option != NULL)
		usage_fail(prog, usage, "--floor runs no threads: %s means "
			   "nothing with it", cycle_option);
	if (*threads % *stride != 0)
		usage_fail(prog, usage, "STRIDE %llu does not divide THREADS "
			   "%llu into cycles", (unsigned long long)*stride,
			   (unsigned long long)*threads);
	return i;
}

int main(int argc, char **argv)
{
	static const char *const dflt[] = { "0", "64", "256", "1024", "2048",
					    "4096", "8192" };
	const char *const *sizes = dflt;
	int nsizes = sizeof dflt / sizeof dflt[0], i;
	uint64_t rounds = 10000000, threads = 2, stride = 1;

	prog = argv[0];
	help_if_asked(argc, argv, usage);
	i = switch_options(argc, argv, &rounds, &threads, &stride);
	if (i < argc) {
		if (bench_is_option(argv[i]))
			usage_fail(prog, usage, "unknown option '%s'",
				   arg_shown(argv[i]));
		sizes = (const char *const *)argv + i;
		nsizes = argc - i;
	}
	fault = bench_fault(prog, usage, "stack");
	run_sizes(sizes, nsizes, (int)threads, (int)stride, rounds);
	return bench_output_status(prog);
}
