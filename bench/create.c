/*
 * create: nanoseconds to create, run and destroy a thread that returns at
 * once. Through a scheduler (default ll, on one processor), a thread
 * spawns children in batches and waits for each batch, timed from its
 * start to its last wait's end: the scheduler's init, start and fini (its
 * native thread's start and join, ~0.45 ms) are not the threads' cost,
 * and the peers' loops do not pay them either. With --sched none, the bare
 * dispatcher runs one ustack after another. Every thread must have run:
 * USCHED_BENCH_FAULT=lost, to test that check, makes one too few.
 *
 * usage: create [--sched rr|ll|none] COUNT
 */
#include "../usched.h"
#include "args.h"
#include "common.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { BATCH = 1024 };

static const char usage[] =
	"[--sched rr|ll|none] COUNT\n"
	"  COUNT  threads to create, run and destroy (>= 1)\n"
	"Prints nanoseconds per thread.\n";

static const struct sched_ops *ops;
static uint64_t count;		/* threads that must run */
static uint64_t to_make;	/* count, or one too few: the fault */
static uint64_t ran;
static uint64_t pending;	/* children of this batch still running */
static void *parent;
static int errors;
static int first_error;		/* errno of the first, for its message */
static double spawn_secs;	/* the spawner's time */

static void count_error(int err)
{
	if (errors++ == 0)
		first_error = err;
}

static void child(void *arg)
{
	int rc;

	(void)arg;
	ran++;
	if (--pending == 0 && (rc = ops->so_wake(parent)) != 0)
		count_error(-rc);
}

static void spawn_all(void)
{
	uint64_t batch;
	int rc;

	for (uint64_t done = 0; done < to_make; done += batch) {
		batch = to_make - done < BATCH ? to_make - done : BATCH;
		pending = batch;
		for (uint64_t k = batch; k > 0; k--) {
			if (ops->so_spawn(child, NULL, 0) == NULL) {
				count_error(errno);
				return;
			}
		}
		if ((rc = ops->so_wait()) != 0) {
			count_error(-rc);
			return;
		}
	}
}

static void spawner(void *arg)
{
	(void)arg;
	parent = ops->so_self();
	spawn_secs = bench_seconds();
	spawn_all();
	spawn_secs = bench_seconds() - spawn_secs;
}

/* 0, or why the scheduler could not run the spawner. */
static int run_scheduled(void)
{
	int rc = ops->so_init(1, BATCH + 1);

	if (rc == 0 && ops->so_spawn(spawner, NULL, 0) == NULL)
		rc = -errno;
	if (rc == 0)
		rc = ops->so_start();
	if (rc == 0)
		rc = ops->so_fini();
	return rc;
}

/* The bare dispatcher: s_next hands out one fresh ustack after another. */
static struct ustack bare;
static uint64_t made;

static void bare_child(void *arg)
{
	(void)arg;
	ran++;
}

static struct ustack *bare_next(struct usched *s)
{
	if (made == to_make)
		return NULL;
	made++;
	ustack_init(&bare, s, bare_child, NULL, NULL, 0);
	return &bare;
}

static void run_bare(void)
{
	struct usched s = { .s_next = bare_next, .s_alloc = bench_alloc,
			    .s_free = bench_free };

	usched_run(&s);
}

int main(int argc, char **argv)
{
	double secs;
	int i = bench_options(argc, argv, usage, "ll", 1, &ops, 0, NULL);
	int rc = 0;

	if (argc == i)
		usage_fail(argv[0], usage, "expected COUNT");
	if (argc - i > 1)
		usage_fail(argv[0], usage, "expected one COUNT, got %d "
			   "arguments", argc - i);
	count = arg_u64(argv[0], usage, "COUNT", argv[i], 1,
			BENCH_MAX_COUNT);
	to_make = count - bench_fault(argv[0], usage, "lost");
	secs = bench_seconds();
	if (ops != NULL)
		rc = run_scheduled();
	else
		run_bare();
	secs = ops != NULL ? spawn_secs : bench_seconds() - secs;
	if (rc != 0) {
		fprintf(stderr, "%s: cannot run the scheduler: %s\n", argv[0],
			strerror(-rc));
		return 1;
	}
	if (errors != 0 || ran != count) {
		fprintf(stderr, "%s: %llu of %llu threads ran, %d errors%s%s\n",
			argv[0], (unsigned long long)ran,
			(unsigned long long)count, errors,
			errors != 0 ? ", the first: " : "",
			errors != 0 ? strerror(first_error) : "");
		return 1;
	}
	printf("%.2f\n", secs * 1e9 / count);
	return bench_output_status(argv[0]);
}
