/*
 * What the usched benchmarks share: the options --sched NAME, -v and -f,
 * and plain malloc-backed buffer call-backs for the bare dispatcher (the
 * clock and the argument parsers are in args.h).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include "../sched/sched.h"
#include "../usched.h"

/* Options without a value that a program may accept. */
enum {
	BENCH_VERBOSE     = 1,	/* -v */
	BENCH_SHARE_FPCTL = 2,	/* -f: threads share the FP control state */
};

/*
 * Parses the options before the first positional argument (negative
 * numbers count as positional, so that they are rejected as such). Sets
 * *ops (default: the scheduler called dflt; "none" gives NULL where
 * allow_none) and in *flags those of the options in accept that are
 * given. Returns the index of the first positional argument; bad options,
 * and a USCHED_PIN other than 0 or 1, exit 2 with the usage message; -h
 * or --help anywhere in argv prints it on stdout and exits 0 first.
 */
int bench_options(int argc, char **argv, const char *usage, const char *dflt,
		  int allow_none, const struct sched_ops **ops,
		  unsigned accept, unsigned *flags);

/* An option, not an argument: "-x" or "--x", but not "-" or "-5". */
int bench_is_option(const char *arg);

/* -v: each processor's counters, a line each on stderr; their switches'
 * sum. */
unsigned long bench_print_procs(const struct sched_ops *ops);

/* s_alloc and s_free for a dispatcher that needs no more than malloc. */
void *bench_alloc(struct usched *s, int size);
void bench_free(struct usched *s, void *buf, int size);

#endif
