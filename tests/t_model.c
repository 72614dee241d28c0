/*
 * The schedulers against a reference model, with random programs.
 *
 * Each round generates a program, a script of waits, wakes, yields, spawns
 * and exits for every thread and one for the main native thread, by running it
 * on the model: one processor, a FIFO ready queue, wake-ups as counting
 * permits. Then it runs the program on rr or ll with 1 to 3 processors and
 * compares what happened with what the model says.
 *
 * Every thread waits exactly as often as it is woken, and only a thread
 * waits for its own wake-ups, so a wait that can return stays able to:
 * however the processors interleave, a run does every operation the model
 * did and finishes, and no wake can reach a finished thread. A thread wakes
 * only threads whose spawn is in its own past (its "known" set), so their
 * handles are there; the main native thread, which may wake any thread,
 * waits for the handle. On one processor with rr and a silent main, the
 * run must follow the model's order exactly, which is checked step by step.
 *
 * Usage: t_model [SEED [OPS]] (or USCHED_MODEL_SEED, USCHED_MODEL_OPS).
 */
#include "tap.h"
#include "tsched.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

enum {
	DEFAULT_OPS   = 1000000,	/* script operations in a default run */
	ROUND_OPS     = 4000,	/* at most, per round */
	ROUND_THREADS = 300,
	MAX_PROCS     = 3,
	GROUPS        = 8,	/* ll groups threads are spawned in */
	MAX_DEPTH     = 3,	/* frames a wait is made from */
	PAD           = 48,	/* bytes of pattern per frame */
	WATCHDOG      = 20	/* seconds a round may take */
};

enum { OP_WAIT, OP_WAKE, OP_YIELD, OP_SPAWN, OP_EXIT, OP_DONE, OP_START };

/* Model states of a thread. */
enum { M_READY = 1, M_RUNNING, M_BLOCKED, M_DONE };

/* What the final test points cover. */
enum {
	C_FINISH, C_CALLS, C_SPURIOUS, C_COUNT, C_SWITCH, C_WAKES, C_PLACE,
	C_ORDER, C_NR
};

static const char *const check_name[C_NR] = {
	"finish", "calls", "spurious", "count", "switch", "wakes", "place",
	"order"
};

static const char *const check_text[C_NR] = {
	[C_FINISH]   = "every thread ran its whole script and finished; "
		       "none ran on after done()",
	[C_CALLS]    = "every wait, wake, yield and spawn succeeded; saved "
		       "stacks came back intact",
	[C_SPURIOUS] = "no wait returned before a wake was issued for it",
	[C_COUNT]    = "each thread waited as often as it was woken and as "
		       "the model says",
	[C_SWITCH]   = "switches within threads + blocks seen .. threads + "
		       "waits + yields (exact in FIFO rounds)",
	[C_WAKES]    = "local and remote wake counters match the wakes, "
		       "spawns not counted",
	[C_PLACE]    = "threads keep their handle and processor; ll: group "
		       "g on g % P, rr: round robin",
	[C_ORDER]    = "on one processor the run follows the model's FIFO "
		       "order step by step",
};

struct op {
	int o_kind;
	int o_arg;	/* wake: the target; spawn: the child; wait, yield:
			 * depth */
};

/* A thread of the program: its script, its model state, what the run saw. */
struct mt {
	struct op *m_ops;
	int        m_nops, m_cap;
	int        m_group;
	int        m_limit;	/* script length at which it winds down */
	int       *m_known;	/* threads it may wake; main: its spawns */
	int        m_nknown, m_kcap;
	int        m_state;	/* model: M_* */
	int        m_permits;	/* model */
	int        m_waits;	/* model: waits in the script */
	int        m_blocks;	/* model: those that block (FIFO rounds) */
	int        m_yields;	/* model: yields in the script */
	int        m_yield_blocks;	/* model: those that let another run */

	void      *m_handle;	/* set by the spawner and itself (atomic) */
	void      *m_spawned;	/* what so_spawn() returned */
	void      *m_self;	/* what so_self() returned in the thread */
	long       m_wakes;	/* wakes issued to it, counted first (atomic) */
	int        m_waited;	/* its waits that returned */
	int        m_seen;	/* of those, seen to let another thread run */
	int        m_yield_seen;	/* yields seen to, likewise */
	int        m_pc;
	int        m_native;	/* the native thread it ran on */
	int        m_exited;
	int        m_after_done;
};

struct round {
	const struct sched_ops *r_ops;
	int                     r_procs;
	int                     r_fifo;	/* rr, P=1, main silent: exact order */
	int                     r_main_pct;	/* how often main acts */
	long                    r_budget;	/* ops left to generate */
	int                     r_cap;		/* threads at most */
	int                     r_n0;		/* spawned before start */
	struct mt              *r_t;
	int                     r_nt;
	struct mt               r_main;
	/* The model. */
	int                    *r_queue;	/* ready FIFO, ring of r_cap */
	unsigned                r_head, r_tail;
	int                     r_cur;		/* running thread, or -1 */
	int                     r_live, r_blocked;
	int                    *r_trace;	/* FIFO rounds: who runs op i */
	int                     r_ntrace, r_tcap;
	/* The run. */
	int                     r_pos;		/* FIFO rounds: ops that ran */
	int                     r_off_order;	/* left the model's order */
	unsigned                r_fault_mask;	/* atomic */
	long                    r_faults;	/* atomic */
	int                     r_fault_tid;
	const char             *r_fault_what;
	char                    r_name[96];
};

static const struct sched_ops *rr_sched, *ll_sched;
static struct round R;
static unsigned long rng;

static int rnd(int n)
{
	return (int)(tap_rand(&rng) % (unsigned long)n);
}

static int chance(int pct)
{
	return rnd(100) < pct;
}

static void *grow(void *p, int *cap, int need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = need < 8 ? 16 : 2 * need;
	p = realloc(p, *cap * size);
	require(p != NULL);
	return p;
}

static int tid(const struct mt *t)
{
	return t == &R.r_main ? -1 : (int)(t - R.r_t);
}

/* ======================== The model ======================== */

static void emit(struct mt *w, int kind, int arg)
{
	w->m_ops = grow(w->m_ops, &w->m_cap, w->m_nops + 1, sizeof(struct op));
	w->m_ops[w->m_nops++] = (struct op){ kind, arg };
	R.r_budget--;
	if (R.r_fifo && w != &R.r_main) {
		R.r_trace = grow(R.r_trace, &R.r_tcap, R.r_ntrace + 1,
				 sizeof(int));
		R.r_trace[R.r_ntrace++] = tid(w);
	}
}

static void know(struct mt *t, int x)
{
	t->m_known = grow(t->m_known, &t->m_kcap, t->m_nknown + 1, sizeof(int));
	t->m_known[t->m_nknown++] = x;
}

/* t learns what from knows, but for finished threads. */
static void know_all(struct mt *t, const struct mt *from)
{
	for (int i = 0; i < from->m_nknown; i++) {
		if (R.r_t[from->m_known[i]].m_state != M_DONE)
			know(t, from->m_known[i]);
	}
}

/* A random thread of set (all threads if NULL) that is blocked, or if
 * !blocked that has not finished; -1 if none. */
static int pick(const int *set, int n, int blocked)
{
	int start = n > 0 ? rnd(n) : 0;

	for (int i = 0; i < n; i++) {
		int x = (start + i) % n;
		int s;

		x = set != NULL ? set[x] : x;
		s = R.r_t[x].m_state;
		if (blocked ? s == M_BLOCKED : s != M_DONE)
			return x;
	}
	return -1;
}

/* In FIFO rounds the run follows the model: every thread is known. */
static int pick_known(const struct mt *t, int blocked)
{
	if (R.r_fifo)
		return pick(NULL, R.r_nt, blocked);
	return pick(t->m_known, t->m_nknown, blocked);
}

static void m_ready(int x)
{
	R.r_t[x].m_state = M_READY;
	R.r_queue[R.r_tail++ % R.r_cap] = x;
}

static void m_wake(struct mt *w, int x)
{
	struct mt *t = &R.r_t[x];

	emit(w, OP_WAKE, x);
	if (t->m_state == M_BLOCKED) {
		R.r_blocked--;
		m_ready(x);
	} else {
		t->m_permits++;
	}
}

static void m_wait(struct mt *t)
{
	emit(t, OP_WAIT, rnd(MAX_DEPTH + 1));
	t->m_waits++;
	if (t->m_permits > 0) {
		t->m_permits--;
		return;
	}
	t->m_state = M_BLOCKED;
	t->m_blocks++;
	R.r_blocked++;
	R.r_cur = -1;
}

/* t goes behind the ready threads; with none, it runs on. */
static void m_yield(struct mt *t)
{
	emit(t, OP_YIELD, rnd(MAX_DEPTH + 1));
	t->m_yields++;
	if (R.r_head == R.r_tail)
		return;
	t->m_yield_blocks++;
	m_ready(tid(t));
	R.r_cur = -1;
}

static void m_spawn(struct mt *w)
{
	int x = R.r_nt++;
	struct mt *c = &R.r_t[x];

	*c = (struct mt){ .m_group = rnd(GROUPS), .m_limit = 1 + rnd(64) };
	emit(w, OP_SPAWN, x);
	know_all(c, w);		/* whatever the spawner knows, and itself */
	know(c, x);
	know(w, x);
	R.r_live++;
	m_ready(x);
}

static void m_exit(struct mt *t)
{
	emit(t, chance(50) ? OP_EXIT : OP_DONE, 0);
	t->m_state = M_DONE;
	R.r_live--;
	R.r_cur = -1;
}

/*
 * t is about to leave the processor. If nothing else is ready, it wakes a
 * blocked thread it knows; in FIFO rounds, where main cannot help, a thread
 * about to wait with none to wake wakes itself, so it does not block.
 */
static void m_unstall(struct mt *t, int waiting)
{
	int x;

	if (R.r_head != R.r_tail)
		return;
	x = pick_known(t, 1);
	if (x < 0 && waiting && R.r_fifo)
		x = tid(t);
	if (x >= 0)
		m_wake(t, x);
}

/* One step of the running thread t. */
static void m_step(struct mt *t)
{
	int c = rnd(100), x;

	if (c < 8 || t->m_nops >= t->m_limit || R.r_budget <= 0) {
		if (t->m_permits > 0) {		/* use them up first */
			m_wait(t);
		} else {
			m_unstall(t, 0);
			m_exit(t);
		}
	} else if (c < 18 && R.r_nt < R.r_cap) {
		m_spawn(t);
	} else if (c < 48) {
		x = pick_known(t, 0);		/* at least t itself */
		for (int k = chance(75) ? 1 : 2 + rnd(3); k > 0; k--)
			m_wake(t, x);
	} else if (c < 56) {
		m_yield(t);
	} else {
		if (t->m_permits == 0)
			m_unstall(t, 1);
		m_wait(t);
	}
}

/* One step of main, after start: any thread's handle will show up. */
static void m_main(void)
{
	struct mt *m = &R.r_main;

	if (R.r_cur < 0 && R.r_head == R.r_tail) {	/* all blocked */
		m_wake(m, pick(NULL, R.r_nt, 1));
	} else if (chance(30) && R.r_nt < R.r_cap) {
		m_spawn(m);
	} else {
		int x = pick(NULL, R.r_nt, 0);

		for (int k = 1 + rnd(3); k > 0; k--)
			m_wake(m, x);
	}
}

static void m_round(void)
{
	R.r_n0 = 1 + rnd(8 < R.r_cap ? 8 : R.r_cap);
	for (int i = 0; i < R.r_n0; i++)
		m_spawn(&R.r_main);
	for (int i = 0; i < R.r_n0; i++) {	/* all published before start */
		R.r_t[i].m_nknown = 0;
		know_all(&R.r_t[i], &R.r_main);
	}
	if (!R.r_fifo || chance(50))		/* else fini starts them */
		emit(&R.r_main, OP_START, 0);
	R.r_cur = -1;
	for (;;) {
		if (R.r_cur < 0 && R.r_head != R.r_tail) {
			R.r_cur = R.r_queue[R.r_head++ % R.r_cap];
			R.r_t[R.r_cur].m_state = M_RUNNING;
		}
		if (!R.r_fifo && R.r_live > 0 &&
		    (R.r_cur < 0 || (R.r_budget > 0 && chance(R.r_main_pct)))) {
			m_main();
			continue;
		}
		if (R.r_cur < 0)
			break;
		m_step(&R.r_t[R.r_cur]);
	}
	require(R.r_live == 0 && R.r_blocked == 0);
}

/* ======================== The run ======================== */

static __thread struct mt *tl_last;	/* the thread that ran here last */
static __thread int tl_native;		/* names this native thread */
static int natives;

static int native(void)
{
	if (tl_native == 0)
		tl_native = __atomic_add_fetch(&natives, 1, __ATOMIC_RELAXED);
	return tl_native;
}

/* Records a failure; the first one's details are kept for the report. */
static void fault(struct mt *t, int check, const char *what)
{
	__atomic_fetch_or(&R.r_fault_mask, 1u << check, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&R.r_faults, 1, __ATOMIC_RELAXED) == 0) {
		R.r_fault_tid = tid(t);
		R.r_fault_what = what;
	}
}

/* A failure the round cannot go on from. */
static void fatal(struct mt *t, const char *what)
{
	diag("%s: thread %d, its operation %d", R.r_name, tid(t),
	     t->m_pc - 1);
	ok(0, "%s", what);
	exit(tap_done() | 1);
}

/* Calls op (a wait or a yield) depth frames down, each holding a pattern,
 * to vary the stack that is saved; the patterns must come back intact. */
static int op_at(struct mt *t, int depth, int (*op)(void))
{
	volatile unsigned char pad[PAD];
	int rc, bad = 0;

	for (int i = 0; i < PAD; i++)
		pad[i] = (unsigned char)(t->m_pc * 7 + depth * 31 + i);
	rc = depth > 0 ? op_at(t, depth - 1, op) : op();
	for (int i = 0; i < PAD; i++)
		bad |= pad[i] != (unsigned char)(t->m_pc * 7 + depth * 31 + i);
	if (bad)
		fault(t, C_CALLS, "a saved stack came back changed");
	return rc;
}

static void check_place_kept(struct mt *t)
{
	if (R.r_ops->so_self() != t->m_self || native() != t->m_native)
		fault(t, C_PLACE, "a thread changed handle or native thread");
}

static void run_wait(struct mt *t, int depth)
{
	if (op_at(t, depth, R.r_ops->so_wait) != 0)
		fault(t, C_CALLS, "wait failed");
	if (tl_last != t)
		t->m_seen++;
	if (++t->m_waited > __atomic_load_n(&t->m_wakes, __ATOMIC_SEQ_CST))
		fault(t, C_SPURIOUS, "a wait returned with no wake issued");
	check_place_kept(t);
}

static void run_yield(struct mt *t, int depth)
{
	if (op_at(t, depth, R.r_ops->so_yield) != 0)
		fault(t, C_CALLS, "yield failed");
	if (tl_last != t)
		t->m_yield_seen++;
	check_place_kept(t);
}

static void run_wake(struct mt *w, int x)
{
	struct mt *t = &R.r_t[x];
	void *h;

	while ((h = __atomic_load_n(&t->m_handle, __ATOMIC_ACQUIRE)) == NULL) {
		if (w != &R.r_main)
			fatal(w, "a thread woke a thread not spawned yet");
		sched_yield();
	}
	/* Counted first: a wait that returns must find its wake counted. */
	__atomic_fetch_add(&t->m_wakes, 1, __ATOMIC_SEQ_CST);
	if (R.r_ops->so_wake(h) != 0)
		fault(w, C_CALLS, "wake failed");
}

static void body(void *arg);

static void run_spawn(struct mt *w, int x)
{
	struct mt *c = &R.r_t[x];
	void *h = R.r_ops->so_spawn(body, c, c->m_group);

	if (h == NULL)
		fatal(w, "spawn failed");
	c->m_spawned = h;
	__atomic_store_n(&c->m_handle, h, __ATOMIC_RELEASE);
}

static void body(void *arg)
{
	struct mt *t = arg;

	/* The spawner may not have published the handle yet: those who know
	 * the thread through it (itself, its children) find it here. */
	t->m_self = R.r_ops->so_self();
	__atomic_store_n(&t->m_handle, t->m_self, __ATOMIC_RELEASE);
	t->m_native = native();
	for (;;) {
		struct op o = t->m_ops[t->m_pc++];

		tl_last = t;
		if (R.r_fifo && !R.r_off_order &&
		    R.r_trace[R.r_pos++] != tid(t)) {
			diag("operation %d of the round: the model runs "
			     "thread %d", R.r_pos - 1, R.r_trace[R.r_pos - 1]);
			R.r_off_order = 1;	/* the trace says no more */
			fault(t, C_ORDER, "the run left the model's order");
		}
		switch (o.o_kind) {
		case OP_WAIT:
			run_wait(t, o.o_arg);
			break;
		case OP_WAKE:
			run_wake(t, o.o_arg);
			break;
		case OP_YIELD:
			run_yield(t, o.o_arg);
			break;
		case OP_SPAWN:
			run_spawn(t, o.o_arg);
			break;
		case OP_EXIT:
			t->m_exited = 1;
			return;
		case OP_DONE:
			t->m_exited = 1;
			R.r_ops->so_done();
			t->m_after_done = 1;
			return;
		}
	}
}

static void run_main(void)
{
	struct mt *m = &R.r_main;

	require(R.r_ops->so_init(R.r_procs, R.r_nt) == 0);
	while (m->m_pc < m->m_nops) {
		struct op *o = &m->m_ops[m->m_pc++];

		if (o->o_kind == OP_SPAWN)
			run_spawn(m, o->o_arg);
		else if (o->o_kind == OP_WAKE)
			run_wake(m, o->o_arg);
		else
			require(R.r_ops->so_start() == 0);
	}
	require(R.r_ops->so_fini() == 0);
}

/* ======================== Checks ======================== */

struct tally {
	long y_switches, y_local[MAX_PROCS], y_remote[MAX_PROCS];
	long y_max_stack;
	long y_threads, y_waits, y_seen, y_blocks;
	long y_yields, y_yield_seen, y_yield_blocks;
	long y_want_local[MAX_PROCS], y_want_remote[MAX_PROCS];
};

/* Where a wake or spawn aimed at t is counted: ll per processor, rr in
 * total (which rr processor a thread lands on depends on earlier rounds). */
static int slot(const struct mt *t)
{
	return R.r_ops == ll_sched ? t->m_group % R.r_procs : 0;
}

/* The wake counters the scripts imply, given where threads ran. */
static void want_wakes(struct tally *y, const struct mt *w)
{
	int here = w == &R.r_main ? 0 : w->m_native;

	for (int i = 0; i < w->m_nops; i++) {
		const struct op *o = &w->m_ops[i];
		const struct mt *t;

		if (o->o_kind != OP_WAKE)	/* a spawn is no wake */
			continue;
		t = &R.r_t[o->o_arg];
		if (here == t->m_native)
			y->y_want_local[slot(t)]++;
		else
			y->y_want_remote[slot(t)]++;
	}
}

static unsigned check_place(void)
{
	int rep[MAX_PROCS] = { 0 };
	int P = R.r_procs;

	for (int x = 0; x < R.r_nt; x++) {
		const struct mt *t = &R.r_t[x];

		if (t->m_self != t->m_spawned)
			return 1u << C_PLACE;
		if (R.r_ops != ll_sched)
			continue;
		if (rep[slot(t)] == 0)
			rep[slot(t)] = t->m_native;
		if (rep[slot(t)] != t->m_native)
			return 1u << C_PLACE;
	}
	for (int p = 0; p < P; p++) {
		for (int q = p + 1; q < P; q++) {
			if (rep[p] != 0 && rep[p] == rep[q])
				return 1u << C_PLACE;
		}
	}
	/* rr: main's spawns before start went to consecutive processors. */
	for (int i = 1; R.r_ops == rr_sched && i < R.r_n0; i++) {
		if ((P > 1 && R.r_t[i].m_native == R.r_t[i - 1].m_native) ||
		    (i >= P && R.r_t[i].m_native != R.r_t[i - P].m_native))
			return 1u << C_PLACE;
	}
	return 0;
}

static unsigned check_round(struct tally *y)
{
	unsigned bad = R.r_fault_mask;
	struct sched_stats st[MAX_PROCS];
	int slots = R.r_ops == ll_sched ? R.r_procs : 1;	/* as slot() */

	memset(y, 0, sizeof *y);
	y->y_threads = R.r_nt;
	require(tsched_stats_sum(R.r_ops, st, slots) == R.r_procs);
	for (int s = 0; s < slots; s++) {
		y->y_switches += st[s].ss_switches;
		y->y_local[s] = st[s].ss_local_wakes;
		y->y_remote[s] = st[s].ss_remote_wakes;
		if ((long)st[s].ss_max_stack > y->y_max_stack)
			y->y_max_stack = st[s].ss_max_stack;
	}
	want_wakes(y, &R.r_main);
	for (int x = 0; x < R.r_nt; x++) {
		struct mt *t = &R.r_t[x];

		if (t->m_pc != t->m_nops || !t->m_exited || t->m_after_done)
			bad |= 1u << C_FINISH;
		if (t->m_waited != t->m_waits || t->m_wakes != t->m_waits)
			bad |= 1u << C_COUNT;
		if (R.r_fifo && (t->m_seen != t->m_blocks ||
				 t->m_yield_seen != t->m_yield_blocks))
			bad |= 1u << C_SWITCH;
		y->y_waits += t->m_waits;
		y->y_seen += t->m_seen;
		y->y_blocks += t->m_blocks;
		y->y_yields += t->m_yields;
		y->y_yield_seen += t->m_yield_seen;
		y->y_yield_blocks += t->m_yield_blocks;
		want_wakes(y, t);
	}
	if (y->y_switches < y->y_threads + y->y_seen + y->y_yield_seen ||
	    y->y_switches > y->y_threads + y->y_waits + y->y_yields ||
	    (R.r_fifo && y->y_switches != y->y_threads + y->y_blocks +
					   y->y_yield_blocks) ||
	    (y->y_seen > 0 && y->y_max_stack == 0))
		bad |= 1u << C_SWITCH;
	for (int p = 0; p < MAX_PROCS; p++) {
		if (y->y_local[p] != y->y_want_local[p] ||
		    y->y_remote[p] != y->y_want_remote[p])
			bad |= 1u << C_WAKES;
	}
	return bad | check_place();
}

static void report_round(unsigned bad, const struct tally *y)
{
	long lw = 0, rw = 0, lg = 0, rg = 0;
	char names[80] = "";

	for (int p = 0; p < MAX_PROCS; p++) {
		lw += y->y_want_local[p];
		rw += y->y_want_remote[p];
		lg += y->y_local[p];
		rg += y->y_remote[p];
	}
	for (int c = 0; c < C_NR; c++) {
		if (bad & 1u << c)
			strcat(strcat(names, " "), check_name[c]);
	}
	diag("%s failed:%s; %ld threads, %ld waits (%ld seen to block), "
	     "%ld yields (%ld seen to switch), %ld switches, local/remote "
	     "wakes %ld/%ld (want %ld/%ld)", R.r_name, names, y->y_threads,
	     y->y_waits, y->y_seen, y->y_yields, y->y_yield_seen,
	     y->y_switches, lg, rg, lw, rw);
	if (R.r_faults > 0)
		diag("%ld faults, first in thread %d: %s", R.r_faults,
		     R.r_fault_tid, R.r_fault_what);
}

/* ======================== Rounds ======================== */

static void round_init(long nr, uint64_t seed, long long left)
{
	memset(&R, 0, sizeof R);
	rng = seed + (uint64_t)nr * 0xd1b54a32d192ed03ULL;
	R.r_ops = nr % 2 == 0 ? rr_sched : ll_sched;
	R.r_procs = 1 + rnd(MAX_PROCS);
	R.r_fifo = R.r_ops == rr_sched && R.r_procs == 1 && chance(50);
	R.r_main_pct = (int[]){ 1, 5, 25 }[rnd(3)];
	R.r_budget = 20 + rnd(ROUND_OPS);
	if (R.r_budget > left)
		R.r_budget = left;
	R.r_cap = 2 + rnd((int)test_threads(ROUND_THREADS));
	R.r_t = calloc(R.r_cap, sizeof *R.r_t);
	R.r_queue = calloc(R.r_cap, sizeof *R.r_queue);
	require(R.r_t != NULL && R.r_queue != NULL);
	snprintf(R.r_name, sizeof R.r_name, "seed %llu round %ld (%s P=%d%s)",
		 (unsigned long long)seed, nr, R.r_ops->so_name, R.r_procs,
		 R.r_fifo ? " FIFO" : "");
}

static long round_ops(void)
{
	long n = R.r_main.m_nops;

	for (int x = 0; x < R.r_nt; x++)
		n += R.r_t[x].m_nops;
	return n;
}

static void round_free(void)
{
	for (int x = 0; x < R.r_nt; x++) {
		free(R.r_t[x].m_ops);
		free(R.r_t[x].m_known);
	}
	free(R.r_main.m_ops);
	free(R.r_main.m_known);
	free(R.r_t);
	free(R.r_queue);
	free(R.r_trace);
}

/* Per scheduler: what the rounds covered and which checks failed. */
struct total {
	long o_rounds, o_fifo, o_ops, o_threads, o_waits, o_seen, o_remote;
	long o_yields, o_yield_seen;
	long o_failed[C_NR];
};

static void add(struct total *o, unsigned bad, const struct tally *y)
{
	o->o_rounds++;
	o->o_fifo += R.r_fifo;
	o->o_ops += round_ops();
	o->o_threads += y->y_threads;
	o->o_waits += y->y_waits;
	o->o_seen += y->y_seen;
	o->o_yields += y->y_yields;
	o->o_yield_seen += y->y_yield_seen;
	for (int p = 0; p < MAX_PROCS; p++)
		o->o_remote += y->y_remote[p];
	for (int c = 0; c < C_NR; c++)
		o->o_failed[c] += (bad >> c) & 1;
}

static void summary(const char *name, const struct total *o)
{
	diag("%s: %ld rounds (%ld FIFO), %ld operations, %ld threads, %ld "
	     "waits (%ld seen to block), %ld yields (%ld seen to switch), %ld "
	     "remote wakes", name, o->o_rounds, o->o_fifo, o->o_ops,
	     o->o_threads, o->o_waits, o->o_seen, o->o_yields,
	     o->o_yield_seen, o->o_remote);
	for (int c = 0; c < C_NR; c++) {
		if (c == C_ORDER && strcmp(name, "rr") != 0)
			continue;
		ok(o->o_failed[c] == 0, "%s: %s (%ld of %ld rounds failed)",
		   name, check_text[c], o->o_failed[c],
		   c == C_ORDER ? o->o_fifo : o->o_rounds);
	}
}

static void config(int argc, char **argv, uint64_t *seed, long long *ops)
{
	const char *s = argc > 1 ? argv[1] : getenv("USCHED_MODEL_SEED");
	const char *n = argc > 2 ? argv[2] : getenv("USCHED_MODEL_OPS");
	struct timespec ts;
	char *end;

	clock_gettime(CLOCK_REALTIME, &ts);
	*seed = (uint64_t)ts.tv_sec * 1000003 + ts.tv_nsec / 1000;
	/*
	 * Whole numbers only: a seed of "1e8" (OPS given alone) or OPS of
	 * "x" would otherwise run another seed, or nothing, and pass.
	 */
	if (s != NULL) {
		errno = 0;
		*seed = strtoull(s, &end, 0);
		/* strtoull takes "-1", also after spaces, as 2^64 - 1 */
		if (end == s || *end != 0 || errno != 0 ||
		    strchr(s, '-') != NULL) {
			fprintf(stderr, "usage: t_model [SEED [OPS]]: "
				"bad SEED '%s'\n", s);
			exit(2);
		}
	}
	/* Sanitizers and USCHED_TEST_THREADS scale the default down. */
	*ops = 10 * test_threads(DEFAULT_OPS / 10);
	if (n != NULL && (*ops = test_count(n)) == 0) {
		fprintf(stderr, "usage: t_model [SEED [OPS]]: bad OPS '%s' "
			"(1 to 1e18)\n", n);
		exit(2);
	}
}

/* config() in a child: bad arguments end it with exit 2. */
static void config_child(void *arg)
{
	char **argv = arg;
	uint64_t seed;
	long long ops;

	config(3, argv, &seed, &ops);
	exit(0);
}

/* test_threads() in a child, under USCHED_TEST_THREADS=arg: exit 2, or 0
 * if it read 20000. */
static void threads_child(void *arg)
{
	setenv("USCHED_TEST_THREADS", arg, 1);
	exit(test_threads(1000000) == 20000 ? 0 : 1);
}

static void test_config(void)
{
	static const char *const bad[][2] = {
		{ "1e8", "1000" }, { "abc", "1000" }, { "-1", "1000" },
		{ " -1", "1000" },
		{ "42", "xyz" }, { "42", "0" }, { "42", "1e4x" },
	};
	char out[512];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *argv[] = { "t_model", (char *)bad[i][0],
				 (char *)bad[i][1], NULL };
		int status = stderr_of(config_child, argv, out, sizeof out);

		ok(WIFEXITED(status) && WEXITSTATUS(status) == 2 &&
		   strstr(out, "usage: t_model") != NULL,
		   "t_model %s %s: a usage message and exit 2", bad[i][0],
		   bad[i][1]);
	}
	ok(stderr_of(threads_child, "2e4", out, sizeof out) == 0,
	   "USCHED_TEST_THREADS=2e4: 20000 threads");
	ok(WEXITSTATUS(stderr_of(threads_child, "5x", out, sizeof out)) == 2 &&
	   strstr(out, "USCHED_TEST_THREADS is '5x'") != NULL,
	   "USCHED_TEST_THREADS=5x: a message and exit 2");
}

int main(int argc, char **argv)
{
	struct total totals[2] = { { 0 } };
	long long left;
	uint64_t seed;
	int reported = 0;

	config(argc, argv, &seed, &left);
	test_config();
	rr_sched = sched_find("rr");
	ll_sched = sched_find("ll");
	require(rr_sched != NULL && ll_sched != NULL);
	diag("seed %llu, %lld operations (t_model SEED OPS repeats them)",
	     (unsigned long long)seed, left);
	for (long nr = 0; left > 0; nr++) {
		struct tally y;
		unsigned bad;

		round_init(nr, seed, left);
		m_round();
		tap_watchdog(WATCHDOG, "%s did not finish in %d s: a lost "
			     "wake-up or a deadlock", R.r_name, WATCHDOG);
		run_main();
		tap_watchdog_off();
		bad = check_round(&y);
		if (bad != 0 && reported++ < 10)
			report_round(bad, &y);
		add(&totals[R.r_ops == ll_sched], bad, &y);
		left -= round_ops();
		round_free();
	}
	summary("rr", &totals[0]);
	summary("ll", &totals[1]);
	return tap_done();
}
