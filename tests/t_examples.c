/*
 * The examples, run as programs: hello, fringe on pairs of trees, and sieve
 * on both schedulers against primes found here by trial division.
 */
#include "tap.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char fringe[PATH_MAX];
static char hello[PATH_MAX];
static char sieve[PATH_MAX];
/* A command to run the examples with, as for the tests (e.g. an emulator). */
static const char *runner;

/*
 * Runs the example at path with args through runner, if any, with a native
 * stack of stack bytes (0: as ours). The shell sets the limit: valgrind
 * and qemu keep a setrlimit of the stack here to themselves.
 */
static void exec_example(const char *path, const char *a, const char *b,
			 rlim_t stack)
{
	char cmd[PATH_MAX + 96];
	int n = 0;

	if (runner == NULL && stack == 0) {
		execl(path, path, a, b, (char *)NULL);
		return;
	}
	if (stack != 0)
		n = snprintf(cmd, sizeof cmd, "ulimit -s %lu && ",
			     (unsigned long)(stack >> 10));
	snprintf(cmd + n, sizeof cmd - n, "exec %s \"$0\" \"$@\"",
		 runner != NULL ? runner : "");
	execl("/bin/sh", "sh", "-c", cmd, path, a, b, (char *)NULL);
}

/*
 * Runs fringe on two trees, with a native stack of stack bytes (0: as
 * ours); returns its exit status, -1 if it crashed.
 */
static int run(const char *a, const char *b, rlim_t stack)
{
	int status;
	pid_t pid = tap_fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		exec_example(fringe, a, b, stack);
		_exit(127);
	}
	status = tap_wait(pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void expect(const char *a, const char *b, int code)
{
	int got = run(a, b, 0);

	ok(got == code, "fringe '%.40s' '%.40s' exits %d (got %d)", a,
	   b ? b : "", code, got);
}

/* "((( ... 7 ... )))", 7 in depth lists. */
static char *nested(int depth)
{
	char *s = malloc(2 * depth + 2);

	require(s != NULL);
	memset(s, '(', depth);
	s[depth] = '7';
	memset(s + depth + 1, ')', depth);
	s[2 * depth + 1] = 0;
	return s;
}

/*
 * Trees as deep as fringe takes, and deeper: refused (exit 3) before its
 * recursion can overflow even a small native stack.
 */
static void test_depth(void)
{
	char *deep = nested(10000), *deeper = nested(10001);
	char *deepest = nested(65000);
	int got;

	got = run(deep, "7", 8 << 20);
	ok(got == 0, "fringe, a tree 10000 deep, an 8 MiB stack: exits 0 "
	   "(got %d)", got);
	expect(deeper, "7", 3);
	got = run(deepest, "7", 2 << 20);
	ok(got == 3, "fringe, a tree 65000 deep, a 2 MiB stack: exits 3 "
	   "(got %d)", got);
	free(deep);
	/* a smaller stack takes less, at 512 bytes a level */
	deep = nested(500);
	got = run(deep, "7", 1 << 20);
	ok(got == 0, "fringe, a tree 500 deep, a 1 MiB stack: exits 0 "
	   "(got %d)", got);
	free(deep);
	deep = nested(3000);
	got = run(deep, "7", 1 << 20);
	ok(got == 3, "fringe, a tree 3000 deep, a 1 MiB stack: exits 3 "
	   "(got %d)", got);
	free(deep);
	free(deeper);
	free(deepest);
}

/* "(((1 2) 3) ... n)" and "(1 (2 (3 ... n)))": same leaves, other shapes. */
static char *comb(int n, int left)
{
	char *s = malloc(n * 16 + 16), *p = s;

	if (left) {
		memset(p, '(', n);
		p += n;
		p += sprintf(p, "1");
		for (int i = 2; i <= n; i++)
			p += sprintf(p, " %d)", i);
		sprintf(p, ")");
	} else {
		for (int i = 1; i < n; i++)
			p += sprintf(p, "(%d ", i);
		p += sprintf(p, "%d", n);
		for (int i = 1; i < n; i++)
			*p++ = ')';
		*p = 0;
	}
	return s;
}

/*
 * Runs the example at path with args (through runner) and the shell's
 * redirections redir: its exit status (-1 if it crashed), and in out what
 * it wrote to the pipe that is its stdout before redir.
 */
static int run_redirected(const char *path, const char *args,
			  const char *redir, char *out, size_t size)
{
	char cmd[PATH_MAX + 128];
	size_t n = 0, got;
	int status;
	FILE *p;

	snprintf(cmd, sizeof cmd, "%s %s %s %s", runner ? runner : "", path,
		 args, redir);
	p = popen(cmd, "r");
	require(p != NULL);
	while (n < size - 1 && (got = fread(out + n, 1, size - 1 - n, p)) > 0)
		n += got;
	out[n] = 0;
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The same, its stdout in out. */
static int run_output(const char *path, const char *args, char *out,
		      size_t size)
{
	return run_redirected(path, args, "2>/dev/null", out, size);
}

/*
 * An example whose output cannot be written (a full disk) fails with
 * status, saying so; out gets its stderr.
 */
static void expect_full(const char *path, const char *args, int status)
{
	char err[256];
	int got = run_redirected(path, args, "2>&1 >/dev/full", err,
				 sizeof err);

	err[strcspn(err, "\n")] = 0;	/* its first line */
	ok(got == status && strstr(err, "cannot write") != NULL,
	   "%s %s >/dev/full: exits %d, saying why (got %d: '%.60s')",
	   strrchr(path, '/') + 1, args, status, got, err);
}

/*
 * The example at path with args refuses them (exit 2) in one line, want,
 * the usage on the next: its control characters are shown, not sent.
 */
static void expect_said(const char *path, const char *args, const char *want)
{
	char err[512];
	int got = run_redirected(path, args, "2>&1 >/dev/null", err,
				 sizeof err);
	size_t n = strlen(want);

	ok(got == 2 && strncmp(err, want, n) == 0 &&
	   strncmp(err + n, "\nusage: ", 8) == 0,
	   "%s %s: exit 2, saying %s on one line (got %d)",
	   strrchr(path, '/') + 1, args, want, got);
}

/*
 * The example at path with args, among them -h or --help, prints usage on
 * stdout and nothing on stderr, exit 0; with stdout full, fails with full.
 */
static void expect_help(const char *path, const char *args,
			const char *usage, int full)
{
	char out[256];
	int got = run_redirected(path, args, "2>&1", out, sizeof out);

	ok(got == 0 && strcmp(out, usage) == 0,
	   "%s %s: exit 0, the usage alone on stdout (got %d)",
	   strrchr(path, '/') + 1, args, got);
	if (full != 0)
		expect_full(path, args, full);
}

static void test_hello(void)
{
	char out[256];

	ok(run_output(hello, "", out, sizeof out) == 0 &&
	   strcmp(out, "ping 0\npong 0\nping 1\npong 1\nping 2\npong 2\n") == 0,
	   "hello: two threads take turns");
	expect_full(hello, "", 1);
	ok(run_output(hello, "a", out, sizeof out) == 2 && out[0] == 0,
	   "hello a: exit 2, nothing on stdout");
	expect_said(hello, "a b", "hello: takes no arguments, got 2");
	expect_help(hello, "--help", "usage: hello\n", 1);
	expect_help(hello, "a -h b", "usage: hello\n", 0);
}

/* The primes below limit, one a line, by trial division. */
static char *primes_below(unsigned long limit)
{
	char *s = malloc(8 * limit + 1);
	size_t n = 0;

	require(s != NULL);
	for (unsigned long v = 2; v < limit; v++) {
		unsigned long d = 2;

		while (d * d <= v && v % d != 0)
			d++;
		if (d * d > v)
			n += sprintf(s + n, "%lu\n", v);
	}
	s[n] = 0;
	return s;
}

/*
 * The native threads of sieve --sched sched -p procs 1000000, a long run,
 * once it has had 20 ticks of CPU; it is killed then. -1 if it ended
 * first, or did not have them in 50 s.
 */
static int sieve_threads(const char *sched, const char *procs)
{
	char path[64];
	int threads = -1;
	pid_t pid = tap_fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(sieve, sieve, "--sched", sched, "-p", procs, "1000000",
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 2500 && threads < 0; i++) {
		unsigned long user, sys;
		struct dirent *e;
		char state;
		FILE *f;
		DIR *d;
		int n;

		usleep(20000);
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		if ((f = fopen(path, "r")) == NULL)
			break;
		/* after "pid (comm) ": state, then 10 fields before utime */
		n = fscanf(f, "%*d (%*[^)]) %c %*d %*d %*d %*d %*d %*u %*u "
			   "%*u %*u %*u %lu %lu", &state, &user, &sys);
		fclose(f);
		if (n != 3 || state == 'Z')	/* it ended */
			break;
		if (user + sys < 20)
			continue;
		snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
		if ((d = opendir(path)) == NULL)
			break;
		for (threads = 0; (e = readdir(d)) != NULL;)
			threads += e->d_name[0] != '.';
		closedir(d);
	}
	kill(pid, SIGKILL);
	tap_wait(pid);
	return threads;
}

static void test_sieve(void)
{
	static const char *const bad[] = {
		"", "1", "1000001", "x", "-5", "10 11", "-p 0 10", "-p 65 10",
		"-p x 10", "--sched nope 10", "--bogus 1 10", "-p 10",
	};
	static const struct {
		const char *args, *said;
	} named[] = {
		{ "-p", "no value after '-p'" },
		{ "--sched", "no value after '--sched'" },
		{ "-p 2 --sched", "no value after '--sched'" },
		{ "-p 2 -x", "unknown option '-x'" },
	};
	/* -h or --help wins wherever it is, whatever else is wrong */
	static const char *const help[] = {
		"--help", "-h", "-p 2 10 --help", "--bogus -h", "-p -h 10",
		"10 11 --help",
	};
	static const char sieve_usage[] =
		"usage: sieve [--sched rr|ll] [-p PROCS] LIMIT\n";
	static char out[1 << 16];
	char *want = primes_below(3000), args[64];

	tap_watchdog(300, "sieve did not finish in 300 s: a lost wake-up?");
	for (int s = 0; s < 2; s++) {
		for (int procs = 1; procs <= 3; procs++) {
			snprintf(args, sizeof args, "--sched %s -p %d 3000",
				 s ? "rr" : "ll", procs);
			ok(run_output(sieve, args, out, sizeof out) == 0 &&
			   strcmp(out, want) == 0,
			   "sieve %s: the 430 primes below 3000, in order",
			   args);
		}
	}
	free(want);
	ok(run_output(sieve, "2", out, sizeof out) == 0 && out[0] == 0,
	   "sieve 2: no primes");
	ok(run_output(sieve, "-p 2 3", out, sizeof out) == 0 &&
	   strcmp(out, "2\n") == 0, "sieve -p 2 3: 2");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ok(run_output(sieve, bad[i], out, sizeof out) == 2 &&
		   out[0] == 0, "sieve %s: exit 2, nothing on stdout", bad[i]);
	/* the message names the extra argument, not LIMIT */
	ok(run_redirected(sieve, "-p 2 10 11", "2>&1 >/dev/null", out,
			  sizeof out) == 2 &&
	   strstr(out, "unexpected argument after LIMIT: '11'"),
	   "sieve -p 2 10 11: exit 2, naming the argument after LIMIT");
	/* an option at the end is named, not refused as a LIMIT */
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		ok(run_redirected(sieve, named[i].args, "2>&1 >/dev/null", out,
				  sizeof out) == 2 &&
		   strstr(out, named[i].said) != NULL,
		   "sieve %s: exit 2, saying %s", named[i].args, named[i].said);
	/* printf, as sh has no $'...': a newline and an escape in a value */
	expect_said(sieve, "\"$(printf '1\\n2')\"",
		    "sieve: LIMIT is from 2 to 1000000, not '1\\x0a2'");
	expect_said(sieve, "--sched \"$(printf 'a\\033[31mb')\" 10",
		    "sieve: no such scheduler: 'a\\x1b[31mb'");
	expect_full(sieve, "100", 1);
	expect_full(sieve, "--sched rr -p 2 100", 1);
	for (size_t i = 0; i < sizeof help / sizeof help[0]; i++)
		expect_help(sieve, help[i], sieve_usage, i == 0);
	require(setenv("USCHED_PIN", "yes", 1) == 0);
	ok(run_redirected(sieve, "10", "2>&1 >/dev/null", out,
			  sizeof out) == 2 &&
	   strstr(out, "USCHED_PIN must be 0 or 1 (or unset), not 'yes'"),
	   "USCHED_PIN=yes sieve 10: exit 2, naming the variable");
	require(unsetenv("USCHED_PIN") == 0);
	/*
	 * -p PROCS is the processors' native threads: -p 3 runs two more
	 * than -p 1 (a sanitizer's own thread may come with either).
	 */
	if (runner != NULL) {
		diag("skipping sieve's native threads: run through '%s'",
		     runner);
	} else {
		for (int s = 0; s < 2; s++) {
			const char *name = s ? "rr" : "ll";
			int one = sieve_threads(name, "1");
			int three = sieve_threads(name, "3");

			ok(one > 0 && three == one + 2, "sieve --sched %s -p 3 "
			   "1000000: two native threads more than -p 1 (got "
			   "%d, %d)", name, three, one);
		}
	}
	tap_watchdog_off();
}

int main(void)
{
	static const char fringe_usage[] =
		"usage: fringe TREE TREE   (TREE is a number or ( TREE... ))\n";
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *left, *right, *dir;

	require(n > 0);
	exe[n] = 0;
	runner = getenv("USCHED_TEST_EXEC");
	dir = dirname(exe);
	snprintf(fringe, sizeof fringe, "%s/../examples/fringe", dir);
	snprintf(hello, sizeof hello, "%s/../examples/hello", dir);
	snprintf(sieve, sizeof sieve, "%s/../examples/sieve", dir);
	require(access(fringe, X_OK) == 0);
	test_hello();
	test_sieve();

	expect("(1 2 3)", "(1 (2 3))", 0);
	expect("((1 2) 3)", "(1 2 4)", 1);
	expect("(1 2)", "(1 2 3)", 1);
	expect("(1 2 3)", "(1 2)", 1);
	expect("(9 2 3)", "(1 2 3)", 1);
	expect("()", "(() (()))", 0);
	expect("7", "(((7)))", 0);
	expect("(1 (2 (3 (4 (5)))))", "(((((1) 2) 3) 4) 5)", 0);
	left = comb(500, 1);
	right = comb(500, 0);
	expect(left, right, 0);
	right[strlen(right) - 501] = '9';	/* the last leaf 500 -> 509 */
	expect(left, right, 1);
	free(left);
	free(right);
	expect("(1 2", "(1 2)", 2);
	expect("(a)", "(1)", 2);
	expect("(1) x", "(1)", 2);
	expect("(1-2)", "(1 -2)", 2);
	expect("(1 2)", "(1 2x)", 2);
	expect("(1)", NULL, 2);
	expect_said(fringe, "\"$(printf '1 x\\ny')\" 1",
		    "fringe: bad tree: trailing text at \"x\\x0ay\"");
	expect_said(fringe, "\"$(printf '(1 \\033[31m)')\" 1",
		    "fringe: bad tree: expected a number or ( at \"\\x1b[31m)\"");
	/* the first 20 bytes of the rest, '...' if there are more */
	expect_said(fringe, "'(1 a2345678901234567890)' 1",
		    "fringe: bad tree: expected a number or ( at "
		    "\"a2345678901234567890...\"");
	expect_said(fringe, "'(1 a2345678901234567890' 1",
		    "fringe: bad tree: expected a number or ( at "
		    "\"a2345678901234567890\"");
	expect_full(fringe, "'(1 2)' '(1 2)'", 3);
	expect_full(fringe, "1 2", 3);
	expect_help(fringe, "--help", fringe_usage, 3);
	expect_help(fringe, "-h", fringe_usage, 0);
	expect_help(fringe, "1 2 --help", fringe_usage, 0);
	expect_help(fringe, "'(1' -h", fringe_usage, 0);
	expect("(99999999999999999999999)", "(99999999999999999999998)", 2);
	test_depth();
	return tap_done();
}
