/* Schedulers by name. */
#include "sched.h"

#include <pthread.h>
#include <string.h>

static const struct sched_ops *const scheds[] = { &rr_ops, &ll_ops };

const struct sched_ops *sched_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof scheds / sizeof scheds[0]; i++) {
		if (strcmp(scheds[i]->so_name, name) == 0)
			return scheds[i];
	}
	return NULL;
}

static char names[64];

static void names_fill(void)
{
	for (size_t i = 0; i < sizeof scheds / sizeof scheds[0]; i++) {
		if (i > 0)
			strcat(names, "|");
		strcat(names, scheds[i]->so_name);
	}
}

const char *sched_names(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, names_fill);	/* callers may race */
	return names;
}
