/*
 * The ring peers' shared checks (bench/peers/ring-check.h) fail when they
 * should: a short token count, a token not handed, one left over, a
 * corrupted pad, and more bad members than are named. ring-pthread,
 * ring-boost and the C++20 peers trust them.
 */
#include "tap.h"
#include "peers/ring-check.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Point cond; if it failed, what the checks wrote. */
static void ok_out(int cond, const char *out, const char *what)
{
	if (!ok(cond, "%s", what))
		diag_lines(out);
}

static int lines(const char *s)
{
	int k = 0;

	for (; *s; s++)
		k += *s == '\n';
	return k;
}

static const struct ring_args cfg = {
	.ra_n = 4, .ra_r = 8, .ra_m = 100, .ra_d = 64, .ra_p = 1,
	.ra_threads = 32, .ra_msgs = 3200
};

/* Members below r_bad end as r_end says (short by me_received tokens). */
struct run {
	uint64_t               r_bad;
	struct ring_member_end r_end;
};

/* In a child: checks 32 members; exits 0 if they pass, 1 if not. */
static void run_checks(void *arg)
{
	const struct run *r = arg;
	struct ring_check rc = { "t_ringcheck", &cfg, 0, 0 };

	for (uint64_t i = 0; i < cfg.ra_threads; i++) {
		struct ring_member_end e = { cfg.ra_m, 0, 0, 0 };

		if (i < r->r_bad) {
			e = r->r_end;
			e.me_received = cfg.ra_m - e.me_received;
		}
		ring_check_member(&rc, i, &e);
	}
	_exit(ring_check_done(&rc) == 0 ? 0 : 1);
}

/* The checks' exit status (-1 if they did not exit), stderr in out. */
static int check_run(uint64_t bad, uint64_t short_by, int pad_bad,
		     char *out, size_t n)
{
	struct run r = { bad, { short_by, 0, 0, pad_bad } };
	int status = stderr_of(run_checks, &r, out, n);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* One member with all its tokens, but u of them not handed, l left over. */
static int check_unhanded(uint64_t u, uint64_t l, char *out, size_t n)
{
	struct run r = { 1, { 0, u, l, 0 } };
	int status = stderr_of(run_checks, &r, out, n);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_members(void)
{
	char out[4096];
	int rv;

	rv = check_run(0, 0, 0, out, sizeof out);
	ok_out(rv == 0 && out[0] == 0, out,
	       "all members with M tokens pass, silently");
	rv = check_run(1, 1, 0, out, sizeof out);
	ok_out(rv == 1 && strstr(out, "thread 0 (cycle 0) received 99 "
				   "tokens, expected 100\n") != NULL, out,
	       "one lost token fails, naming the member");
	ok_out(strstr(out, "1 bad threads, 3199 of 3200 messages") != NULL,
	       out, "the summary counts the messages");
	rv = check_run(1, 0, 1, out, sizeof out);
	ok_out(rv == 1 && strstr(out, "; stack pad corrupted") != NULL, out,
	       "a corrupted pad fails with all tokens received");
	rv = check_unhanded(2, 0, out, sizeof out);
	ok_out(rv == 1 && strstr(out, "thread 0 (cycle 0) received 100 tokens, "
				   "expected 100; woken 2 times before a "
				   "token was handed\n") != NULL, out,
	       "waits that got tokens not handed fail, counted");
	rv = check_unhanded(0, 1, out, sizeof out);
	ok_out(rv == 1 && strstr(out, "expected 100; 1 left over\n") != NULL,
	       out, "a token left over fails");
	rv = check_run(cfg.ra_threads, 100, 0, out, sizeof out);
	ok_out(rv == 1 && lines(out) == 11 &&
	       strstr(out, "32 bad threads, 0 of") != NULL, out,
	       "32 bad members: 10 named, then the summary");
}

/* The count a neighbour keeps and a member checks after each wait. */
static void test_handed(void)
{
	uint32_t handed = 0;

	ok(!ring_token_handed(&handed, 1),
	   "a first token before any was handed is caught");
	ring_count_handed(&handed);
	ring_count_handed(&handed);
	ok(ring_token_handed(&handed, 1) && ring_token_handed(&handed, 2),
	   "with two handed, the first and second pass");
	ok(!ring_token_handed(&handed, 3), "and a third is caught");
	handed = 5;	/* 2^32 + 5 handed */
	ok(ring_token_handed(&handed, (UINT64_C(1) << 32) + 5),
	   "counts compare modulo 2^32: token 2^32 + 5 of as many handed");
	ok(!ring_token_handed(&handed, (UINT64_C(1) << 32) + 6),
	   "and one more is caught");
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
	test_handed();
	test_pad();
	return tap_done();
}
