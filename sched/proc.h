/*
 * Processors: the native threads a scheduler runs usched_run() on, and what
 * the schedulers share about them — pinning, sleeping when idle, thread
 * and stack-buffer pools, counters and termination.
 */
#ifndef SCHED_PROC_H
#define SCHED_PROC_H

#include "../usched.h"
#include "lock.h"
#include "sched.h"

#include <pthread.h>
#include <stddef.h>

/*
 * For a scheduler's wait, which programs built with -flto may then inline
 * into their loops: gcc 12 does so across files only with inline, a hint
 * on a definition in a .c file (which stays the external definition).
 * clang does unasked, and its -Wstatic-in-inline would take this for an
 * inline definition.
 */
#ifdef __clang__
#define LTO_INLINE
#else
#define LTO_INLINE inline
#endif

/* The library's own: not exported from libusched.so. */
#pragma GCC visibility push(hidden)

enum sched_state {
	ST_WAITING = 1,	/* blocked in wait */
	ST_READY,	/* in a ready queue */
	ST_RUNNING,
	ST_DONE,	/* finished; the struct waits for reuse */
	ST_SPAWNED	/* ll: spawned elsewhere, on its way to its processor */
};

/* What every scheduler keeps of a thread, first in its own thread struct. */
struct sched_thread {
	struct ustack        t_u;	/* first: ustack_self() is one */
	struct sched_thread *t_next;	/* ready queue or free list */
	long                 t_permits;	/* wakes not yet waited for (64-bit:
					 * no program wakes 2^63 times) */
	int                  t_state;	/* enum sched_state, atomic access */
	int                  t_holds;	/* remote wakes under way (atomic) */
};

/* A FIFO of ready threads. */
struct sched_queue {
	struct sched_thread *q_head;
	struct sched_thread *q_tail;
};

/* Memory carved in order from chunks that live until fini. */
struct arena {
	char   *a_next;
	size_t  a_left;
};

/* Stack buffers up to 4 KiB come in 16-byte classes. */
enum { BUF_CLASSES = 257, BUF_CLASS_SIZE = 16 };

struct proc {
	struct usched        p_sched;	/* first: s_next gets a struct proc */
	struct procs        *p_procs;
	int                  p_asleep;	/* futex word: 1 while sleeping */
	pthread_t            p_thread;
	struct sched_queue   p_ready;
	struct sched_stats   p_stats;
	struct sched_thread *p_free;	/* finished threads, for reuse */
	long                 p_live;	/* threads counted: procs_own_enter */
	long                 p_ended;	/* counts p keeps in ps_live for threads
					 * that ended: procs_own_leave */
	long                 p_repaid;	/* structs given back to p_spare */
	struct arena         p_arena;	/* thread structs and small buffers */
	void                *p_bufs[BUF_CLASSES];	/* free small buffers */
	/* For threads spawned from elsewhere, on a line apart. */
	struct sched_lock    p_lock	/* one such spawner at a time */
			     __attribute__((aligned(64)));
	struct arena         p_foreign;	/* under p_lock */
	struct sched_thread *p_spare;	/* structs given back for them */
	long                 p_owed;	/* structs taken for them (atomic) */
};

/* The schedulers: each one's slot in proc_current. */
enum { PROCS_RR, PROCS_LL, PROCS_SLOTS };

/* The processors of one scheduler. */
struct procs {
	char               *ps_base;	/* ps_nr processors of ps_size bytes */
	size_t              ps_size;
	size_t              ps_thread_size;	/* its thread struct's size */
	int                 ps_slot;	/* PROCS_* */
	int                 ps_nr;
	int                 ps_run;	/* processors started so far */
	int                 ps_pin;	/* pin processors to CPUs */
	int                 ps_finished;	/* fini done; only stats left */
	int                 ps_closing;	/* a fini runs or ran (atomic) */
	struct sched_lock   ps_starting;	/* held by a start: two would
					 * start a processor twice */
	long                ps_live;	/* LIVE_*, atomic */
	long                ps_wakers;	/* WAKERS_*, atomic */
	void               *ps_chunks;	/* every chunk of every arena */
};

/*
 * ps_live counts the threads spawned and not finished, LIVE_ONE each (or
 * one for all those a processor counts itself, below), plus
 * LIVE_EXITING once fini was called. When only that is left, the
 * processors stop, and spawns (from native threads outside the scheduler)
 * fail: no thread is added once a processor may have seen none.
 */
enum { LIVE_EXITING = 1, LIVE_ONE = 2 };

/*
 * Adds step to a count that fini shuts (ps_live, ps_wakers), by
 * compare-and-swap, unless it is shut: (*count & mask) == shut. 0 if so.
 */
static inline int count_enter(long *count, long step, long mask, long shut)
{
	long n = __atomic_load_n(count, __ATOMIC_RELAXED);

	do {
		if ((n & mask) == shut)
			return 0;
	} while (!__atomic_compare_exchange_n(count, &n, n + step, 1,
					      __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	return 1;
}

/* Wakes the processors that sleep, to see that they are to stop. */
void procs_kick_all(struct procs *ps);

/* Counts a new thread, unless the processors are stopping for want of any. */
static inline int procs_enter(struct procs *ps)
{
	return count_enter(&ps->ps_live, LIVE_ONE, ~0L, LIVE_EXITING);
}

/* Counts n threads out; the last ones out after fini stop the processors. */
static inline void procs_leave(struct procs *ps, long n)
{
	if (__atomic_sub_fetch(&ps->ps_live, n * LIVE_ONE, __ATOMIC_SEQ_CST) ==
	    LIVE_EXITING)
		procs_kick_all(ps);
}

/*
 * A thread p spawns for itself is counted in p_live, which only p
 * touches, and ps_live holds one LIVE_ONE for p while p_live is above 0.
 * A thread that ends on p takes one from p_live while there is any. Else
 * its LIVE_ONE (threads are alike to the count) stays in ps_live, kept in
 * p_ended: p's next spawn reuses it, or p gives it back when it idles
 * (procs_own_give_back, from proc_idle). ps_live thus always counts a
 * processor that has threads; it counts more only until that processor
 * idles, which fini waits for anyway. So the shared count, a line every
 * processor writes, is touched when p_live leaves 0 with nothing kept or
 * when p idles, not at every end of a thread spawned elsewhere.
 */
static inline int procs_own_enter(struct proc *p)
{
	if (p->p_live++ > 0)
		return 1;
	if (p->p_ended > 0) {
		p->p_ended--;
		return 1;
	}
	if (procs_enter(p->p_procs))
		return 1;
	p->p_live--;
	return 0;
}

/* On p: counts out a thread of p, however it was counted in. */
static inline void procs_own_leave(struct proc *p)
{
	if (p->p_live > 0 && --p->p_live > 0)
		return;
	p->p_ended++;
}

/* On p, idle: gives back the counts kept in p_ended. */
static inline void procs_own_give_back(struct proc *p)
{
	if (p->p_ended > 0) {
		procs_leave(p->p_procs, p->p_ended);
		p->p_ended = 0;
	}
}

/*
 * A wake from a native thread that is not one of the processors may
 * overlap fini, which frees the thread structs once it has joined the
 * processors. ps_wakers counts such wakes (WAKER_ONE each), and fini
 * frees nothing until they are done; once it has set WAKERS_CLOSED, a new
 * one finds every thread finished without touching it.
 */
enum { WAKERS_CLOSED = 1, WAKER_ONE = 2 };

static inline int procs_wake_enter(struct procs *ps)
{
	return count_enter(&ps->ps_wakers, WAKER_ONE, WAKERS_CLOSED,
			   WAKERS_CLOSED);
}

static inline void procs_wake_leave(struct procs *ps)
{
	__atomic_sub_fetch(&ps->ps_wakers, WAKER_ONE, __ATOMIC_RELEASE);
}

/*
 * Adds n to a counter of p_stats. Each counter has one writer at a time
 * (its processor, or a waker under rr's lock), but so_stats may read it
 * from any native thread meanwhile: relaxed atomics, which compile to the
 * plain load and store, and tear nothing.
 */
static inline void stat_add(unsigned long *c, unsigned long n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/*
 * The casts to struct proc go through void *: it is 64-byte aligned, which
 * neither char * nor struct usched * says (clang's -Wcast-align).
 */
static inline struct proc *proc_nth(struct procs *ps, int i)
{
	/* ps_base is 64-byte aligned, ps_size a multiple of 64 */
	return (void *)(ps->ps_base + (size_t)i * ps->ps_size);
}

/* The processor whose dispatcher s is, its first member. */
static inline struct proc *proc_of_sched(struct usched *s)
{
	return (void *)s;
}

/* Atomic: a wake through a stale handle may read it during a reuse. */
static inline struct proc *proc_of(struct sched_thread *t)
{
	return proc_of_sched(__atomic_load_n(&t->t_u.u_sched,
					     __ATOMIC_RELAXED));
}

/*
 * Whether p is one of ps's processors: a handle passed to the other
 * scheduler's wake is refused, not taken for a thread of its own.
 */
static inline int procs_have(struct procs *ps, struct proc *p)
{
	return p->p_procs == ps;
}

/* Wakers on other native threads read the state: access it atomically. */
static inline int thread_state(struct sched_thread *t)
{
	return __atomic_load_n(&t->t_state, __ATOMIC_ACQUIRE);
}

static inline void thread_set_state(struct sched_thread *t, int state)
{
	__atomic_store_n(&t->t_state, state, __ATOMIC_RELEASE);
}

/*
 * A finished thread's struct is reused by a later thread of its processor,
 * but not while a wake from another native thread may still reach it: such
 * a wake holds the struct from before it checks that the thread is alive
 * until it is done with it, and the reuse claims the struct by a
 * compare-and-swap on t_holds that fails while it is held. The struct
 * stays ST_DONE while it is set up, so a wake through a stale handle then
 * lets go and finds it finished.
 */
static inline void thread_hold(struct sched_thread *t)
{
	__atomic_fetch_add(&t->t_holds, 1, __ATOMIC_RELAXED);
}

static inline void thread_release(struct sched_thread *t)
{
	__atomic_fetch_sub(&t->t_holds, 1, __ATOMIC_RELEASE);
}

static inline int thread_hold_alive(struct sched_thread *t)
{
	__atomic_fetch_add(&t->t_holds, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&t->t_state, __ATOMIC_SEQ_CST) != ST_DONE)
		return 1;
	thread_release(t);
	return 0;
}

/*
 * The processor of scheduler `slot` the calling native thread is, or NULL:
 * one per scheduler, so that a scheduler's hot paths tell its own
 * processors from any other native thread with one load.
 */
extern __thread struct proc *proc_current[PROCS_SLOTS]
	__attribute__((tls_model("initial-exec")));

static inline struct proc *proc_here(int slot)
{
	return proc_current[slot];
}

/* True on a processor of ps, which fini joins before it frees anything. */
static inline int procs_inside(struct procs *ps)
{
	return proc_here(ps->ps_slot) != NULL;
}

/* The running thread of scheduler slot on this native thread, or NULL. */
static inline struct sched_thread *sched_self(int slot)
{
	struct proc *p = proc_here(slot);

	return p != NULL ? (struct sched_thread *)usched_running(&p->p_sched)
			 : NULL;
}

/*
 * Sets up nr processors of scheduler slot, of size bytes each (a struct
 * proc first) with s_next = next, for threads of thread_size bytes (a
 * struct sched_thread first); everything else is zeroed. expected, the
 * caller's count of threads to come, is only checked: the pools grow by
 * chunks as threads come and need no estimate.
 */
int  procs_init(struct procs *ps, int slot, int nr, int expected, size_t size,
		size_t thread_size, struct ustack *(*next)(struct usched *));
/* Starts the processors' native threads. */
int  procs_start(struct procs *ps);
/*
 * Marks the end, waits for every thread to finish and frees everything but
 * the processors' counters, which stay until the next procs_init. Before
 * the free, once no wake from elsewhere is under way, calls late(p) for
 * each processor, unless late is NULL.
 */
int  procs_fini(struct procs *ps, void (*late)(struct proc *p));
int  procs_stats(struct procs *ps, int i, struct sched_stats *out);
/* Ends the calling thread, which must be one of ps's: else stops the
 * program with a message that names caller. */
void procs_done(struct procs *ps, const char *caller)
	__attribute__((noreturn));

/*
 * The processor for the n-th new thread or group (n % ps_nr); NULL with
 * errno EINVAL if the processors are not set up.
 */
struct proc *procs_pick(struct procs *ps, unsigned long n);

/*
 * The pools (pool.c): thread structs and stack buffers.
 *
 * A thread struct for f(arg) on p, not held, and ST_DONE to wakes: the
 * scheduler sets up what follows the struct sched_thread, then publishes
 * the new thread's state (a release store), which lets wakes in. NULL with
 * errno ENOMEM if no memory, EINVAL if f is NULL or once fini found every
 * thread finished.
 */
struct sched_thread *proc_thread_new(struct proc *p, void (*f)(void *),
				     void *arg);
/* A processor's s_done: keeps the finished thread's struct for reuse. */
void  proc_thread_done(struct usched *s, struct ustack *u);
/* A processor's s_alloc and s_free. */
void *pool_buf_alloc(struct usched *s, int size);
void  pool_buf_free(struct usched *s, void *buf, int size);
/* Frees every chunk of every arena: at fini, once nothing can touch them. */
void  pool_free(struct procs *ps);

static inline void sched_enqueue(struct sched_queue *q,
				 struct sched_thread *t)
{
	t->t_next = NULL;
	if (q->q_tail != NULL)
		q->q_tail->t_next = t;
	else
		q->q_head = t;
	q->q_tail = t;
}

static inline void sched_push_front(struct sched_queue *q,
				    struct sched_thread *t)
{
	t->t_next = q->q_head;
	if (q->q_head == NULL)
		q->q_tail = t;
	q->q_head = t;
}

/* Moves every thread of from, in order, behind those of q. */
static inline void sched_append(struct sched_queue *q,
				struct sched_queue *from)
{
	if (from->q_head == NULL)
		return;
	if (q->q_tail != NULL)
		q->q_tail->t_next = from->q_head;
	else
		q->q_head = from->q_head;
	q->q_tail = from->q_tail;
}

static inline struct sched_thread *sched_dequeue(struct sched_queue *q)
{
	struct sched_thread *t = q->q_head;

	if (t != NULL) {
		q->q_head = t->t_next;
		if (q->q_head == NULL)
			q->q_tail = NULL;
	}
	return t;
}

/*
 * With many threads, the next one's stack is rarely in the cache: start
 * loading it (up to 4 KiB) while the one just picked runs. Threads start
 * without a buffer (proc_thread_new), so a queued thread with one has
 * blocked and its u_used is set. Buffers are 16-byte aligned, so even a
 * small stack may span one line more than its size says, and one of 1 KiB
 * or more lies up to 63 bytes on in its buffer (ustack_saved). always_inline:
 * gcc drops calls to a function whose only effect is a prefetch.
 */
static inline __attribute__((always_inline))
void proc_prefetch_next(struct proc *p)
{
	struct sched_thread *n = p->p_ready.q_head;
	const char *buf;
	int len;

	if (n == NULL || (buf = n->t_u.u_stack) == NULL)
		return;
	len = n->t_u.u_used;
	__builtin_prefetch(buf);
	__builtin_prefetch(buf + 64);
	if (__builtin_expect(len > 128, 0)) {
		len += 63;
		if (len > 4096)
			len = 4096;
		for (int off = 128; off < len; off += 64)
			__builtin_prefetch(buf + off);
	}
	__builtin_prefetch(buf + len - 1);
}

/*
 * Idle: with nothing to run, a processor gives back the counts it kept
 * (p_ended), spins a little, then sleeps until proc_kick. has_work is
 * checked after announcing the sleep, so a kick is never lost. Returns at
 * once when the processors are to stop.
 */
void proc_idle(struct proc *p, int (*has_work)(struct proc *));
/* Wakes p if it sleeps. Call after making the work visible. */
void proc_kick(struct proc *p);
/* True once fini was called and every thread finished. */
int  procs_over(struct procs *ps);

#pragma GCC visibility pop

#endif /* SCHED_PROC_H */
