#include "tap.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int tap_count;
static int tap_failed;

#ifdef TAP_ASAN
/*
 * usched refuses ASan's fake frames (detect_stack_use_after_return), which
 * newer sanitizer runtimes turn on by default; ASAN_OPTIONS still wins.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_stack_use_after_return=0";
}
#endif

int ok(int cond, const char *fmt, ...)
{
	va_list args;

	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
	putchar('\n');
	fflush(stdout);
	return cond;
}

void diag(const char *fmt, ...)
{
	va_list args;

	fputs("# ", stdout);
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
	putchar('\n');
	fflush(stdout);
}

void diag_lines(const char *text)
{
	while (*text) {
		int len = (int)strcspn(text, "\n");

		diag("%.*s", len, text);
		text += len + (text[len] != 0);
	}
}

int tap_done(void)
{
	printf("1..%d\n", tap_count);
	fflush(stdout);
	return tap_failed != 0;
}

void fill_bytes(volatile char *p, size_t n, char v)
{
	for (size_t i = 0; i < n; i++)
		p[i] = v;
}

int bytes_intact(volatile char *p, size_t n, char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

long test_count(const char *s)
{
	char *end;
	double d = strtod(s, &end);

	return end != s && *end == 0 && d >= 1 && d <= 1e18 ? (long)d : 0;
}

long test_env_count(const char *name)
{
	const char *env = getenv(name);
	long n;

	if (env == NULL || *env == 0)
		return 0;
	n = test_count(env);
	if (n == 0) {
		fprintf(stderr, "%s is '%s', not a count from 1 to 1e18\n",
			name, env);
		exit(2);
	}
	return n;
}

long test_threads(long n)
{
	long max = test_env_count("USCHED_TEST_THREADS");

#ifdef TAP_SANITIZED
	if (max <= 0)
		max = 20000;	/* a sanitizer's state per thread is large */
#endif
	return max > 0 && max < n ? max : n;
}

/*
 * noinline: inlined recursion would put several pads in one frame. The
 * pattern is in words, each other than its neighbours and than those of
 * the other frames: a changed or shifted byte shows as surely as in bytes,
 * in fewer accesses.
 */
__attribute__((noinline)) int tap_deep(int depth, int (*bottom)(void))
{
	volatile long pad[1024 / sizeof(long)];
	size_t n = sizeof pad / sizeof pad[0];
	long base = depth * 1000L;
	int bad = 0, rc;

	for (size_t i = 0; i < n; i++)
		pad[i] = base + (long)i;
	rc = depth > 0 ? tap_deep(depth - 1, bottom) : bottom();
	for (size_t i = 0; i < n; i++)
		bad |= pad[i] != base + (long)i;
	return bad ? TAP_DEEP_BAD : rc;
}

unsigned long tap_rand(unsigned long *state)
{
	*state = *state * 6364136223846793005UL + 1442695040888963407UL;
	return *state >> 33;
}

static char tap_bail[256];
static size_t tap_bail_len;

static void tap_on_alarm(int sig)
{
	(void)sig;
	(void)!write(1, tap_bail, tap_bail_len);
	_exit(3);
}

/*
 * The alarm's backstop: SIGKILL, which no runtime can hold back, a little
 * after it. TSan delivers a signal only outside its runtime, so a hang
 * inside it never runs the alarm's handler. A timer that cannot be made
 * leaves the alarm alone.
 */
static void tap_kill_in(unsigned secs)
{
	static timer_t timer;
	static pid_t made_by;	/* a forked child inherits no timer */
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL,
			       .sigev_signo = SIGKILL };
	struct itimerspec at = { .it_value.tv_sec = secs };

	if (made_by != getpid()) {	/* none to disarm, or none made */
		if (secs == 0 ||
		    timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0)
			return;
		made_by = getpid();
	}
	timer_settime(timer, 0, &at, NULL);
}

void tap_watchdog(unsigned secs, const char *fmt, ...)
{
	va_list args;
	int n = snprintf(tap_bail, sizeof tap_bail, "Bail out! ");

	va_start(args, fmt);
	vsnprintf(tap_bail + n, sizeof tap_bail - n - 1, fmt, args);
	va_end(args);
	strcat(tap_bail, "\n");
	tap_bail_len = strlen(tap_bail);
	signal(SIGALRM, tap_on_alarm);
	alarm(secs);
	tap_kill_in(secs > 0 ? secs + 1 + secs / 10 : 0);
}

void tap_watchdog_off(void)
{
	alarm(0);
	tap_kill_in(0);
}

pid_t tap_fork(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	require(pid >= 0);
	return pid;
}

int tap_wait(pid_t pid)
{
	int status;

	require(waitpid(pid, &status, 0) == pid);
	return status;
}

int stderr_of(void (*f)(void *), void *arg, char *out, size_t n)
{
	int pipefd[2];
	size_t got = 0;
	ssize_t k;
	pid_t pid;

	require(pipe(pipefd) == 0);
	pid = tap_fork();
	if (pid == 0) {
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		signal(SIGABRT, SIG_DFL);
		f(arg);
		_exit(0);
	}
	close(pipefd[1]);
	while (got < n - 1 &&
	       (k = read(pipefd[0], out + got, n - 1 - got)) > 0)
		got += k;
	out[got] = 0;
	close(pipefd[0]);
	return tap_wait(pid);
}

int dies_with(void (*f)(void *), void *arg, const char *expect,
	      const char *name)
{
	char out[4096];
	int status = stderr_of(f, arg, out, sizeof out);

	if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)) {
		diag("child status %#x, stderr:", status);
		diag_lines(out);
	}
	return ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
		  strstr(out, expect) != NULL,
		  "%s: aborts with \"%s\"", name, expect);
}
