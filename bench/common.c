#include "common.h"
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_is_option(const char *arg)
{
	return arg[0] == '-' && arg[1] != 0 &&
	       !(arg[1] >= '0' && arg[1] <= '9');
}

static unsigned flag_of(const char *arg)
{
	if (strcmp(arg, "-v") == 0)
		return BENCH_VERBOSE;
	return strcmp(arg, "-f") == 0 ? BENCH_SHARE_FPCTL : 0;
}

int bench_options(int argc, char **argv, const char *usage, const char *dflt,
		  int allow_none, const struct sched_ops **ops,
		  unsigned accept, unsigned *flags)
{
	const char *name = dflt, *pin;
	int i;

	help_if_asked(argc, argv, usage);
	for (i = 1; i < argc && bench_is_option(argv[i]); i++) {
		unsigned flag = flag_of(argv[i]) & accept;

		if (flag != 0)
			*flags |= flag;
		else if (strcmp(argv[i], "--sched") != 0)
			usage_fail(argv[0], usage, "unknown option '%s'",
				   arg_shown(argv[i]));
		else if (i + 1 < argc)
			name = argv[++i];
		else
			usage_fail(argv[0], usage, "--sched needs a name");
	}
	pin = getenv("USCHED_PIN");
	if (pin != NULL && *pin != 0 && strcmp(pin, "0") != 0 &&
	    strcmp(pin, "1") != 0)
		usage_fail(argv[0], usage, "USCHED_PIN is '%s'; it must be "
			   "0 or 1 (or unset)", arg_shown(pin));
	*ops = sched_find(name);
	if (*ops == NULL && !(allow_none && strcmp(name, "none") == 0))
		usage_fail(argv[0], usage, "unknown scheduler '%s' (%s%s)",
			   arg_shown(name), sched_names(),
			   allow_none ? "|none" : "");
	return i;
}

unsigned long bench_print_procs(const struct sched_ops *ops)
{
	struct sched_stats st;
	unsigned long switches = 0;

	for (int p = 0; ops->so_stats(p, &st) == 0; p++) {
		fprintf(stderr, "processor %d: switches %lu local wakes %lu "
			"remote wakes %lu sleeps %lu max stack %lu B\n", p,
			st.ss_switches, st.ss_local_wakes, st.ss_remote_wakes,
			st.ss_sleeps, st.ss_max_stack);
		switches += st.ss_switches;
	}
	return switches;
}

void *bench_alloc(struct usched *s, int size)
{
	(void)s;
	return malloc(size);
}

void bench_free(struct usched *s, void *buf, int size)
{
	(void)s;
	(void)size;
	free(buf);
}
