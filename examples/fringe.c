/*
 * The same-fringe problem: do two trees have the same leaves in the same
 * order, whatever their shapes? Each tree is walked by a generator, a
 * usched thread that hands over one leaf at a time and keeps its place in
 * the recursion while blocked; a third thread compares. Once the answer is
 * known, unfinished generators are discarded where they wait.
 *
 * usage: fringe TREE TREE     where TREE is a number or ( TREE... )
 * prints "same" (exit 0) or "different" (exit 1); -h or --help, anywhere,
 * prints the usage (exit 0); bad input exits 2; a tree deeper than the
 * native stack allows (see MAX_DEPTH), one too deep for a generator to
 * block in, no memory, or no stdout, exits 3.
 */
#include "usched.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/*
 * Parsing and walking recurse on the native stack, whose size this program
 * does not choose: the depth is bounded by MAX_DEPTH and by what ulimit -s
 * allows at LEVEL_BYTES a level, some 100 measured at -O2, more under
 * sanitizers.
 */
enum { MAX_DEPTH = 10000, LEVEL_BYTES = 512 };

struct node {
	struct node *n_kids;	/* first child */
	struct node *n_next;	/* next sibling */
	long         n_leaf;
	int          n_is_leaf;
};

struct gen {
	struct ustack g_u;
	struct node  *g_tree;
	long          g_leaf;
	int           g_end;	/* no more leaves */
};

static const char usage_line[] =
	"usage: fringe TREE TREE   (TREE is a number or ( TREE... ))\n";

static struct ustack *next_thread;
static struct ustack  comparator;
static struct gen     gens[2];
static int            same;

static struct ustack *fringe_next(struct usched *s)
{
	struct ustack *u = next_thread;

	(void)s;
	next_thread = NULL;
	return u;
}

static void *fringe_alloc(struct usched *s, int size)
{
	(void)s;
	return malloc(size);
}

static void fringe_free(struct usched *s, void *buf, int size)
{
	(void)s;
	(void)size;
	free(buf);
}

/* Runs `to` and blocks until someone transfers back. */
static void transfer(struct ustack *to)
{
	int rc;

	next_thread = to;
	rc = ustack_block();
	if (rc != 0) {
		fprintf(stderr, "fringe: cannot block (error %d): tree too deep?\n",
			rc);
		exit(3);
	}
}

static void walk(struct gen *g, struct node *n)
{
	if (n->n_is_leaf) {
		g->g_leaf = n->n_leaf;
		transfer(&comparator);
		return;
	}
	for (struct node *k = n->n_kids; k != NULL; k = k->n_next)
		walk(g, k);
}

static void generate(void *arg)
{
	struct gen *g = arg;

	walk(g, g->g_tree);
	g->g_end = 1;
	next_thread = &comparator;
}

static void compare(void *arg)
{
	(void)arg;
	do {
		transfer(&gens[0].g_u);
		transfer(&gens[1].g_u);
		same = gens[0].g_end == gens[1].g_end &&
		       (gens[0].g_end || gens[0].g_leaf == gens[1].g_leaf);
	} while (same && !gens[0].g_end);
	/* Their frames hold only their place in the walk; a finished one
	 * is left as it is. */
	for (int i = 0; i < 2; i++)
		ustack_discard(&gens[i].g_u);
}

static struct node *parse(const char **s);

static struct node *new_node(void)
{
	struct node *n = calloc(1, sizeof *n);

	if (n == NULL) {
		perror("fringe");
		exit(3);
	}
	return n;
}

static void bad_tree(const char *why, const char *at)
{
	int k;

	fprintf(stderr, "fringe: bad tree: %s at \"", why);
	/* a control character as \xHH: one line, nothing for the terminal */
	for (k = 0; k < 20 && at[k] != 0; k++) {
		unsigned char c = at[k];

		fprintf(stderr, iscntrl(c) ? "\\x%02x" : "%c", c);
	}
	fputs(at[k] != 0 ? "...\"" : "\"", stderr);	/* the rest cut */
	fprintf(stderr, "\n%s", usage_line);
	exit(2);
}

static struct node *parse_list(const char **s)
{
	struct node *n = new_node(), **tail = &n->n_kids;

	++*s;
	for (;;) {
		while (isspace((unsigned char)**s))
			++*s;
		if (**s == ')')
			break;
		if (**s == 0)
			bad_tree("missing )", *s);
		*tail = parse(s);
		tail = &(*tail)->n_next;
	}
	++*s;
	return n;
}

static struct node *parse(const char **s)
{
	struct node *n;
	char *end;
	long leaf;

	while (isspace((unsigned char)**s))
		++*s;
	if (**s == '(')
		return parse_list(s);
	errno = 0;
	leaf = strtol(*s, &end, 10);
	if (end == *s)
		bad_tree("expected a number or (", *s);
	/* strtol clamps: two different huge leaves would compare the same. */
	if (errno == ERANGE)
		bad_tree("number out of range", *s);
	/* "1-2" is not two leaves */
	if (*end != 0 && *end != '(' && *end != ')' &&
	    !isspace((unsigned char)*end))
		bad_tree("a number runs into other text", end);
	*s = end;
	n = new_node();	/* once the leaf is good: a refusal leaks none */
	n->n_leaf = leaf;
	n->n_is_leaf = 1;
	return n;
}

/*
 * Measured before parsing, so that the refusal does not depend on how much
 * stack the parser's frames take (sanitizers make them several times larger).
 */
static int list_depth(const char *s)
{
	int depth = 0, max = 0;

	for (; *s != 0; s++) {
		if (*s == ')')
			depth--;
		else if (*s == '(' && ++depth > max)
			max = depth;
	}
	return max;
}

static int max_depth(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur / LEVEL_BYTES >= MAX_DEPTH)
		return MAX_DEPTH;
	return (int)(rl.rlim_cur / LEVEL_BYTES);
}

static struct node *parse_tree(const char *s)
{
	struct node *n;
	int max = max_depth();

	if (list_depth(s) > max) {
		fprintf(stderr, "fringe: tree deeper than %d levels%s\n", max,
			max < MAX_DEPTH ? " (as ulimit -s allows)" : "");
		exit(3);
	}
	n = parse(&s);

	while (isspace((unsigned char)*s))
		s++;
	if (*s != 0)
		bad_tree("trailing text", s);
	return n;
}

/* 0 if all of stdout was written, else 3 (as for no memory), saying so. */
static int written(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	fprintf(stderr, "fringe: cannot write to stdout\n");
	return 3;
}

int main(int argc, char **argv)
{
	struct usched s = { .s_next = fringe_next, .s_alloc = fringe_alloc,
			    .s_free = fringe_free };

	for (int i = 1; i < argc; i++) {	/* -h or --help, anywhere */
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			fputs(usage_line, stdout);
			return written();
		}
	}
	if (argc != 3) {
		fputs(usage_line, stderr);
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		gens[i].g_tree = parse_tree(argv[i + 1]);
		ustack_init(&gens[i].g_u, &s, generate, &gens[i], NULL, 0);
	}
	ustack_init(&comparator, &s, compare, NULL, NULL, 0);
	next_thread = &comparator;
	usched_run(&s);
	puts(same ? "same" : "different");
	if (written() != 0)
		return 3;
	return same ? 0 : 1;
}
