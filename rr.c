/*
 * rr: round-robin over processors, a FIFO ready queue per processor under
 * a lock.
 *
 * A thread that waits stays ST_RUNNING while the dispatcher copies its
 * stack out; rr_next, once the copy is made, marks it waiting under the
 * lock, or queues it again if a wake came meanwhile. So no waker sees the
 * thread waiting before it really is blocked, and a failed block has
 * nothing to undo.
 */
#include "rr.h"
#include "sched/proc.h"

#include <errno.h>
#include <stddef.h>

struct rr_proc {
	struct proc       r_p;		/* first */
	struct sched_lock r_lock;	/* r_p.p_ready and thread states */
};
/* t_sched's held-struct test takes the lock at the proc's end. */
_Static_assert(offsetof(struct rr_proc, r_lock) == sizeof(struct proc),
	       "tests/t_sched.c finds r_lock right after r_p");

static struct procs rr_procs;
static unsigned long rr_spread;		/* where the next new thread goes */

static struct rr_proc *rr_proc_of(struct sched_thread *t)
{
	return (struct rr_proc *)proc_of(t);
}

static int rr_has_work(struct proc *p)
{
	struct rr_proc *r = (struct rr_proc *)p;
	int work;

	sched_lock(&r->r_lock);
	work = p->p_ready.q_head != NULL;
	sched_unlock(&r->r_lock);
	return work;
}

/* Under the lock; rr_wait reads t_permits without it. */
static void rr_permits_add(struct sched_thread *t, long n)
{
	__atomic_store_n(&t->t_permits, t->t_permits + n, __ATOMIC_RELAXED);
}

static void rr_permits_add_locked(struct rr_proc *r, struct sched_thread *t,
				  long n)
{
	sched_lock(&r->r_lock);
	rr_permits_add(t, n);
	sched_unlock(&r->r_lock);
}

/* Queues t on its processor; the caller holds the lock. */
static void rr_ready(struct rr_proc *r, struct sched_thread *t)
{
	thread_set_state(t, ST_READY);
	sched_enqueue(&r->r_p.p_ready, t);
	proc_kick(&r->r_p);
}

static struct ustack *rr_next(struct usched *s)
{
	struct rr_proc *r = (struct rr_proc *)proc_of_sched(s);
	struct proc *p = &r->r_p;
	struct sched_thread *t = (struct sched_thread *)usched_blocked(s);

	sched_lock(&r->r_lock);
	if (t != NULL) {		/* it waits, unless woken meanwhile */
		if (t->t_permits > 0) {
			rr_permits_add(t, -1);
			rr_ready(r, t);
		} else {
			thread_set_state(t, ST_WAITING);
		}
	}
	while ((t = sched_dequeue(&p->p_ready)) == NULL) {
		sched_unlock(&r->r_lock);
		if (procs_over(p->p_procs))
			return NULL;
		proc_idle(p, rr_has_work);
		sched_lock(&r->r_lock);
	}
	thread_set_state(t, ST_RUNNING);
	stat_add(&p->p_stats.ss_switches, 1);
	proc_prefetch_next(p);
	sched_unlock(&r->r_lock);
	return &t->t_u;
}

int rr_init(int proc_nr, int thread_nr)
{
	int rc;

	rc = procs_init(&rr_procs, PROCS_RR, proc_nr, thread_nr,
			sizeof(struct rr_proc), sizeof(struct sched_thread),
			rr_next);
	if (rc != 0)
		return rc;
	/* Each run places its threads alike, from processor 0. */
	__atomic_store_n(&rr_spread, 0, __ATOMIC_RELAXED);
	return 0;
}

int rr_start(void)
{
	return procs_start(&rr_procs);
}

int rr_fini(void)
{
	return procs_fini(&rr_procs, NULL);
}

struct rr_thread *rr_thread_init(void (*f)(void *), void *arg)
{
	unsigned long n = __atomic_fetch_add(&rr_spread, 1, __ATOMIC_RELAXED);
	struct proc *p = procs_pick(&rr_procs, n);
	struct sched_thread *t = p != NULL ? proc_thread_new(p, f, arg) : NULL;
	struct rr_proc *r = (struct rr_proc *)p;
	unsigned long next = n + 1;

	if (t == NULL) {	/* none: its turn goes back, if still last */
		__atomic_compare_exchange_n(&rr_spread, &next, n, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		return NULL;
	}
	sched_lock(&r->r_lock);	/* p takes t after the unlock */
	rr_ready(r, t);
	sched_unlock(&r->r_lock);
	return (struct rr_thread *)t;
}

LTO_INLINE int rr_wait(void)
{
	struct sched_thread *t = sched_self(PROCS_RR);

	if (t == NULL)
		return -EPERM;
	/* Only t takes permits: one seen is there to take. */
	if (__atomic_load_n(&t->t_permits, __ATOMIC_RELAXED) > 0) {
		rr_permits_add_locked(rr_proc_of(t), t, -1);
		return 0;
	}
	return ustack_block();
}

/* A wake of its own, taken by rr_next, queues t behind the ready threads. */
int rr_yield(void)
{
	struct sched_thread *t = sched_self(PROCS_RR);
	struct rr_proc *r;
	int others, rc;

	if (t == NULL)
		return -EPERM;
	r = rr_proc_of(t);
	sched_lock(&r->r_lock);
	others = r->r_p.p_ready.q_head != NULL;
	if (others)
		rr_permits_add(t, 1);
	sched_unlock(&r->r_lock);
	if (!others)
		return 0;
	rc = ustack_block();
	if (rc != 0)	/* not blocked: rr_next did not take it */
		rr_permits_add_locked(r, t, -1);
	return rc;
}

static int rr_wake_from(struct sched_thread *t, struct proc *here)
{
	struct rr_proc *r = rr_proc_of(t);
	int local = here == &r->r_p, rc = 0;

	if (!local) {	/* on its own processor, t is surely rr's */
		if (!procs_have(&rr_procs, &r->r_p))
			return -EINVAL;
		if (!thread_hold_alive(t))
			return -ESRCH;
	}
	sched_lock(&r->r_lock);
	switch (thread_state(t)) {
	case ST_WAITING:
		rr_ready(r, t);
		break;
	case ST_DONE:
		rc = -ESRCH;
		break;
	default:
		rr_permits_add(t, 1);
	}
	if (rc == 0)
		stat_add(local ? &r->r_p.p_stats.ss_local_wakes :
				 &r->r_p.p_stats.ss_remote_wakes, 1);
	sched_unlock(&r->r_lock);
	if (!local)
		thread_release(t);
	return rc;
}

int rr_wake(struct rr_thread *thread)
{
	struct sched_thread *t = (struct sched_thread *)thread;
	struct proc *here = proc_here(PROCS_RR);
	int rc;

	if (t == NULL)
		return -EINVAL;
	if (here != NULL)
		return rr_wake_from(t, here);
	if (!procs_wake_enter(&rr_procs))	/* fini frees t */
		return -ESRCH;
	rc = rr_wake_from(t, here);
	procs_wake_leave(&rr_procs);
	return rc;
}

struct rr_thread *rr_self(void)
{
	return (struct rr_thread *)sched_self(PROCS_RR);
}

void rr_done(void)
{
	procs_done(&rr_procs, "rr_done");
}

int rr_stats(int proc, struct sched_stats *out)
{
	return procs_stats(&rr_procs, proc, out);
}

static void *rr_spawn(void (*f)(void *), void *arg, int group)
{
	(void)group;
	return rr_thread_init(f, arg);
}

static int rr_wake_any(void *t)
{
	return rr_wake(t);
}

static void *rr_self_any(void)
{
	return rr_self();
}

const struct sched_ops rr_ops = {
	.so_name  = "rr",
	.so_init  = rr_init,
	.so_start = rr_start,
	.so_spawn = rr_spawn,
	.so_wait  = rr_wait,
	.so_wake  = rr_wake_any,
	.so_self  = rr_self_any,
	.so_done  = rr_done,
	.so_fini  = rr_fini,
	.so_stats = rr_stats,
	.so_yield = rr_yield,
};
