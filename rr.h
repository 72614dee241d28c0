/*
 * rr: a round-robin scheduler for usched over proc_nr native threads
 * ("processors"), each pinned to a CPU unless pinning is off (sched/sched.h).
 * New threads are spread evenly over the processors; each processor runs
 * its ready threads first in, first out, under a lock. The same scheduler
 * is available by name, as "rr", through sched/sched.h.
 */
#ifndef RR_H
#define RR_H

#include "sched/sched.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rr_thread;

/*
 * 0 or -errno: -EBUSY if set up and not finished (fini first); -EINVAL
 * for a proc_nr outside 1 to 4096 or a negative thread_nr, the number of
 * threads expected (a hint; 0 if unknown); see so_init in sched/sched.h.
 */
int  rr_init(int proc_nr, int thread_nr);
/*
 * Starts the processors; threads may be created before or after. -EPERM
 * from one of its own threads; -EALREADY, -EINVAL, -EAGAIN: see so_start
 * in sched/sched.h.
 */
int  rr_start(void);
/*
 * Waits until every thread has finished, then stops the processors.
 * -EDEADLK from one of its own threads, which it would wait for; -EINVAL
 * before init, after fini or during another's; start's errors: see so_fini.
 */
int  rr_fini(void);

/*
 * A new thread running f(arg); NULL with errno ENOMEM, or EINVAL: f NULL, no
 * rr_init, or rr_fini found every thread finished.
 */
struct rr_thread *rr_thread_init(void (*f)(void *), void *arg);
/*
 * Blocks until woken. A wake that came first is kept, so none is lost.
 * 0, or -errno if the thread's stack could not be saved (it did not block);
 * -EPERM outside an rr thread.
 */
int  rr_wait(void);
/*
 * Lets the other threads ready on this processor, those woken from other
 * native threads among them, run first; 0 at once if there are none. Wakes
 * are kept. -errno as rr_wait, without yielding.
 */
int  rr_yield(void);
/*
 * Wakes t, from any native thread, but not from a signal handler. -ESRCH
 * if t has finished, until a new thread reuses its struct: t then names
 * that one. t is a handle from rr_thread_init, valid here until the next
 * rr_init; -EINVAL for NULL or a thread of ll, until ll_fini frees it.
 */
int  rr_wake(struct rr_thread *t);
/* The calling thread, NULL outside an rr thread. */
struct rr_thread *rr_self(void);
/* Ends the calling thread; anywhere but in an rr thread, stops the
 * program with a message. */
void rr_done(void) __attribute__((noreturn));
/* Counters of processor proc: 0, or -EINVAL (no such one, out NULL, no
 * init); see so_stats. */
int  rr_stats(int proc, struct sched_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* RR_H */
