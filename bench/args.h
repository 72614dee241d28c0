/*
 * Strict command-line parsing shared by the usched benchmarks and the C
 * and C++ peers, plus a memory check to refuse runs that cannot fit, and a
 * clock.
 *
 * Every ring peer takes "N R M D P"; see ring_args_parse().  Any malformed
 * or out-of-range argument prints a usage message on stderr and exits with
 * status 2, so a driver script can tell bad arguments (2) from a failed run
 * (1).
 */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Upper bounds that keep every derived size well inside size_t. */
#define RING_MAX_D	(UINT64_C(1) << 30)	/* live stack bytes a thread */
#define RING_MAX_P	UINT64_C(1024)		/* native threads of a pool */
#define RING_MAX_THREADS UINT64_C(0xffffffff)	/* N * R: fits 32-bit indices */
/* Repetitions of a microbenchmark: hours at a few ns each. */
#define BENCH_MAX_COUNT	(UINT64_C(1) << 40)

/* ring_args_parse() flags: what this peer does with D and P. */
#define RING_STACKLESS	0x1	/* D must be 0: no frame survives a block */
#define RING_SINGLE	0x2	/* P must be 1: single-threaded scheduler */
#define RING_P_CPUS	0x4	/* P counts CPUs: one native thread a member */

struct ring_args {
	uint64_t ra_n;		/* threads per cycle, >= 2 */
	uint64_t ra_r;		/* cycles, >= 1 */
	uint64_t ra_m;		/* rounds, >= 1 */
	uint64_t ra_d;		/* live stack bytes per thread */
	uint64_t ra_p;		/* native threads */
	uint64_t ra_threads;	/* n * r */
	uint64_t ra_msgs;	/* n * r * m */
	int	 ra_fault;	/* USCHED_RING_FAULT, to test the checks */
};

/* USCHED_RING_FAULT's faults, which the ring's checks must catch. */
enum {
	RING_FAULT_NONE,
	RING_FAULT_SPURIOUS,	/* "spurious": thread 0 gets a token nobody
				 * handed it (a spurious wake-up): it waits
				 * first for the token it sends in round 0 */
	RING_FAULT_PAD,		/* "pad": the first thread of each cycle
				 * changes a byte of its D bytes before its
				 * rounds (as a stack not kept would) */
};

/* skynet's LEAVES: 0 if s is a power of 10 up to 10^9 (the sum of the
 * leaves then fits in 64 bits), else -1. */
int parse_leaves(const char *s, uint64_t *out);
/* Seconds on the monotonic clock, for differences. */
double bench_seconds(void);

/* Bytes of a bad argument or variable a message shows. */
#define SHOWN_BYTES	64
/* The first SHOWN_BYTES of @s for a message, and "..." after them if @s is
 * longer: a newline as \n, any other control character as \xHH, so that
 * the message stays on one line and nothing in it drives the terminal. In
 * a static buffer, which the next call overwrites. */
const char *arg_shown(const char *s);
/* The exit status once the result went to stdout: 0, or 1 with a message
 * if it could not be written (a full disk, a closed stdout), which would
 * otherwise leave a driver script an empty result and a success. */
int bench_output_status(const char *prog);
/* If any argument is -h or --help, whatever the others are: print "usage:
 * PROG USAGE" on stdout, then exit(0) (1 if it could not be written). */
void help_if_asked(int argc, char **argv, const char *usage);
/* Print "PROG: WHY" and "usage: PROG USAGE" on stderr, then exit(2). */
void usage_fail(const char *prog, const char *usage, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
/*
 * USCHED_BENCH_FAULT, for the tests of a benchmark's self-check: 1 if it
 * is @fault, the one fault this program injects to make its check fail; 0
 * if unset or empty; anything else is a usage_fail().
 */
int bench_fault(const char *prog, const char *usage, const char *fault);
/* The number @s, from @min to @max; else usage_fail() naming it @what
 * (and showing @s, arg_shown()). */
uint64_t arg_u64(const char *prog, const char *usage, const char *what,
		 const char *s, uint64_t min, uint64_t max);

/* Why ring_args_read() refused the arguments. */
struct ring_why {
	char w_text[384];	/* with an arg_shown() value */
};

/* The most N*R threads and D bytes a program takes, below RING_MAX_THREADS
 * and RING_MAX_D (which bigger ones do not raise): refused with its own. */
struct ring_limits {
	uint64_t rl_threads;
	uint64_t rl_d;
};

/* Parse argv = PROG N R M D P, and USCHED_RING_FAULT (unset, empty,
 * "spurious" or, with D > 0, "pad"), into @a, within @lim (NULL: the
 * RING_MAX_ ones): 0, or -1 with the reason in @why, for a program that
 * prints its own usage. */
int ring_args_read(struct ring_args *a, int argc, char **argv,
		   unsigned flags, const struct ring_limits *lim,
		   struct ring_why *why);
/* Parse argv = PROG N R M D P into @a, or exit(2) with a usage message
 * (exit(0) with it on stdout for -h or --help among the arguments). */
void ring_args_parse(struct ring_args *a, int argc, char **argv,
		     unsigned flags);

/* Exit(1) with a message if about @need bytes are more than the memory
 * available now (MemAvailable): with overcommit a big run would otherwise
 * end in the OOM killer rather than in a clean allocation failure. */
void check_memory(const char *prog, double need);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_ARGS_H */
