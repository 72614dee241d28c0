/*
 * Test support: a minimal TAP producer (prove reads the output), death
 * tests, and helpers the test programs share.
 */
#ifndef TAP_H
#define TAP_H

#include <stddef.h>
#include <stdlib.h>
#include <sys/types.h>

/*
 * TAP_SANITIZED under any sanitizer, TAP_ASAN under AddressSanitizer,
 * TAP_TSAN under ThreadSanitizer.
 */
#if defined(__SANITIZE_ADDRESS__)
#define TAP_ASAN 1
#elif defined(__SANITIZE_THREAD__)
#define TAP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TAP_ASAN 1
#elif __has_feature(thread_sanitizer)
#define TAP_TSAN 1
#endif
#endif
#if defined(TAP_ASAN) || defined(TAP_TSAN)
#define TAP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define TAP_SANITIZED 1
#endif
#endif

/* Records one test point; returns cond so callers can stop early. */
int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints a diagnostic line. */
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints text, which may span lines, as diagnostic lines. */
void diag_lines(const char *text);
/* Prints the plan; the exit status for main: 0 if every point passed. */
int tap_done(void);
/*
 * A precondition later steps need: silent when it holds; when it does not,
 * a failed point and exit.
 */
#define require(cond) \
	do { if (!(cond)) { ok(0, "%s (%s:%d)", #cond, __FILE__, __LINE__); \
		exit(tap_done() | 1); } } while (0)

/*
 * Fills n bytes with v, and checks them, with volatile accesses: no
 * compiler may shrink the array or drop the stores.
 */
void fill_bytes(volatile char *p, size_t n, char v);
int bytes_intact(volatile char *p, size_t n, char v);

/*
 * Watchdog: if secs pass before the next call, prints "Bail out! " and the
 * message, and exits 3: a hang fails the run instead of stalling it. If
 * SIGALRM cannot be handled then (blocked, or held back by a sanitizer's
 * runtime), SIGKILL ends the process about secs / 10 + 1 seconds later.
 */
void tap_watchdog(unsigned secs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tap_watchdog_off(void);

/* A pseudo-random number below 2^31 from *state (a linear congruence). */
unsigned long tap_rand(unsigned long *state);

/*
 * Calls bottom() depth + 1 frames down, each holding 1 KiB of pattern;
 * returns bottom's result, or TAP_DEEP_BAD if a pattern came back changed.
 */
enum { TAP_DEEP_BAD = -1000 };
int tap_deep(int depth, int (*bottom)(void));

/* s as a count from 1 to 1e18 (5e7 will do), or 0 if it is not one. */
long test_count(const char *s);
/* Environment variable name as a count, 0 if unset or empty; anything
 * else ends the test with exit 2. */
long test_env_count(const char *name);
/* n, or fewer under sanitizers or if USCHED_TEST_THREADS says so. */
long test_threads(long n);

/*
 * fork, with stdout flushed first: the child would print again what the
 * parent has buffered. A failed fork is a failed precondition (require).
 */
pid_t tap_fork(void);
/* Waits for the child pid; returns its wait status. */
int tap_wait(pid_t pid);

/*
 * Runs f(arg) in a child process (SIGABRT at its default), its stderr
 * read into out (n bytes with the final 0); returns its wait status.
 */
int stderr_of(void (*f)(void *), void *arg, char *out, size_t n);

/*
 * Death test: runs f(arg) in a child process and checks that it dies by
 * SIGABRT with a message on stderr that contains expect.
 */
int dies_with(void (*f)(void *), void *arg, const char *expect,
	      const char *name);

#endif
