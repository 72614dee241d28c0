/*
 * Processors, shared by the schedulers: native threads pinned to CPUs,
 * sleeping when idle, counters and termination. Their pools of thread
 * structs and stack buffers are in pool.c, futexes and locks in lock.c.
 */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	SPIN_ROUNDS = 200,		/* polls before sleeping */
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

void procs_kick_all(struct procs *ps)
{
	for (int i = 0; i < ps->ps_nr; i++)
		proc_kick(proc_nth(ps, i));
}

struct proc *procs_pick(struct procs *ps, unsigned long n)
{
	if (ps->ps_base == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return proc_nth(ps, n % ps->ps_nr);
}

int procs_over(struct procs *ps)
{
	return __atomic_load_n(&ps->ps_live, __ATOMIC_SEQ_CST) == LIVE_EXITING;
}

void proc_idle(struct proc *p, int (*has_work)(struct proc *))
{
	procs_own_give_back(p);
	for (int i = 0; i < SPIN_ROUNDS; i++) {
		if (has_work(p) || procs_over(p->p_procs))
			return;
		sched_relax();
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
			sched_futex_wait(&p->p_asleep, 1);
	}
	__atomic_store_n(&p->p_asleep, 0, __ATOMIC_RELAXED);
}

void proc_kick(struct proc *p)
{
	if (__atomic_load_n(&p->p_asleep, __ATOMIC_SEQ_CST) &&
	    __atomic_exchange_n(&p->p_asleep, 0, __ATOMIC_SEQ_CST))
		sched_futex_wake(&p->p_asleep);
}

int procs_init(struct procs *ps, int slot, int nr, int expected, size_t size,
	       size_t thread_size, struct ustack *(*next)(struct usched *))
{
	if (nr <= 0 || nr > 4096 || expected < 0)
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
	for (int i = 0; i < nr; i++) {
		struct proc *p = proc_nth(ps, i);

		p->p_procs = ps;
		p->p_sched.s_next = next;
		p->p_sched.s_alloc = pool_buf_alloc;
		p->p_sched.s_free = pool_buf_free;
		p->p_sched.s_done = proc_thread_done;
	}
	return 0;
}

/*
 * Sets attr to pin a processor to the i-th CPU of allowed, modulo their
 * number. Through the attributes, not by the processor itself: a CPU that
 * went away since allowed was read fails pthread_create, which start
 * reports.
 */
static int proc_attr_pin(pthread_attr_t *attr, const cpu_set_t *allowed,
			 int i)
{
	cpu_set_t one;
	int n = 0, cpu;

	i %= CPU_COUNT(allowed);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, allowed) && n++ == i)
			break;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return pthread_attr_setaffinity_np(attr, sizeof one, &one);
}

static void *proc_main(void *arg)
{
	struct proc *p = arg;

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
	cpu_set_t allowed;
	int pin, rc;

	if (ps->ps_run == ps->ps_nr)
		return -EALREADY;
	if (ps->ps_run == 0) {	/* a retry pins as the first start did */
		pin = pinning_on();
		if (pin < 0)
			return -EINVAL;
		ps->ps_pin = pin;
	}
	/* The caller's CPUs; unknown (a kernel for more CPUs than cpu_set_t
	 * holds), none are pinned. */
	pin = ps->ps_pin &&
	      sched_getaffinity(0, sizeof allowed, &allowed) == 0;
	if ((rc = proc_attr(&attr)) != 0)
		return -rc;
	for (; ps->ps_run < ps->ps_nr; ps->ps_run++) {
		struct proc *p = proc_nth(ps, ps->ps_run);

		p->p_sched.s_share_fpctl = share_fpctl;
		if (pin)
			rc = proc_attr_pin(&attr, &allowed, ps->ps_run);
		if (rc != 0)
			break;
		rc = pthread_create(&p->p_thread, &attr, proc_main, p);
		if (rc != 0)
			break;
	}
	pthread_attr_destroy(&attr);
	return -rc;
}

int procs_start(struct procs *ps)
{
	int rc = -EINVAL;	/* once fini is called, it starts them */

	if (ps->ps_base == NULL)
		return -EINVAL;
	if (procs_inside(ps))	/* a thread must not */
		return -EPERM;
	sched_lock(&ps->ps_starting);
	if (!__atomic_load_n(&ps->ps_closing, __ATOMIC_ACQUIRE))
		rc = procs_start_held(ps);
	sched_unlock(&ps->ps_starting);
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

/*
 * Once the wakes from elsewhere are done: late(p) for each processor, for
 * what they left, then frees the pools.
 */
static void procs_free_pools(struct procs *ps, void (*late)(struct proc *))
{
	__atomic_fetch_or(&ps->ps_wakers, WAKERS_CLOSED, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&ps->ps_wakers, __ATOMIC_ACQUIRE) !=
	       WAKERS_CLOSED)	/* no new one can come */
		sched_yield();
	if (late != NULL) {
		for (int i = 0; i < ps->ps_nr; i++)
			late(proc_nth(ps, i));
	}
	pool_free(ps);
}

int procs_fini(struct procs *ps, void (*late)(struct proc *))
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
	sched_lock(&ps->ps_starting);
	rc = ps->ps_run < ps->ps_nr ? procs_start_held(ps) : 0;
	if (rc != 0)	/* before a start that waits may see it */
		__atomic_store_n(&ps->ps_closing, 0, __ATOMIC_RELEASE);
	sched_unlock(&ps->ps_starting);
	if (rc != 0)
		return rc;
	procs_stop(ps);
	procs_free_pools(ps, late);
	ps->ps_finished = 1;	/* the processors stay for procs_stats */
	return 0;
}

void procs_done(struct procs *ps, const char *caller)
{
	/* ustack_abort would end another scheduler's thread, or name
	 * itself in its message. */
	if (sched_self(ps->ps_slot) == NULL) {
		fprintf(stderr, "usched: %s() called outside a thread of its "
			"scheduler\n", caller);
		abort();
	}
	ustack_abort();
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
