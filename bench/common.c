#include "common.h"
#include "args.h"

#include <stdlib.h>
#include <string.h>

int bench_is_option(const char *arg)
{
	return arg[0] == '-' && arg[1] != 0 && !(arg[1] >= '0' && arg[1] <= '9');
}

int bench_options(int argc, char **argv, const char *usage, const char *dflt,
		  int allow_none, const struct sched_ops **ops, int *verbose)
{
	const char *name = dflt;
	int i;

	for (i = 1; i < argc && bench_is_option(argv[i]); i++) {
		if (verbose != NULL && strcmp(argv[i], "-v") == 0)
			*verbose = 1;
		else if (strcmp(argv[i], "--sched") != 0)
			usage_fail(argv[0], usage, "unknown option '%s'", argv[i]);
		else if (i + 1 < argc)
			name = argv[++i];
		else
			usage_fail(argv[0], usage, "--sched needs a name");
	}
	*ops = sched_find(name);
	if (*ops == NULL && !(allow_none && strcmp(name, "none") == 0))
		usage_fail(argv[0], usage, "unknown scheduler '%s' (%s%s)",
			   name, sched_names(), allow_none ? "|none" : "");
	return i;
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
