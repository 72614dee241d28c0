/* Options shared by the usched benchmarks: --sched NAME and -v. */
#ifndef BENCH_OPTIONS_H
#define BENCH_OPTIONS_H

#include "../sched/sched.h"

/*
 * Parses the options before the first positional argument (negative
 * numbers count as positional, so that they are rejected as such). Sets
 * *ops (default: the scheduler called dflt; "none" gives NULL where
 * allow_none) and *verbose (if not NULL). Returns the index of the first
 * positional argument; bad options exit 2 with the usage message.
 */
int bench_options(int argc, char **argv, const char *usage, const char *dflt,
		  int allow_none, const struct sched_ops **ops, int *verbose);

#endif
