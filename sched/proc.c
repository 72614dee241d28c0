/*
 * Processors, shared by the schedulers: native threads pinned to CPUs,
 * futex sleep and wake-up, pools and counters.
 */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum {
	SPIN_ROUNDS = 200,		/* polls before sleeping */
	CHUNK_SIZE  = 1 << 20,		/* arenas grow by this much */
	/* A processor's native stack holds its running thread's: at least
	 * what a thread may block with, and as much again for the frames
	 * that do the switch, signal handlers and deeper calls. */
	PROC_STACK_MIN = 2 * USCHED_STACK_MAX_DEFAULT
};

__thread struct proc *proc_current[PROCS_SLOTS];
static int pinning = -1;	/* -1: as USCHED_PIN says */

void sched_set_pinning(int on)
{
	pinning = on;
}

static int share_fpctl;

void sched_set_share_fpctl(int on)
{
	share_fpctl = on;
}

/*
 * Checked by procs_init and decided by procs_start, on the caller's thread,
 * once for all processors: 1 or 0, or -1 if USCHED_PIN is set to neither
 * "0" nor "1" (empty is unset, as the shell's USCHED_PIN= means).
 */
static int pinning_on(void)
{
	const char *env = getenv("USCHED_PIN");

	if (pinning >= 0 || env == NULL || *env == 0)
		return pinning != 0;
	return strcmp(env, "1") == 0 ? 1 : strcmp(env, "0") == 0 ? 0 : -1;
}

static void futex_wait(int *word, int val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/*
 * A new chunk, on the list fini frees. An arena that filled a chunk will
 * likely fill the next: its pages are then faulted in with one call rather
 * than one page fault each (a hint; kernels before 5.14 refuse it). An
 * arena's first chunk is left alone: with many processors, a few threads
 * on each would otherwise pay a whole chunk each.
 */
static void **chunk_new(struct procs *ps, int populate)
{
	void **c = malloc(CHUNK_SIZE);

	if (c == NULL)
		return NULL;
#ifdef MADV_POPULATE_WRITE
	if (populate) {
		uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
		uintptr_t from = ((uintptr_t)c + page - 1) & ~(page - 1);
		uintptr_t to = ((uintptr_t)c + CHUNK_SIZE) & ~(page - 1);

		madvise((void *)from, to - from, MADV_POPULATE_WRITE);
	}
#endif
	*c = __atomic_load_n(&ps->ps_chunks, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&ps->ps_chunks, c, c, 1,
					    __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	return c;
}

/*
 * Arenas: thread structs and small stack buffers are carved one after the
 * other from chunks that live until fini, with no per-object header, and
 * are reused through free lists, never returned before fini. So the memory
 * a thread struct was in never becomes anything else: a wake of a finished
 * thread finds ST_DONE, not freed memory.
 */
static void *arena_carve(struct procs *ps, struct arena *a, size_t size)
{
	void *mem;

	size = (size + 15) & ~(size_t)15;	/* buffers are 16-aligned */
	if (a->a_left < size) {
		void **c = chunk_new(ps, a->a_next != NULL);

		if (c == NULL)
			return NULL;
		a->a_next = (char *)(c + 2);	/* keep 16-byte alignment */
		a->a_left = CHUNK_SIZE - 2 * sizeof(void *);
	}
	mem = a->a_next;
	a->a_next += size;
	a->a_left -= size;
	return mem;
}

/*
 * Stack buffers: the dispatcher keeps a thread's buffer while it lives and
 * sizes it (nearly) exactly, so buffers up to 4 KiB come from the arena in
 * 16-byte classes, each with a free list for the next threads of this
 * processor, the only native thread that touches them. Bigger ones are
 * malloc's.
 */
static int buf_class(int size)
{
	return (size + BUF_CLASS_SIZE - 1) / BUF_CLASS_SIZE;
}

static void *proc_buf_alloc(struct usched *s, int size)
{
	struct proc *p = (struct proc *)s;
	int c = buf_class(size);
	void *buf;

	if (c >= BUF_CLASSES)
		return malloc(size);
	buf = p->p_bufs[c];
	if (buf != NULL) {
		p->p_bufs[c] = *(void **)buf;
		return buf;
	}
	return arena_carve(p->p_procs, &p->p_arena, c * BUF_CLASS_SIZE);
}

static void proc_buf_free(struct usched *s, void *buf, int size)
{
	struct proc *p = (struct proc *)s;
	int c = buf_class(size);

	if (c >= BUF_CLASSES) {
		free(buf);
		return;
	}
	*(void **)buf = p->p_bufs[c];
	p->p_bufs[c] = buf;
}

/* Claims finished t for a new thread if no wake holds it: THREAD_NEW. */
static int thread_claim(struct sched_thread *t)
{
	int none = 0;

	return __atomic_compare_exchange_n(&t->t_holds, &none, THREAD_NEW, 0,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

static struct sched_thread *thread_carve(struct procs *ps, struct arena *a)
{
	struct sched_thread *t = arena_carve(ps, a, ps->ps_thread_size);

	if (t != NULL) {	/* a reused one keeps its scheduler's fields */
		memset(t, 0, ps->ps_thread_size);
		t->t_holds = THREAD_NEW;
	}
	return t;
}

/*
 * p_spare: a stack pushed on by p, and by a spawner giving back held
 * structs; popped from under ps_lock, by one spawner at a time, so a
 * popped head cannot have come back meanwhile (ABA).
 */
static void spare_push(struct proc *p, struct sched_thread *t)
{
	t->t_next = __atomic_load_n(&p->p_spare, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&p->p_spare, &t->t_next, t, 1,
					    __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

static struct sched_thread *spare_pop(struct proc *p)
{
	struct sched_thread *t = __atomic_load_n(&p->p_spare,
						 __ATOMIC_ACQUIRE);

	while (t != NULL &&
	       !__atomic_compare_exchange_n(&p->p_spare, &t, t->t_next, 1,
					    __ATOMIC_ACQUIRE,
					    __ATOMIC_ACQUIRE))
		;
	return t;
}

/* A spare struct no wake holds; the held ones go back, for later. */
static struct sched_thread *spare_claim(struct proc *p)
{
	struct sched_thread *t, *held = NULL, *next;

	while ((t = spare_pop(p)) != NULL && !thread_claim(t)) {
		t->t_next = held;
		held = t;
	}
	for (; held != NULL; held = next) {
		next = held->t_next;
		spare_push(p, held);
	}
	return t;
}

/*
 * Structs are reused only for threads of the processor they last served:
 * a late wake of the struct's last thread then still goes to the
 * processor it names. p's own spawns take p_free. A spawn from elsewhere
 * takes a struct p gave back to p_spare, or a new one (apart from p's
 * own, no false sharing), and p owes one back from the next thread that
 * ends, so such spawns do not grow memory without bound.
 */
static struct sched_thread *thread_mem(struct proc *p)
{
	struct procs *ps = p->p_procs;
	struct sched_thread *t;

	if (proc_here(ps->ps_slot) == p) {
		struct sched_thread **prev = &p->p_free;

		for (t = *prev; t != NULL; prev = &t->t_next, t = *prev) {
			if (thread_claim(t)) {
				*prev = t->t_next;
				return t;
			}
		}
		return thread_carve(ps, &p->p_arena);
	}
	pthread_mutex_lock(&ps->ps_lock);
	t = spare_claim(p);
	if (t == NULL)
		t = thread_carve(ps, &p->p_foreign);
	if (t != NULL)
		__atomic_fetch_add(&p->p_owed, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ps->ps_lock);
	return t;
}

/* Counts a new thread, unless the processors are stopping for want of any. */
static int procs_enter(struct procs *ps)
{
	return count_enter(&ps->ps_live, LIVE_ONE, ~0L, LIVE_EXITING);
}

/* Wakes the processors that sleep, to see that they are to stop. */
static void procs_kick_all(struct procs *ps)
{
	for (int i = 0; i < ps->ps_nr; i++)
		proc_kick(proc_nth(ps, i));
}

/* Counts a thread out; the last one out after fini stops the processors. */
static void procs_leave(struct procs *ps)
{
	if (__atomic_sub_fetch(&ps->ps_live, LIVE_ONE, __ATOMIC_SEQ_CST) ==
	    LIVE_EXITING)
		procs_kick_all(ps);
}

struct proc *procs_pick(struct procs *ps, unsigned long n)
{
	if (ps->ps_base == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return proc_nth(ps, n % ps->ps_nr);
}

struct sched_thread *proc_thread_new(struct proc *p, void (*f)(void *),
				     void *arg)
{
	struct sched_thread *t;

	if (f == NULL || !procs_enter(p->p_procs)) {
		errno = EINVAL;
		return NULL;
	}
	t = thread_mem(p);
	if (t == NULL) {
		procs_leave(p->p_procs);
		errno = ENOMEM;
		return NULL;
	}
	ustack_init(&t->t_u, &p->p_sched, f, arg, NULL, 0);
	t->t_next = NULL;
	t->t_permits = 0;
	thread_set_state(t, ST_DONE);	/* to wakes from p: not yet there */
	return t;
}

/*
 * The s_done call-back: t's struct goes on p's free list, or to p_spare
 * if p owes one.
 */
static void proc_done(struct usched *s, struct ustack *u)
{
	struct proc *p = (struct proc *)s;
	struct sched_thread *t = (struct sched_thread *)u;

	/* seq_cst: a remote waker that holds t sees it, or t is held */
	__atomic_store_n(&t->t_state, ST_DONE, __ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(&p->p_owed, __ATOMIC_RELAXED) >
			     0, 0)) {
		__atomic_fetch_sub(&p->p_owed, 1, __ATOMIC_RELAXED);
		spare_push(p, t);
	} else {
		t->t_next = p->p_free;
		p->p_free = t;
	}
	procs_leave(p->p_procs);
}

int procs_over(struct procs *ps)
{
	return __atomic_load_n(&ps->ps_live, __ATOMIC_SEQ_CST) == LIVE_EXITING;
}

void proc_idle(struct proc *p, int (*has_work)(struct proc *))
{
	for (int i = 0; i < SPIN_ROUNDS; i++) {
		if (has_work(p) || procs_over(p->p_procs))
			return;
		cpu_relax();
	}
	/*
	 * Said before looking for work, which a waker gives before looking at
	 * p_asleep (proc_kick): one of the two sees the other. The fence, not
	 * a seq_cst store, keeps the store before the loads: qemu-user lets
	 * aarch64's ldar pass an earlier stlr, and a processor slept through
	 * its only wake.
	 */
	__atomic_store_n(&p->p_asleep, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!has_work(p) && !procs_over(p->p_procs)) {
		stat_add(&p->p_stats.ss_sleeps, 1);
		while (__atomic_load_n(&p->p_asleep, __ATOMIC_SEQ_CST))
			futex_wait(&p->p_asleep, 1);
	}
	__atomic_store_n(&p->p_asleep, 0, __ATOMIC_RELAXED);
}

void proc_kick(struct proc *p)
{
	if (__atomic_load_n(&p->p_asleep, __ATOMIC_SEQ_CST) &&
	    __atomic_exchange_n(&p->p_asleep, 0, __ATOMIC_SEQ_CST))
		futex_wake(&p->p_asleep);
}

int procs_init(struct procs *ps, int slot, int nr, size_t size,
	       size_t thread_size, struct ustack *(*next)(struct usched *))
{
	if (nr <= 0 || nr > 4096)
		return -EINVAL;
	if (ps->ps_base != NULL && !ps->ps_finished)	/* fini first */
		return -EBUSY;
	if (pinning_on() < 0)	/* said before any thread is spawned */
		return -EINVAL;
	free(ps->ps_base);	/* kept by the last fini for its counters */
	size = (size + 63) & ~(size_t)63;	/* a cache line each */
	*ps = (struct procs){ .ps_slot = slot, .ps_size = size, .ps_nr = nr,
			      .ps_thread_size = thread_size };
	ps->ps_base = aligned_alloc(64, size * nr);
	if (ps->ps_base == NULL)
		return -ENOMEM;
	memset(ps->ps_base, 0, size * nr);
	pthread_mutex_init(&ps->ps_lock, NULL);
	for (int i = 0; i < nr; i++) {
		struct proc *p = proc_nth(ps, i);

		p->p_procs = ps;
		p->p_idx = i;
		p->p_sched.s_next = next;
		p->p_sched.s_alloc = proc_buf_alloc;
		p->p_sched.s_free = proc_buf_free;
		p->p_sched.s_done = proc_done;
	}
	return 0;
}

/* Pins the calling native thread to the i-th CPU it may run on. */
static void proc_pin(int i)
{
	cpu_set_t allowed, one;
	int n = 0, cpu;

	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
		return;
	i %= CPU_COUNT(&allowed);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, &allowed) && n++ == i)
			break;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

static void *proc_main(void *arg)
{
	struct proc *p = arg;

	if (p->p_procs->ps_pin)
		proc_pin(p->p_idx);
	proc_current[p->p_procs->ps_slot] = p;
	usched_run(&p->p_sched);
	proc_current[p->p_procs->ps_slot] = NULL;
	return NULL;
}

/*
 * Attributes for a processor's native thread: the default ones (ulimit -s
 * sets the stack size), with a stack of at least PROC_STACK_MIN, so that a
 * small default crashes no thread the stack limit lets block. 0 or an
 * error number.
 */
static int proc_attr(pthread_attr_t *attr)
{
	size_t size;
	int rc = pthread_attr_init(attr);

	if (rc != 0)
		return rc;
	rc = pthread_attr_getstacksize(attr, &size);	/* glibc: the default */
	if (rc == 0 && size < PROC_STACK_MIN)
		rc = pthread_attr_setstacksize(attr, PROC_STACK_MIN);
	if (rc != 0)
		pthread_attr_destroy(attr);
	return rc;
}

/*
 * Starts the processors not running yet, ps_starting held. If one cannot
 * be started, the error is returned and the next procs_start or procs_fini
 * tries again from there: its threads must not be stranded.
 */
static int procs_start_held(struct procs *ps)
{
	pthread_attr_t attr;
	int pin, rc;

	if (ps->ps_run == ps->ps_nr)
		return -EALREADY;
	if (ps->ps_run == 0) {	/* not on a retry: started ones read it */
		pin = pinning_on();
		if (pin < 0)
			return -EINVAL;
		ps->ps_pin = pin;
	}
	if ((rc = proc_attr(&attr)) != 0)
		return -rc;
	for (; ps->ps_run < ps->ps_nr; ps->ps_run++) {
		struct proc *p = proc_nth(ps, ps->ps_run);

		p->p_sched.s_share_fpctl = share_fpctl;
		rc = pthread_create(&p->p_thread, &attr, proc_main, p);
		if (rc != 0)
			break;
	}
	pthread_attr_destroy(&attr);
	return -rc;
}

/*
 * Starts, one native thread at a time: two would start a processor twice.
 * The holder only creates native threads, so a short spin will do.
 */
static void procs_start_hold(struct procs *ps)
{
	while (__atomic_exchange_n(&ps->ps_starting, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void procs_start_release(struct procs *ps)
{
	__atomic_store_n(&ps->ps_starting, 0, __ATOMIC_RELEASE);
}

int procs_start(struct procs *ps)
{
	int rc = -EINVAL;	/* once fini is called, it starts them */

	if (ps->ps_base == NULL)
		return -EINVAL;
	if (procs_inside(ps))	/* a thread must not */
		return -EPERM;
	procs_start_hold(ps);
	if (!__atomic_load_n(&ps->ps_closing, __ATOMIC_ACQUIRE))
		rc = procs_start_held(ps);
	procs_start_release(ps);
	return rc;
}

/* Marks the end and joins the processors, once every thread finished. */
static void procs_stop(struct procs *ps)
{
	__atomic_fetch_or(&ps->ps_live, LIVE_EXITING, __ATOMIC_SEQ_CST);
	procs_kick_all(ps);
	for (int i = 0; i < ps->ps_nr; i++)
		pthread_join(proc_nth(ps, i)->p_thread, NULL);
}

/* Frees the arenas' chunks, once the wakes from elsewhere are done. */
static void procs_free_chunks(struct procs *ps)
{
	void *c;

	__atomic_fetch_or(&ps->ps_wakers, WAKERS_CLOSED, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&ps->ps_wakers, __ATOMIC_ACQUIRE) !=
	       WAKERS_CLOSED)	/* no new one can come */
		sched_yield();
	while ((c = ps->ps_chunks) != NULL) {
		ps->ps_chunks = *(void **)c;
		free(c);
	}
}

int procs_fini(struct procs *ps)
{
	int rc;

	if (ps->ps_base == NULL)
		return -EINVAL;
	if (procs_inside(ps))	/* would wait for itself */
		return -EDEADLK;
	/* One fini at a time: a second one from another native thread would
	 * join the processors again. Finished, or one is under way. */
	if (__atomic_exchange_n(&ps->ps_closing, 1, __ATOMIC_ACQUIRE))
		return -EINVAL;
	procs_start_hold(ps);
	rc = ps->ps_run < ps->ps_nr ? procs_start_held(ps) : 0;
	if (rc != 0)	/* before a start that waits may see it */
		__atomic_store_n(&ps->ps_closing, 0, __ATOMIC_RELEASE);
	procs_start_release(ps);
	if (rc != 0)
		return rc;
	procs_stop(ps);
	procs_free_chunks(ps);
	pthread_mutex_destroy(&ps->ps_lock);
	ps->ps_run = 0;
	ps->ps_finished = 1;	/* the processors stay for procs_stats */
	return 0;
}

/* The processors update their counters while this reads them (stat_add). */
static unsigned long stat_read(const unsigned long *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

int procs_stats(struct procs *ps, int i, struct sched_stats *out)
{
	struct proc *p;

	if (ps->ps_base == NULL || i < 0 || i >= ps->ps_nr || out == NULL)
		return -EINVAL;
	p = proc_nth(ps, i);
	*out = (struct sched_stats){
		.ss_switches = stat_read(&p->p_stats.ss_switches),
		.ss_local_wakes = stat_read(&p->p_stats.ss_local_wakes),
		.ss_remote_wakes = stat_read(&p->p_stats.ss_remote_wakes),
		.ss_sleeps = stat_read(&p->p_stats.ss_sleeps),
		.ss_max_stack = __atomic_load_n(&p->p_sched.s_max_used,
						__ATOMIC_RELAXED),
	};
	return 0;
}
