/*
 * The concurrent prime sieve on a usched scheduler. A generator thread
 * sends 2, 3, 4, ... down a chain of filter threads. The first number a
 * filter gets is a prime: it prints it, starts the next filter, and passes
 * on only the numbers its prime does not divide. Each prime thus gets a
 * thread of its own, blocked most of the time.
 *
 * Threads talk through one-slot channels built on wait and wake, which is
 * all a scheduler offers. Three rules make that safe:
 *  - A wake that comes before the wait is kept (a counting permit), so none
 *    is lost. But a thread has one count for all its wakes: a wait may
 *    return for a wake meant for its other channel. So every wait sits in
 *    a loop on its condition.
 *  - A wake may find its thread finished: -ESRCH, nothing to do. Once a new
 *    thread reuses the struct, the handle names that one, which takes the
 *    wake as one more turn of its loop.
 *  - Channels live on the heap: a blocked thread's locals are not at their
 *    addresses while it is blocked (another thread's stack is).
 *
 * usage: sieve [--sched rr|ll] [-p PROCS] LIMIT
 * prints the primes below LIMIT (2 to 10^6), one a line; with ll, filter k
 * runs on processor k % PROCS. -h or --help, anywhere, prints the usage.
 * Bad input exits 2. The work grows with the square of the number of
 * primes: 10^5 takes seconds on one processor. More make it slower: every
 * hand-off then goes to another processor.
 */
#include "sched/sched.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A one-slot channel from one thread to another. 0 ends the stream. */
struct chan {
	unsigned long c_val;
	int           c_full;	/* atomic */
	void         *c_to;	/* the receiver's handle */
	void         *c_from;	/* the sender's */
	unsigned long c_nr;	/* the receiver is the c_nr-th filter */
};

static const struct sched_ops *ops;
static int procs = 1;

static void die(const char *what, int err)
{
	fprintf(stderr, "sieve: %s: %s\n", what, strerror(err));
	exit(1);
}

static void wait_turn(void)
{
	int rc = ops->so_wait();

	if (rc != 0)
		die("wait", -rc);
}

static void wake(void *t)
{
	int rc = ops->so_wake(t);

	if (rc != 0 && rc != -ESRCH)	/* -ESRCH: t has finished */
		die("wake", -rc);
}

static void send(struct chan *c, unsigned long v)
{
	void *to = c->c_to;	/* after the end, the receiver frees c */

	while (__atomic_load_n(&c->c_full, __ATOMIC_ACQUIRE))
		wait_turn();
	c->c_val = v;
	__atomic_store_n(&c->c_full, 1, __ATOMIC_RELEASE);
	wake(to);
}

/* The next number; at the end (0), c is freed. */
static unsigned long receive(struct chan *c)
{
	unsigned long v;

	while (!__atomic_load_n(&c->c_full, __ATOMIC_ACQUIRE))
		wait_turn();
	v = c->c_val;
	if (v == 0) {		/* the sender waits for no room after it */
		free(c);
		return 0;
	}
	__atomic_store_n(&c->c_full, 0, __ATOMIC_RELEASE);
	wake(c->c_from);
	return v;
}

static void filter(void *arg);

/* A channel from the calling thread to a new filter, the nr-th. */
static struct chan *start_filter(unsigned long nr)
{
	struct chan *c = calloc(1, sizeof *c);

	if (c == NULL)
		die("channel", ENOMEM);
	c->c_from = ops->so_self();
	c->c_nr = nr;
	/* The filter reads only c_nr and c_full until it is sent something. */
	c->c_to = ops->so_spawn(filter, c, (int)(nr % (unsigned long)procs));
	if (c->c_to == NULL)
		die("spawn", errno);
	return c;
}

static void filter(void *arg)
{
	struct chan *in = arg, *out = NULL;
	unsigned long nr = in->c_nr, p = receive(in), v;

	if (p == 0)
		return;
	/* Filter nr + 1 starts after this: the primes come out in order. */
	printf("%lu\n", p);
	while ((v = receive(in)) != 0) {
		if (v % p == 0)
			continue;
		if (out == NULL)
			out = start_filter(nr + 1);
		send(out, v);
	}
	if (out != NULL)
		send(out, 0);
}

static unsigned long limit;

static void generate(void *arg)
{
	struct chan *out = start_filter(0);

	(void)arg;
	for (unsigned long n = 2; n < limit; n++)
		send(out, n);
	send(out, 0);
}

static const char usage_line[] =
	"usage: sieve [--sched rr|ll] [-p PROCS] LIMIT\n";

static void usage(const char *why, const char *arg)
{
	fprintf(stderr, "sieve: %s '", why);
	/* a control character as \xHH: one line, nothing for the terminal */
	for (; *arg != 0; arg++)
		fprintf(stderr, iscntrl((unsigned char)*arg) ? "\\x%02x" : "%c",
			(unsigned char)*arg);
	fprintf(stderr, "'\n%s", usage_line);
	exit(2);
}

/* 0 if stdout took all of what was sent to it, else 1, saying so. */
static int written(const char *what)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	fprintf(stderr, "sieve: cannot write %s to stdout\n", what);
	return 1;
}

/* s as a number from min to max, else usage(why). */
static unsigned long number(const char *s, unsigned long min,
			    unsigned long max, const char *why)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != 0 || errno != 0 || v < min ||
	    v > max)
		usage(why, s);
	return v;
}

int main(int argc, char **argv)
{
	const char *pin;
	int i, rc;

	for (i = 1; i < argc; i++) {	/* -h or --help, anywhere */
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			fputs(usage_line, stdout);
			return written("the usage");
		}
	}
	ops = sched_find("ll");
	/* "-5" is a LIMIT, and refused as one */
	for (i = 1; i < argc && argv[i][0] == '-' &&
		    (argv[i][1] < '0' || argv[i][1] > '9'); i += 2) {
		if (strcmp(argv[i], "-p") != 0 &&
		    strcmp(argv[i], "--sched") != 0)
			usage("unknown option", argv[i]);
		if (i + 1 == argc)
			usage("no value after", argv[i]);
		if (argv[i][1] == 'p')
			procs = (int)number(argv[i + 1], 1, 64,
					    "PROCS is from 1 to 64, not");
		else if ((ops = sched_find(argv[i + 1])) == NULL)
			usage("no such scheduler:", argv[i + 1]);
	}
	if (i == argc)
		usage("expected one LIMIT after the options, at", "");
	if (i + 1 != argc)	/* argv[i] is LIMIT: name what follows it */
		usage("unexpected argument after LIMIT:", argv[i + 1]);
	limit = number(argv[i], 2, 1000000,
		       "LIMIT is from 2 to 1000000, not");
	rc = ops->so_init(procs, 0);
	/* PROCS is in range: what init refuses is USCHED_PIN */
	if (rc == -EINVAL && (pin = getenv("USCHED_PIN")) != NULL)
		usage("USCHED_PIN must be 0 or 1 (or unset), not", pin);
	if (rc != 0)
		die("init", -rc);
	if (ops->so_spawn(generate, NULL, 0) == NULL)
		die("spawn", errno);
	if ((rc = ops->so_fini()) != 0)	/* starts them, waits for the end */
		die("fini", -rc);
	return written("the primes");
}
