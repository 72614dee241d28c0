/*
 * The ring peers' shared checks (bench/peers/ring-check.h) fail when they
 * should: a short token count, a corrupted pad, and more bad members than
 * are named. ring-pthread, ring-boost and the C++20 peers trust them.
 */
#include "tap.h"
#include "peers/ring-check.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * stderr, sent to a pipe while the checks write to it: what they write is
 * far less than a pipe holds. A sanitizer report in between shows up in
 * the captured text, which a failed point prints.
 */
struct capture {
	int c_pipe[2];
	int c_saved;
};

static void capture_start(struct capture *c)
{
	fflush(stderr);
	require(pipe(c->c_pipe) == 0);
	c->c_saved = dup(2);
	require(c->c_saved >= 0 && dup2(c->c_pipe[1], 2) == 2);
	close(c->c_pipe[1]);
}

static void capture_end(struct capture *c, char *out, size_t n)
{
	size_t got = 0;
	ssize_t k;

	fflush(stderr);
	require(dup2(c->c_saved, 2) == 2);	/* closes the pipe's last writer */
	close(c->c_saved);
	while (got < n - 1 &&
	       (k = read(c->c_pipe[0], out + got, n - 1 - got)) > 0)
		got += k;
	out[got] = 0;
	close(c->c_pipe[0]);
}

/* Point cond; if it failed, what the checks wrote, line by line. */
static void ok_out(int cond, const char *out, const char *what)
{
	if (ok(cond, "%s", what))
		return;
	while (*out) {
		int len = (int)strcspn(out, "\n");

		diag("stderr: %.*s", len, out);
		out += len + (out[len] != 0);
	}
}

static int lines(const char *s)
{
	int k = 0;

	for (; *s; s++)
		k += *s == '\n';
	return k;
}

static const struct ring_args cfg = {
	.n = 4, .r = 8, .m = 100, .d = 64, .p = 1, .threads = 32, .msgs = 3200
};

/* Checks 32 members, each with M tokens but those below `bad` members. */
static int check_run(uint64_t bad, uint64_t short_by, int pad_bad,
		     char *out, size_t n)
{
	struct ring_check rc = { "t_ringcheck", &cfg, 0, 0 };
	struct capture c;
	int rv;

	capture_start(&c);
	for (uint64_t i = 0; i < cfg.threads; i++)
		ring_check_member(&rc, i, cfg.m - (i < bad ? short_by : 0),
				  i < bad && pad_bad);
	rv = ring_check_done(&rc);
	capture_end(&c, out, n);
	return rv;
}

static void test_members(void)
{
	char out[4096];
	int rv;

	rv = check_run(0, 0, 0, out, sizeof out);
	ok_out(rv == 0 && out[0] == 0, out,
	       "all members with M tokens pass, silently");
	rv = check_run(1, 1, 0, out, sizeof out);
	ok_out(rv == -1 && strstr(out, "thread 0 (cycle 0) received 99 "
				   "tokens, expected 100\n") != NULL, out,
	       "one lost token fails, naming the member");
	ok_out(strstr(out, "1 bad threads, 3199 of 3200 messages") != NULL,
	       out, "the summary counts the messages");
	rv = check_run(1, 0, 1, out, sizeof out);
	ok_out(rv == -1 && strstr(out, "; stack pad corrupted") != NULL, out,
	       "a corrupted pad fails with all tokens received");
	rv = check_run(cfg.threads, 100, 0, out, sizeof out);
	ok_out(rv == -1 && lines(out) == 11 &&
	       strstr(out, "32 bad threads, 0 of") != NULL, out,
	       "32 bad members: 10 named, then the summary");
}

static void test_pad(void)
{
	unsigned char pad[64];

	pad_fill(pad, sizeof pad);
	ok(pad_intact(pad, sizeof pad), "a filled pad is intact");
	pad[63] ^= 1;
	ok(!pad_intact(pad, sizeof pad), "a changed last byte is seen");
	pad_fill(pad, sizeof pad);
	pad[0] = 0;
	ok(!pad_intact(pad, sizeof pad), "a changed first byte is seen");
	ok(pad_intact(pad, 0), "an empty pad is intact");
}

int main(void)
{
	test_members();
	test_pad();
	return tap_done();
}
