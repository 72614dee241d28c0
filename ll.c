/*
 * ll: processor-local scheduling.
 *
 * Everything about a thread but its pending remote wakes is touched only
 * by its own processor, so local waits and wakes are plain loads and
 * stores. A wake from elsewhere increments the thread's l_remote; the one
 * that finds it zero pushes the thread onto its processor's inbox, a
 * lock-free stack (one compare-and-swap). The processor takes the whole
 * inbox with one exchange before picking the next thread, and turns each
 * thread's l_remote into wakes. A thread is thus in an inbox at most once,
 * however often it is woken, and held (not reused) while in it or while
 * a remote waker works on it. A wait that finds no wake takes the inbox
 * first, so that a remote wake which came before it counts as a local
 * one (not yet one whose pusher has counted but not pushed: the wait
 * does not look at l_remote, which cost 10 % of the ring's rate). A
 * waiting thread is marked ST_WAITING by ll_next once its stack is saved,
 * before the inbox is read; one woken during its block is queued again at
 * once. A thread spawned elsewhere comes through the inbox too,
 * as ST_SPAWNED: until its processor takes it, wakes only add up, so it
 * neither runs nor ends while its spawner may still touch it.
 */
#include "ll.h"
#include "sched/proc.h"

#include <errno.h>

struct ll_thread {
	struct sched_thread  l_t;	/* first */
	struct ll_thread    *l_link;	/* link in a remote-wake inbox */
	unsigned long        l_remote;	/* remote wakes not yet applied
					 * (64-bit: a wrap to 0 would push
					 * t twice) */
};

struct ll_proc {
	struct proc          lp_p;	/* first */
	/* Written by other processors: on a cache line of its own. */
	struct ll_thread *lp_inbox __attribute__((aligned(64)));
};

static struct procs ll_procs;

static struct ll_proc *ll_proc_of(struct ll_thread *t)
{
	return (struct ll_proc *)proc_of(&t->l_t);
}

/*
 * Applies n wakes to t, a thread of the calling processor, which add()s it
 * to q if it waits.
 */
static inline int ll_wake_into(struct sched_queue *q, struct sched_thread *t,
			       unsigned long n,
			       void (*add)(struct sched_queue *,
					   struct sched_thread *))
{
	switch (thread_state(t)) {
	case ST_DONE:
		return -ESRCH;
	case ST_WAITING:
		thread_set_state(t, ST_READY);
		add(q, t);
		if (--n == 0)
			return 0;
	}
	t->t_permits += n;
	return 0;
}

static inline int ll_wake_local(struct proc *p, struct sched_thread *t,
				unsigned long n)
{
	return ll_wake_into(&p->p_ready, t, n, sched_enqueue);
}

/*
 * The inbox holds the newest push first. The threads it makes ready are
 * put in front of one another, so that the oldest is first, and then
 * behind the ready ones, all in one pass: a big inbox (threads spawned
 * from a native thread) is mostly cold, and reversing it first would walk
 * it twice.
 */
static void ll_drain(struct ll_proc *l)
{
	struct sched_queue woken = { NULL, NULL };
	struct ll_thread *t, *next;

	t = __atomic_exchange_n(&l->lp_inbox, NULL, __ATOMIC_ACQUIRE);
	for (; t != NULL; t = next) {
		unsigned long n;
		int spawned;

		/* Read the link before t can be pushed again. */
		next = t->l_link;
		n = __atomic_exchange_n(&t->l_remote, 0, __ATOMIC_ACQ_REL);
		spawned = thread_state(&t->l_t) == ST_SPAWNED;
		if (spawned)	/* n counts its start too */
			thread_set_state(&t->l_t, ST_WAITING);
		stat_add(&l->lp_p.p_stats.ss_remote_wakes, n - spawned);
		/* Too late if t has ended. */
		ll_wake_into(&woken, &t->l_t, n, sched_push_front);
		thread_release(&t->l_t);	/* the inbox's hold */
	}
	sched_append(&l->lp_p.p_ready, &woken);
}

/* A hint, unordered: ll_drain's exchange orders what it takes. */
static inline int ll_inbox_used(struct ll_proc *l)
{
	return __atomic_load_n(&l->lp_inbox, __ATOMIC_RELAXED) != NULL;
}

/* Only p fills its ready queue, empty while it idles: work is in the inbox. */
static int ll_has_work(struct proc *p)
{
	struct ll_proc *l = (struct ll_proc *)p;

	return __atomic_load_n(&l->lp_inbox, __ATOMIC_SEQ_CST) != NULL;
}

/* Takes one of t's wakes, if it has one. */
static inline int ll_take_permit(struct sched_thread *t)
{
	if (t->t_permits <= 0)
		return 0;
	t->t_permits--;
	return 1;
}

/* ll_next when there are remote wakes or nothing to run: drain, idle. */
static __attribute__((noinline)) struct sched_thread *ll_next_slow(
	struct ll_proc *l)
{
	struct proc *p = &l->lp_p;
	struct sched_thread *t;

	for (;;) {
		if (ll_inbox_used(l))
			ll_drain(l);
		t = sched_dequeue(&p->p_ready);
		if (t != NULL || procs_over(p->p_procs))
			return t;
		proc_idle(p, ll_has_work);
	}
}

static struct ustack *ll_next(struct usched *s)
{
	struct ll_proc *l = (struct ll_proc *)proc_of_sched(s);
	struct proc *p = &l->lp_p;
	struct sched_thread *t = (struct sched_thread *)usched_blocked(s);

	if (t != NULL) {	/* it waits, unless woken during its block */
		thread_set_state(t, ST_WAITING);
		if (__builtin_expect(ll_take_permit(t), 0))
			ll_wake_local(p, t, 1);
	}
	t = NULL;
	if (!ll_inbox_used(l))
		t = sched_dequeue(&p->p_ready);
	if (t == NULL && (t = ll_next_slow(l)) == NULL)
		return NULL;
	thread_set_state(t, ST_RUNNING);
	stat_add(&p->p_stats.ss_switches, 1);
	proc_prefetch_next(p);
	return &t->t_u;
}

/* Pushes t, with a hold for the inbox, and wakes l if it sleeps. */
static void ll_push(struct ll_proc *l, struct ll_thread *t)
{
	struct ll_thread *head = __atomic_load_n(&l->lp_inbox,
						 __ATOMIC_RELAXED);

	do {
		t->l_link = head;
	} while (!__atomic_compare_exchange_n(&l->lp_inbox, &head, t, 1,
					      __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	proc_kick(&l->lp_p);
}

/*
 * A wake from outside t's processor, which holds t: the hold passes to the
 * inbox, which has one already if t is in it.
 */
static void ll_post(struct ll_proc *l, struct ll_thread *t)
{
	if (__atomic_fetch_add(&t->l_remote, 1, __ATOMIC_ACQ_REL) != 0)
		thread_release(&t->l_t);	/* already in the inbox */
	else
		ll_push(l, t);
}

int ll_init(int proc_nr, int thread_nr)
{
	return procs_init(&ll_procs, PROCS_LL, proc_nr, thread_nr,
			  sizeof(struct ll_proc), sizeof(struct ll_thread),
			  ll_next);
}

int ll_start(void)
{
	return procs_start(&ll_procs);
}

/*
 * A wake from elsewhere may reach the inbox after its processor stopped,
 * its thread having ended: it returned 0, so it counts all the same.
 */
static void ll_count_late(struct proc *p)
{
	ll_drain((struct ll_proc *)p);
}

int ll_fini(void)
{
	return procs_fini(&ll_procs, ll_count_late);
}

struct ll_thread *ll_thread_init(void (*f)(void *), void *arg, int group)
{
	struct ll_proc *l;
	struct ll_thread *t;

	if (group < 0) {
		errno = EINVAL;
		return NULL;
	}
	l = (struct ll_proc *)procs_pick(&ll_procs, group);
	if (l == NULL)
		return NULL;
	/* Not held, l_remote is 0 and t in no inbox: it needs no reset. */
	t = (struct ll_thread *)proc_thread_new(&l->lp_p, f, arg);
	if (t == NULL)
		return NULL;
	if (proc_here(PROCS_LL) == &l->lp_p) {	/* l runs t after this */
		thread_set_state(&t->l_t, ST_WAITING);
		ll_wake_local(&l->lp_p, &t->l_t, 1);
	} else {	/* as a remote wake; later ones add to l_remote */
		t->l_remote = 1;
		thread_hold(&t->l_t);	/* the inbox's */
		thread_set_state(&t->l_t, ST_SPAWNED);
		ll_push(l, t);
	}
	return t;
}

/* Takes the inbox's wakes, t's among them, then waits if t has none. */
static __attribute__((noinline)) int ll_wait_drained(struct ll_proc *l,
						    struct sched_thread *t)
{
	ll_drain(l);
	return ll_take_permit(t) ? 0 : ustack_block();
}

LTO_INLINE int ll_wait(void)
{
	struct sched_thread *t = sched_self(PROCS_LL);
	struct ll_proc *l;

	if (t == NULL)
		return -EPERM;
	if (ll_take_permit(t))
		return 0;
	/* A wake from elsewhere that came first is still in the inbox. */
	l = ll_proc_of((struct ll_thread *)t);
	if (ll_inbox_used(l))
		return ll_wait_drained(l, t);
	return ustack_block();
}

/*
 * A wake of its own, taken by ll_next, queues t behind the ready threads.
 * Those woken from elsewhere are drained first, to go before it too.
 */
int ll_yield(void)
{
	struct sched_thread *t = sched_self(PROCS_LL);
	struct ll_proc *l;
	int rc;

	if (t == NULL)
		return -EPERM;
	l = ll_proc_of((struct ll_thread *)t);
	if (ll_inbox_used(l))
		ll_drain(l);
	if (l->lp_p.p_ready.q_head == NULL)
		return 0;
	t->t_permits++;
	rc = ustack_block();
	if (rc != 0)	/* not blocked: ll_next did not take it */
		t->t_permits--;
	return rc;
}

/*
 * A wake from another processor, or, counted, from elsewhere; on t's own,
 * t is surely ll's.
 */
static int ll_wake_remote(struct ll_thread *t)
{
	struct ll_proc *l = ll_proc_of(t);

	if (!procs_have(&ll_procs, &l->lp_p))
		return -EINVAL;
	if (!thread_hold_alive(&t->l_t))
		return -ESRCH;
	ll_post(l, t);
	return 0;
}

static __attribute__((noinline)) int ll_wake_outside(struct ll_thread *t)
{
	int rc;

	if (!procs_wake_enter(&ll_procs))
		return -ESRCH;
	rc = ll_wake_remote(t);
	procs_wake_leave(&ll_procs);
	return rc;
}

int ll_wake(struct ll_thread *t)
{
	struct proc *here = proc_here(PROCS_LL);
	struct ll_proc *l;
	int rc;

	if (__builtin_expect(t == NULL, 0))
		return -EINVAL;
	if (__builtin_expect(here == NULL, 0))
		return ll_wake_outside(t);
	l = ll_proc_of(t);
	if (here != &l->lp_p)
		return ll_wake_remote(t);
	rc = ll_wake_local(&l->lp_p, &t->l_t, 1);
	if (rc == 0)
		stat_add(&l->lp_p.p_stats.ss_local_wakes, 1);
	return rc;
}

struct ll_thread *ll_self(void)
{
	return (struct ll_thread *)sched_self(PROCS_LL);
}

void ll_done(void)
{
	procs_done(&ll_procs, "ll_done");
}

int ll_stats(int proc, struct sched_stats *out)
{
	return procs_stats(&ll_procs, proc, out);
}

static void *ll_spawn(void (*f)(void *), void *arg, int group)
{
	return ll_thread_init(f, arg, group);
}

static int ll_wake_any(void *t)
{
	return ll_wake(t);
}

static void *ll_self_any(void)
{
	return ll_self();
}

const struct sched_ops ll_ops = {
	.so_name  = "ll",
	.so_init  = ll_init,
	.so_start = ll_start,
	.so_spawn = ll_spawn,
	.so_wait  = ll_wait,
	.so_wake  = ll_wake_any,
	.so_self  = ll_self_any,
	.so_done  = ll_done,
	.so_fini  = ll_fini,
	.so_stats = ll_stats,
	.so_yield = ll_yield,
};
