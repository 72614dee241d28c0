/*
 * switch: nanoseconds per usched switch against the size of the saved
 * stack. Two threads hand control to each other; each keeps `extra` bytes
 * live in its frame, so every switch copies the stack out and back in.
 *
 * usage: switch [-n ROUNDS] [EXTRA_BYTES...]
 */
#include "../usched.h"
#include "args.h"
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pingpong {
	struct usched  p_s;
	struct ustack  p_u[2];
	struct ustack *p_next;
	uint64_t       p_rounds;
	size_t         p_extra;
	int            p_error;
	int            p_finished;
};

static struct ustack *pp_next(struct usched *s)
{
	struct pingpong *p = (struct pingpong *)s;
	struct ustack *u = p->p_next;

	p->p_next = NULL;
	return u;
}

static void pp_thread(void *arg)
{
	struct pingpong *p = arg;
	struct ustack *self = ustack_self();
	struct ustack *other = &p->p_u[self == &p->p_u[0]];
	char pad[p->p_extra + 1];

	memset(pad, 0x5a, sizeof pad);
	for (uint64_t i = 0; i < p->p_rounds; i++) {
		p->p_next = other;
		if (ustack_block() != 0)
			p->p_error = 1;
	}
	if (++p->p_finished == 1)	/* the other one has yet to end */
		p->p_next = other;
	if (pad[p->p_extra] != 0x5a)
		p->p_error = 1;
}

static double ns_per_switch(uint64_t rounds, size_t extra, int *used)
{
	struct pingpong p = {
		.p_s = { .s_next = pp_next, .s_alloc = bench_alloc,
			 .s_free = bench_free },
		.p_rounds = rounds,
		.p_extra = extra,
	};
	double secs;

	ustack_init(&p.p_u[0], &p.p_s, pp_thread, &p, NULL, 0);
	ustack_init(&p.p_u[1], &p.p_s, pp_thread, &p, NULL, 0);
	p.p_next = &p.p_u[0];
	secs = bench_seconds();
	usched_run(&p.p_s);
	secs = bench_seconds() - secs;
	if (p.p_error) {
		fprintf(stderr, "switch: a block failed\n");
		exit(1);
	}
	*used = p.p_s.s_max_used;
	return secs * 1e9 / (2.0 * rounds);
}

static const char usage[] =
	"[-n ROUNDS] [EXTRA_BYTES...]\n"
	"  -n ROUNDS    hand-overs per thread and size (default 10000000)\n"
	"  EXTRA_BYTES  extra live stack per thread (default: 0 to 8192)\n"
	"Prints the saved stack size and nanoseconds per switch.\n";

static uint64_t parse_arg(const char *prog, const char *arg, uint64_t max)
{
	uint64_t v;

	if (parse_u64(arg, &v) != 0 || v > max)
		usage_fail(prog, usage, "not a number up to %llu: '%s'",
			   (unsigned long long)max, arg);
	return v;
}

int main(int argc, char **argv)
{
	static const char *const dflt[] = { "0", "64", "256", "1024", "2048",
					    "4096", "8192" };
	const char *const *sizes = dflt;
	int nsizes = sizeof dflt / sizeof dflt[0], i = 1, used;
	uint64_t rounds = 10000000;

	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		rounds = parse_arg(argv[0], argv[2], 1ULL << 40);
		i = 3;
	}
	if (rounds == 0)
		usage_fail(argv[0], usage, "ROUNDS must be positive");
	if (i < argc) {
		if (argv[i][0] == '-' && !(argv[i][1] >= '0' && argv[i][1] <= '9'))
			usage_fail(argv[0], usage, "unknown option '%s'", argv[i]);
		sizes = (const char *const *)argv + i;
		nsizes = argc - i;
	}
	printf("%10s %10s\n", "saved B", "ns/switch");
	for (int k = 0; k < nsizes; k++) {
		uint64_t extra = parse_arg(argv[0], sizes[k],
					   USCHED_STACK_MAX_DEFAULT / 2);
		double ns = ns_per_switch(rounds, extra, &used);

		printf("%10d %10.2f\n", used, ns);
	}
	return 0;
}
