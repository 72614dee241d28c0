/*
 * Pools, shared by the schedulers: each processor's thread structs, from
 * a new thread to its end, and its stack buffers, and the chunks they come
 * from.
 */
#include "proc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { CHUNK_SIZE = 1 << 20 };	/* arenas grow by this much */

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

void *pool_buf_alloc(struct usched *s, int size)
{
	struct proc *p = proc_of_sched(s);
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

void pool_buf_free(struct usched *s, void *buf, int size)
{
	struct proc *p = proc_of_sched(s);
	int c = buf_class(size);

	if (c >= BUF_CLASSES) {
		free(buf);
		return;
	}
	*(void **)buf = p->p_bufs[c];
	p->p_bufs[c] = buf;
}

/*
 * Claims finished t for a new thread if no wake holds it. The value stays
 * 0, but a wake that holds t later reads it from here: it happens after
 * the ST_DONE that ended t, so it finds t finished until the scheduler
 * publishes the new thread's state.
 */
static int thread_claim(struct sched_thread *t)
{
	int none = 0;

	return __atomic_compare_exchange_n(&t->t_holds, &none, 0, 0,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

static struct sched_thread *thread_carve(struct procs *ps, struct arena *a)
{
	struct sched_thread *t = arena_carve(ps, a, ps->ps_thread_size);

	if (t != NULL)	/* a reused one keeps its scheduler's fields */
		memset(t, 0, ps->ps_thread_size);
	return t;
}

/*
 * p_spare: a stack pushed on by p, and by a spawner giving back held
 * structs; popped under p_lock, by one spawner at a time, so a
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
static struct sched_thread *thread_mem(struct proc *p, int own)
{
	struct procs *ps = p->p_procs;
	struct sched_thread *t;

	if (own) {
		struct sched_thread **prev = &p->p_free;

		for (t = *prev; t != NULL; prev = &t->t_next, t = *prev) {
			if (thread_claim(t)) {
				*prev = t->t_next;
				return t;
			}
		}
		return thread_carve(ps, &p->p_arena);
	}
	sched_lock(&p->p_lock);
	t = spare_claim(p);
	if (t == NULL)
		t = thread_carve(ps, &p->p_foreign);
	if (t != NULL)	/* only under p_lock: no read-modify-write */
		__atomic_store_n(&p->p_owed, p->p_owed + 1, __ATOMIC_RELAXED);
	sched_unlock(&p->p_lock);
	return t;
}

/*
 * Keeps t, finished, for reuse: in p_spare if p owes one (it has given
 * back fewer than spawners took), else p_free.
 */
static void thread_reuse(struct proc *p, struct sched_thread *t)
{
	if (__builtin_expect(__atomic_load_n(&p->p_owed, __ATOMIC_RELAXED) !=
			     p->p_repaid, 0)) {
		p->p_repaid++;
		spare_push(p, t);
	} else {
		t->t_next = p->p_free;
		p->p_free = t;
	}
}

struct sched_thread *proc_thread_new(struct proc *p, void (*f)(void *),
				     void *arg)
{
	int own = proc_here(p->p_procs->ps_slot) == p;
	struct sched_thread *t;

	if (f == NULL ||
	    !(own ? procs_own_enter(p) : procs_enter(p->p_procs))) {
		errno = EINVAL;
		return NULL;
	}
	t = thread_mem(p, own);
	if (t == NULL) {
		if (own)
			procs_own_leave(p);
		else
			procs_leave(p->p_procs, 1);
		errno = ENOMEM;
		return NULL;
	}
	ustack_init(&t->t_u, &p->p_sched, f, arg, NULL, 0);
	t->t_next = NULL;
	t->t_permits = 0;
	thread_set_state(t, ST_DONE);	/* to wakes from p: not yet there */
	return t;
}

/* The s_done call-back: t's struct goes back to p's pool. */
void proc_thread_done(struct usched *s, struct ustack *u)
{
	struct proc *p = proc_of_sched(s);
	struct sched_thread *t = (struct sched_thread *)u;

	/* Release is enough: a remote waker that still saw t alive holds it
	 * (thread_claim then fails), and what it adds is a permit of a
	 * finished thread, never a run. */
	thread_set_state(t, ST_DONE);
	thread_reuse(p, t);
	procs_own_leave(p);
}

void pool_free(struct procs *ps)
{
	void *c;

	while ((c = ps->ps_chunks) != NULL) {
		ps->ps_chunks = *(void **)c;
		free(c);
	}
}
