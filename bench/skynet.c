/*
 * skynet: LEAVES threads (a power of 10) at the bottom of a 10-ary tree of
 * threads. Each leaf returns its number; each inner thread sums its ten
 * children; the root must get LEAVES * (LEAVES - 1) / 2.
 * USCHED_BENCH_FAULT=sum, to test that check, numbers the leaves from 1.
 *
 * usage: skynet [--sched rr|ll] [-v] [LEAVES [P]]
 * Prints the elapsed seconds; -v, each processor's counters on stderr.
 */
#include "args.h"
#include "common.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"[--sched rr|ll] [-v] [LEAVES [P]]\n"
	"  -v      each processor's switches and wakes, on stderr\n"
	"  LEAVES  leaf threads, a power of 10 up to 10^9 (default 10^6)\n"
	"  P       native threads (default 1)\n";

/*
 * The root's ten children go to groups 0 to 9, spread over the processors;
 * every other node joins its parent's group. So with ll a subtree runs on
 * one processor, whose spawns and wakes stay local, as a ring's cycle does;
 * only the root's children and their reports cross processors.
 *
 * The nodes, in one array allocated up front: node i's children are nodes
 * 10i+1 to 10i+10. Not in the parent's frame: pointers into a blocked
 * stack are invalid. Not malloc'ed ten at a time either: the processors'
 * malloc arenas then grew and shrank all the time (some 12 000 mprotect
 * calls a run, a fifth of its time), which measures glibc, not threads.
 */
struct node {
	struct node *n_parent;
	void        *n_thread;	/* set by the node's own thread */
	uint64_t     n_first;	/* number of the first leaf below */
	uint64_t     n_leaves;
	uint64_t     n_sum;	/* children add into it */
	unsigned     n_pending;	/* children not yet done */
	int          n_group;	/* scheduling group, as said above */
};

static const struct sched_ops *ops;
static struct node *tree;
static uint64_t result;
static int errors;

static void report(struct node *n, uint64_t sum)
{
	struct node *up = n->n_parent;

	if (up == NULL) {
		result = sum;
		return;
	}
	__atomic_fetch_add(&up->n_sum, sum, __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&up->n_pending, 1, __ATOMIC_ACQ_REL) == 0 &&
	    ops->so_wake(up->n_thread) != 0)
		__atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
}

static void node(void *arg)
{
	struct node *n = arg, *kids;
	uint64_t step = n->n_leaves / 10;

	if (n->n_leaves == 1) {
		report(n, n->n_first);
		return;
	}
	kids = &tree[10 * (n - tree) + 1];
	n->n_thread = ops->so_self();
	n->n_pending = 10;
	for (int k = 0; k < 10; k++) {
		kids[k] = (struct node){
			.n_parent = n,
			.n_leaves = step,
			.n_first = n->n_first + k * step,
			.n_group = n == tree ? k : n->n_group,
		};
		if (ops->so_spawn(node, &kids[k], kids[k].n_group) == NULL) {
			/* The missing children never report: give up. */
			fprintf(stderr, "skynet: out of memory\n");
			exit(1);
		}
	}
	if (ops->so_wait() != 0) {
		fprintf(stderr, "skynet: wait failed\n");
		exit(1);
	}
	report(n, n->n_sum);
}

int main(int argc, char **argv)
{
	uint64_t leaves = 1000000, procs = 1, nodes, first;
	double secs;
	unsigned flags = 0;
	int i = bench_options(argc, argv, usage, "ll", 0, &ops, BENCH_VERBOSE,
			      &flags), rc;

	if (argc - i > 2)
		usage_fail(argv[0], usage, "too many arguments");
	if (argc - i > 0 && parse_leaves(argv[i], &leaves) != 0)
		usage_fail(argv[0], usage, "LEAVES must be a power of 10 up to "
			   "10^9, not '%s'", arg_shown(argv[i]));
	if (argc - i > 1)
		procs = arg_u64(argv[0], usage, "P", argv[i + 1], 1,
				RING_MAX_P);
	first = bench_fault(argv[0], usage, "sum");	/* the first leaf */
	/* a 10-ary tree has 1.11 threads a leaf; some 300 bytes each */
	check_memory(argv[0], leaves * 1.12 * 300);
	nodes = (10 * leaves - 1) / 9;	/* 1 + 10 + ... + leaves */
	tree = calloc(nodes, sizeof *tree);
	if (tree == NULL) {
		fprintf(stderr, "%s: no memory for %llu nodes\n", argv[0],
			(unsigned long long)nodes);
		return 1;
	}
	tree[0].n_leaves = leaves;
	tree[0].n_first = first;
	secs = bench_seconds();
	rc = ops->so_init(procs, 1000);
	if (rc == 0 && ops->so_spawn(node, &tree[0], 0) == NULL)
		rc = -errno;
	if (rc == 0 && (rc = ops->so_start()) == 0)
		rc = ops->so_fini();
	if (rc != 0) {
		fprintf(stderr, "%s: cannot run the scheduler: %s\n", argv[0],
			strerror(-rc));
		return 1;
	}
	secs = bench_seconds() - secs;
	if (errors != 0 || result != leaves * (leaves - 1) / 2) {
		fprintf(stderr, "%s: root got %llu, expected %llu (%d errors)\n",
			argv[0], (unsigned long long)result,
			(unsigned long long)(leaves * (leaves - 1) / 2),
			errors);
		return 1;
	}
	free(tree);
	printf("%.6f\n", secs);
	if (flags & BENCH_VERBOSE)
		bench_print_procs(ops);
	return bench_output_status(argv[0]);
}
