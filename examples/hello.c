/* Two usched threads taking turns; the shortest complete usched program. */
#include "usched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ustack threads[2];
static struct ustack *turn = &threads[0];	/* who runs next */

static struct ustack *next(struct usched *s)
{
	struct ustack *u = turn;

	(void)s;
	turn = NULL;
	return u;
}

static void *alloc(struct usched *s, int size)
{
	(void)s;
	return malloc(size);
}

static void release(struct usched *s, void *buf, int size)
{
	(void)s;
	(void)size;
	free(buf);
}

static void player(void *arg)
{
	const char *name = arg;
	struct ustack *other = &threads[ustack_self() == &threads[0]];

	for (int i = 0; i < 3; i++) {
		printf("%s %d\n", name, i);
		turn = other;		/* hand over to the other thread */
		if (ustack_block() != 0) {	/* no memory for its copy */
			fprintf(stderr, "hello: %s cannot block\n", name);
			exit(1);
		}
	}
	/* ping ends first and hands over; pong ends the run. */
	turn = other == &threads[0] ? NULL : other;
}

/* 0 if all of stdout was written, else 1, saying so. */
static int written(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	fprintf(stderr, "hello: cannot write to stdout\n");
	return 1;
}

int main(int argc, char **argv)
{
	struct usched s = {
		.s_next = next, .s_alloc = alloc, .s_free = release,
	};

	for (int i = 1; i < argc; i++) {	/* -h or --help, anywhere */
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			puts("usage: hello");
			return written();
		}
	}
	if (argc > 1) {
		fprintf(stderr, "hello: takes no arguments, got %d\n"
			"usage: hello\n", argc - 1);
		return 2;
	}
	ustack_init(&threads[0], &s, player, "ping", NULL, 0);
	ustack_init(&threads[1], &s, player, "pong", NULL, 0);
	usched_run(&s);		/* returns when next() returns NULL */
	return written();
}
