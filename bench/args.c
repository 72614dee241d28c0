/*
 * Strict command-line parsing, a memory check and a clock, shared by the
 * usched benchmarks and the C and C++ peers (see args.h).
 */
#define _POSIX_C_SOURCE 200809L	/* clock_gettime under -std=c11 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"

double bench_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Parse a plain unsigned decimal ("0".."18446744073709551615"): no sign,
 * no spaces, no base prefix.  Returns 0 on success, -1 otherwise. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	/* strtoull() would accept "-1", " 7" and "0x10": do it by hand. */
	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		unsigned int digit = (unsigned char)*s - '0';

		if (digit > 9 || v > (UINT64_MAX - digit) / 10)
			return -1;
		v = v * 10 + digit;
	}
	*out = v;
	return 0;
}

int parse_leaves(const char *s, uint64_t *out)
{
	uint64_t p = 1;

	if (parse_u64(s, out) != 0)
		return -1;
	while (p < *out && p < UINT64_C(1000000000))
		p *= 10;
	return p == *out ? 0 : -1;
}

const char *arg_shown(const char *s)
{
	static char buf[SHOWN_BYTES * 4 + sizeof("...")];
	char *p = buf;
	int k;

	for (k = 0; k < SHOWN_BYTES && s[k] != '\0'; k++) {
		unsigned char c = (unsigned char)s[k];

		if (c == '\n')
			p += sprintf(p, "\\n");
		else if (c < 0x20 || c == 0x7f)
			p += sprintf(p, "\\x%02x", c);
		else
			*p++ = (char)c;
	}
	if (s[k] != '\0')	/* cut: not the whole value */
		p += sprintf(p, "...");
	*p = '\0';
	return buf;
}

/* -h or --help is among the arguments, wherever it is (as in GNU's). */
static int help_asked(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

/* 0 if all that went to stdout was written, else the error. */
static int stdout_error(void)
{
	return fflush(stdout) != 0 ? errno : ferror(stdout) ? EIO : 0;
}

int bench_output_status(const char *prog)
{
	int err = stdout_error();

	if (err == 0)
		return 0;
	fprintf(stderr, "%s: cannot write the result to stdout: %s\n", prog,
		strerror(err));
	return 1;
}

/* Once the usage went to stdout: exit 0, or 1 if it could not be written. */
static __attribute__((noreturn)) void help_done(const char *prog)
{
	int err = stdout_error();

	if (err != 0)
		fprintf(stderr, "%s: cannot write the usage to stdout: %s\n",
			prog, strerror(err));
	exit(err != 0);
}

void help_if_asked(int argc, char **argv, const char *usage)
{
	if (!help_asked(argc, argv))
		return;
	printf("usage: %s %s", argv[0], usage);
	help_done(argv[0]);
}

void usage_fail(const char *prog, const char *usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %s %s", prog, usage);
	exit(2);
}

int bench_fault(const char *prog, const char *usage, const char *fault)
{
	const char *v = getenv("USCHED_BENCH_FAULT");

	if (v == NULL || *v == 0)
		return 0;
	if (strcmp(v, fault) != 0)
		usage_fail(prog, usage, "USCHED_BENCH_FAULT is '%s'; the "
			   "one fault here is '%s'", arg_shown(v), fault);
	return 1;
}

uint64_t arg_u64(const char *prog, const char *usage, const char *what,
		 const char *s, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_u64(s, &v) != 0 || v < min || v > max)
		usage_fail(prog, usage, "%s: not a number from %llu to %llu: "
			   "'%s'", what, (unsigned long long)min,
			   (unsigned long long)max, arg_shown(s));
	return v;
}

static const char ring_usage_head[] =
	"N R M D P\n"
	"  N  threads per cycle (>= 2)\n"
	"  R  number of cycles (>= 1)\n"
	"  M  rounds; in round i thread i % N of each cycle sends the token"
	" (>= 1)\n";

/* The usage text, which depends on what the peer allows for D and P. */
static void ring_usage(FILE *out, const char *prog, unsigned int flags)
{
	fprintf(out, "usage: %s ", prog);
	fputs(ring_usage_head, out);
	if (flags & RING_STACKLESS)
		fputs("  D  must be 0 (stackless coroutines keep no stack "
		      "frame while blocked)\n", out);
	else
		fprintf(out, "  D  extra stack bytes each thread keeps live "
			"(0..%llu)\n", (unsigned long long)RING_MAX_D);
	if (flags & RING_SINGLE)
		fputs("  P  native threads: must be 1 (single-threaded "
		      "scheduler)\n", out);
	else if (flags & RING_P_CPUS)
		fprintf(out, "  P  CPUs the threads run on (1..%llu): the first P this process may use\n"
			"     (all of them if fewer); one native thread per ring member\n",
			(unsigned long long)RING_MAX_P);
	else
		fprintf(out, "  P  native threads (1..%llu)\n",
			(unsigned long long)RING_MAX_P);
	fputs("Prints the elapsed seconds of the run, thread creation "
	      "included.\n", out);
}

/* Why a stackless peer refuses D > 0. */
static const char stackless_d[] =
	"D must be 0: stackless coroutines keep no stack frame while blocked";

/* Writes why an argument is bad to a ring_why; returns -1. */
static int ring_bad(struct ring_why *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int ring_bad(struct ring_why *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why->w_text, sizeof(why->w_text), fmt, ap);
	va_end(ap);
	return -1;
}

static int ring_fault_read(struct ring_args *a, unsigned int flags,
			   struct ring_why *why)
{
	const char *v = getenv("USCHED_RING_FAULT");

	if (v == NULL || *v == 0)
		a->ra_fault = RING_FAULT_NONE;
	else if (strcmp(v, "spurious") == 0)
		a->ra_fault = RING_FAULT_SPURIOUS;
	else if (strcmp(v, "pad") == 0 && a->ra_d > 0)
		a->ra_fault = RING_FAULT_PAD;
	else if (strcmp(v, "pad") == 0 && !(flags & RING_STACKLESS))
		return ring_bad(why, "USCHED_RING_FAULT=pad needs D > 0");
	else if (strcmp(v, "pad") == 0)	/* a D > 0 these refuse too */
		return ring_bad(why, "USCHED_RING_FAULT=pad needs D > 0, "
				"and %s", stackless_d);
	else
		return ring_bad(why, "USCHED_RING_FAULT is '%s'; the faults "
				"are 'spurious' and 'pad'", arg_shown(v));
	return 0;
}

int ring_args_read(struct ring_args *a, int argc, char **argv,
		   unsigned int flags, const struct ring_limits *lim,
		   struct ring_why *why)
{
	static const char *const names[] = { "N", "R", "M", "D", "P" };
	uint64_t v[5], max_threads = RING_MAX_THREADS, max_d = RING_MAX_D;
	int i;

	if (lim != NULL && lim->rl_threads < max_threads)
		max_threads = lim->rl_threads;
	if (lim != NULL && lim->rl_d < max_d)
		max_d = lim->rl_d;
	if (argc != 6)
		return ring_bad(why, "expected 5 arguments, got %d", argc - 1);
	for (i = 0; i < 5; i++) {
		if (parse_u64(argv[i + 1], &v[i]) != 0)
			return ring_bad(why, "%s: not an unsigned 64-bit "
					"decimal: '%s'", names[i],
					arg_shown(argv[i + 1]));
	}
	a->ra_n = v[0];
	a->ra_r = v[1];
	a->ra_m = v[2];
	a->ra_d = v[3];
	a->ra_p = v[4];

	if (a->ra_n < 2)
		return ring_bad(why, "N must be at least 2");
	if (a->ra_r < 1)
		return ring_bad(why, "R must be at least 1");
	if (a->ra_m < 1)
		return ring_bad(why, "M must be at least 1");
	if (a->ra_p < 1)
		return ring_bad(why, "P must be at least 1");
	if (a->ra_r > UINT64_MAX / a->ra_n)
		return ring_bad(why, "N*R overflows 64 bits");
	a->ra_threads = a->ra_n * a->ra_r;
	if (a->ra_m > UINT64_MAX / a->ra_threads)
		return ring_bad(why, "N*R*M overflows 64 bits");
	a->ra_msgs = a->ra_threads * a->ra_m;
	if (a->ra_threads > max_threads)
		return ring_bad(why, "N*R = %llu threads is more than %llu",
				(unsigned long long)a->ra_threads,
				(unsigned long long)max_threads);
	if ((flags & RING_STACKLESS) && a->ra_d != 0)
		return ring_bad(why, "%s", stackless_d);
	if (a->ra_d > max_d)
		return ring_bad(why, "D is more than %llu bytes",
				(unsigned long long)max_d);
	if ((flags & RING_SINGLE) && a->ra_p != 1)
		return ring_bad(why, "P must be 1: this peer is "
				"single-threaded");
	if (a->ra_p > RING_MAX_P)
		return ring_bad(why, "P is more than %llu",
				(unsigned long long)RING_MAX_P);
	return ring_fault_read(a, flags, why);
}

void ring_args_parse(struct ring_args *a, int argc, char **argv,
		     unsigned int flags)
{
	const char *prog = argc > 0 ? argv[0] : "ring";
	struct ring_why why;

	if (help_asked(argc, argv)) {
		ring_usage(stdout, prog, flags);
		help_done(prog);
	}
	if (ring_args_read(a, argc, argv, flags, NULL, &why) == 0)
		return;
	fprintf(stderr, "%s: %s\n", prog, why.w_text);
	ring_usage(stderr, prog, flags);
	exit(2);
}

void check_memory(const char *prog, double need)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kib;
	char line[128];

	if (f == NULL)
		return;		/* not Linux: let the allocator decide */
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "MemAvailable: %llu kB", &kib) != 1)
			continue;
		if (need > kib * 1024.0) {
			fprintf(stderr, "%s: needs about %.0f MiB of memory "
				"but only %llu MiB are available\n", prog,
				need / (1 << 20), kib >> 10);
			exit(1);
		}
		break;
	}
	fclose(f);
}
