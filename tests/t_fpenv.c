/* The floating-point control state belongs to each thread. */
#include "tap.h"
#include "tsched.h"

#include <fenv.h>
#ifdef __x86_64__
#include <xmmintrin.h>
#endif

static int sse_rounding(void)
{
#ifdef __x86_64__
	switch (_mm_getcsr() & _MM_ROUND_MASK) {
	case _MM_ROUND_UP:
		return FE_UPWARD;
	case _MM_ROUND_DOWN:
		return FE_DOWNWARD;
	case _MM_ROUND_TOWARD_ZERO:
		return FE_TOWARDZERO;
	default:
		return FE_TONEAREST;
	}
#else
	return fegetround();
#endif
}

static int seen[4][2];

static void rounder(void *arg)
{
	int *mine = arg;

	seen[mine[0]][0] = fegetround();
	fesetround(mine[1]);
	tsched_yield();
	tsched_yield();
	seen[mine[0]][1] = fegetround() == mine[1] &&
			   sse_rounding() == mine[1];
}

int main(void)
{
	static int args[4][2] = {
		{ 0, FE_UPWARD }, { 1, FE_DOWNWARD },
		{ 2, FE_TOWARDZERO }, { 3, FE_UPWARD },
	};
	struct tsched ts;

	tsched_init(&ts);
	for (int i = 0; i < 4; i++)
		tsched_spawn(&ts, rounder, args[i]);
	tsched_run(&ts);
	for (int i = 0; i < 4; i++) {
		ok(seen[i][0] == FE_TONEAREST,
		   "thread %d started with the caller's rounding mode", i);
		ok(seen[i][1], "thread %d kept its own rounding mode", i);
	}
	ok(fegetround() == FE_TONEAREST && sse_rounding() == FE_TONEAREST,
	   "usched_run's caller got its own mode back");
	return tap_done();
}
