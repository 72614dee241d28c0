/*
 * The floating-point control state belongs to each thread, unless the
 * dispatcher's threads share it (s_share_fpctl), which may be turned on and
 * off while threads are blocked. The exception flags are the native
 * thread's, shared.
 */
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

/* Sets the SSE rounding mode alone where there is one. */
static void set_sse_rounding(int mode)
{
#ifdef __x86_64__
	/* MXCSR keeps the x87 control word's rounding bits, 3 higher. */
	_Static_assert(FE_UPWARD << 3 == _MM_ROUND_UP &&
		       FE_DOWNWARD << 3 == _MM_ROUND_DOWN &&
		       FE_TOWARDZERO << 3 == _MM_ROUND_TOWARD_ZERO &&
		       FE_TONEAREST << 3 == _MM_ROUND_NEAREST,
		       "SSE rounding bits are the x87 ones shifted by 3");
	_mm_setcsr((_mm_getcsr() & ~_MM_ROUND_MASK) | (unsigned)mode << 3);
#else
	fesetround(mode);
#endif
}

/*
 * The rounding mode if the x87 and SSE units agree on it (aarch64 has one
 * unit), or -2.
 */
static int both_rounding(void)
{
	return sse_rounding() == fegetround() ? fegetround() : -2;
}

enum { THREADS = 7 };
static int seen[THREADS][2];

/* mine: index, mode for both units, then a mode for SSE alone or -1. */
static void rounder(void *arg)
{
	int *mine = arg;
	int sse = mine[2] >= 0 ? mine[2] : mine[1];

	seen[mine[0]][0] = both_rounding();
	fesetround(mine[1]);
	if (mine[2] >= 0)
		set_sse_rounding(mine[2]);
	tsched_yield();
	tsched_yield();
	seen[mine[0]][1] = sse_rounding() == sse &&
#ifdef __x86_64__
			   fegetround() == mine[1];	/* the x87 unit's */
#else
			   1;
#endif
}

/* After a run, usched_run's caller has its own mode back. */
static void caller_mode_back(int mode, const char *after)
{
	ok(fegetround() == mode && sse_rounding() == mode,
	   "usched_run's caller got its own mode %d back %s", mode, after);
}

static struct tsched shared;
static int found[2];

/* a: index, mode to set, then s_share_fpctl to set before yielding or -1. */
static void leaver(void *arg)
{
	int *a = arg;

	fesetround(a[1]);
	if (a[2] >= 0)
		shared.ts_s.s_share_fpctl = a[2];
	tsched_yield();
	found[a[0]] = fegetround();
	if (a[0] == 0)		/* thread 1 may be resumed after this */
		fesetround(FE_TOWARDZERO);
}

/* Thread 0 sets UPWARD and yields to thread 1, which sets DOWNWARD. */
static void run_shared(int share, int share_after)
{
	int args[2][3] = { { 0, FE_UPWARD, -1 },
			   { 1, FE_DOWNWARD, share_after } };

	tsched_init(&shared);
	shared.ts_s.s_share_fpctl = share;
	found[0] = found[1] = -1;
	tsched_spawn(&shared, leaver, args[0]);
	tsched_spawn(&shared, leaver, args[1]);
	tsched_run(&shared);
}

/* Sharing: a thread started after another set a mode runs with it. */
static int newcomer_mode = -1;

static void setter(void *arg)
{
	(void)arg;
	fesetround(FE_UPWARD);
	tsched_yield();
	found[0] = fegetround();
}

static void newcomer(void *arg)
{
	(void)arg;
	newcomer_mode = both_rounding();
}

static void test_shared_start(void)
{
	tsched_init(&shared);
	shared.ts_s.s_share_fpctl = 1;
	found[0] = -1;
	tsched_spawn(&shared, setter, NULL);
	tsched_spawn(&shared, newcomer, NULL);
	tsched_run(&shared);
	ok(newcomer_mode == FE_UPWARD && found[0] == FE_UPWARD,
	   "shared: a thread started after another set a mode runs with it "
	   "(got %d)", newcomer_mode);
	caller_mode_back(FE_TONEAREST, "from threads started while sharing");
}

static void test_shared(void)
{
	run_shared(1, -1);
	ok(found[0] == FE_DOWNWARD && found[1] == FE_TOWARDZERO,
	   "shared: a thread resumes with the state the last one left");
	caller_mode_back(FE_TONEAREST, "from shared threads");
	run_shared(1, 0);
	ok(found[0] == FE_DOWNWARD,
	   "sharing turned off: a thread blocked while it was on keeps "
	   "the state in force");
	ok(found[1] == FE_DOWNWARD,
	   "sharing turned off: the thread that turned it off got its own");
	run_shared(0, 1);
	ok(found[0] == FE_UPWARD,
	   "sharing turned on: a thread blocked while it was off gets its "
	   "own back");
	ok(found[1] == FE_TOWARDZERO,
	   "sharing turned on: the thread that turned it on finds the state "
	   "the last one left");
	caller_mode_back(FE_TONEAREST, "after the toggles");
}

/*
 * Threads start with the mode of usched_run's caller, whatever it is, also
 * after others changed theirs, and keep their own; runs of threads with the
 * same state switch without reloading it.
 */
static void test_own(int caller)
{
	static int args[THREADS][3] = {
		{ 0, FE_UPWARD, -1 }, { 1, FE_DOWNWARD, -1 },
		{ 2, FE_TOWARDZERO, -1 }, { 3, FE_UPWARD, -1 },
		{ 4, FE_UPWARD, -1 }, { 5, FE_TONEAREST, FE_UPWARD },
		{ 6, FE_TONEAREST, -1 },
	};
	struct tsched ts;

	fesetround(caller);
	tsched_init(&ts);
	for (int i = 0; i < THREADS; i++)
		tsched_spawn(&ts, rounder, args[i]);
	tsched_run(&ts);
	for (int i = 0; i < THREADS; i++) {
		ok(seen[i][0] == caller, "thread %d started with the caller's "
		   "rounding mode %d in both units (got %d)", i, caller,
		   seen[i][0]);
		ok(seen[i][1], "thread %d kept its own rounding mode", i);
	}
	caller_mode_back(caller, "from its threads");
	fesetround(FE_TONEAREST);
}

/* Whether division by zero is flagged: in MXCSR alone on x86-64. */
static int divzero_flagged(void)
{
#ifdef __x86_64__
	return (_mm_getcsr() & _MM_EXCEPT_DIV_ZERO) != 0;
#else
	return fetestexcept(FE_DIVBYZERO) != 0;
#endif
}

static void divide_by_zero(void)
{
	volatile double one = 1.0, zero = 0.0, r;

	r = one / zero;
	(void)r;
}

/* Whether the flags are kept here at all: valgrind keeps none. */
static int flags_kept(void)
{
	int kept;

	feclearexcept(FE_ALL_EXCEPT);
	divide_by_zero();
	kept = divzero_flagged();
	feclearexcept(FE_ALL_EXCEPT);
	return kept;
}

static int flagged[3];

/* a: the rounding mode of each thread. Thread 0 raises the flag, thread 1
 * (started then) clears it, thread 0 raises it again and ends. */
static void raiser(void *arg)
{
	const int *a = arg;

	fesetround(a[0]);
	divide_by_zero();
	tsched_yield();
	flagged[1] = divzero_flagged();
	divide_by_zero();
}

static void clearer(void *arg)
{
	const int *a = arg;

	flagged[0] = divzero_flagged();
	fesetround(a[1]);
	feclearexcept(FE_ALL_EXCEPT);
	tsched_yield();
	flagged[2] = divzero_flagged();
}

/*
 * The flags follow the native thread across switches, starts and the
 * return home, whether the threads' control states are alike (no reload)
 * or not (each resume loads its thread's).
 */
static void test_flags(int mode0, int mode1, const char *states)
{
	int modes[2] = { mode0, mode1 };
	struct tsched ts;

	if (!flags_kept()) {
		ok(1, "# SKIP %s: dividing by zero raises no flag here",
		   states);
		return;
	}
	feclearexcept(FE_ALL_EXCEPT);
	tsched_init(&ts);
	tsched_spawn(&ts, raiser, modes);
	tsched_spawn(&ts, clearer, modes);
	tsched_run(&ts);
	ok(flagged[0], "%s: a thread starts with the flag another raised",
	   states);
	ok(!flagged[1], "%s: a thread resumes without the flag another "
	   "cleared", states);
	ok(flagged[2], "%s: a thread resumes with the flag another raised",
	   states);
	ok(divzero_flagged(), "%s: usched_run's caller gets the flag its "
	   "threads raised", states);
	caller_mode_back(FE_TONEAREST, "after raising flags");
	feclearexcept(FE_ALL_EXCEPT);
}

int main(void)
{
	test_own(FE_TONEAREST);
	test_own(FE_DOWNWARD);
	test_shared();
	test_shared_start();
	test_flags(FE_TONEAREST, FE_TONEAREST, "alike control states");
	test_flags(FE_UPWARD, FE_DOWNWARD, "their own control states");
	return tap_done();
}
