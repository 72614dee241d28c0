/*
 * ll: a local scheduler for usched. Each processor (a native thread, pinned
 * to a CPU unless pinning is off) owns its threads: a thread created in
 * group g lives on processor g % proc_nr. Waiting and waking on the same
 * processor take no lock and no atomic read-modify-write; a wake from
 * another processor, or from any native thread, goes through a lock-free
 * queue the target processor drains. Available by name, as "ll", through
 * sched/sched.h.
 */
#ifndef LL_H
#define LL_H

#include "sched/sched.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ll_thread;

/*
 * 0 or -errno: -EBUSY if set up and not finished (fini first); -EINVAL
 * for a proc_nr outside 1 to 4096 or a negative thread_nr, the number of
 * threads expected (a hint; 0 if unknown); see so_init in sched/sched.h.
 */
int  ll_init(int proc_nr, int thread_nr);
/*
 * Starts the processors; threads may be created before or after. -EPERM
 * from one of its own threads; -EALREADY, -EINVAL, -EAGAIN: see so_start
 * in sched/sched.h.
 */
int  ll_start(void);
/*
 * Waits until every thread has finished, then stops the processors.
 * -EDEADLK from one of its own threads, which it would wait for; -EINVAL
 * before init, after fini or during another's; start's errors: see so_fini.
 */
int  ll_fini(void);

/*
 * A new thread running f(arg) on processor group % proc_nr; NULL with errno
 * ENOMEM, or EINVAL: f NULL, a negative group, no ll_init, or ll_fini found
 * every thread finished.
 */
struct ll_thread *ll_thread_init(void (*f)(void *), void *arg, int group);
/*
 * Blocks until woken. A wake that came first is kept, so none is lost.
 * 0, or -errno if the thread's stack could not be saved (it did not block);
 * -EPERM outside an ll thread.
 */
int  ll_wait(void);
/*
 * Lets the other threads ready on this processor, those woken from other
 * native threads too, run first; 0 at once if there are none. Wakes
 * are kept. -errno as ll_wait, without yielding.
 */
int  ll_yield(void);
/*
 * Wakes t, from any native thread, but not from a signal handler. -ESRCH
 * if t has finished, until a new thread reuses its struct: t then names
 * that one. t is a handle from ll_thread_init, valid here until the next
 * ll_init; -EINVAL for NULL or a thread of rr, until rr_fini frees it.
 */
int  ll_wake(struct ll_thread *t);
/* The calling thread, NULL outside an ll thread. */
struct ll_thread *ll_self(void);
/* Ends the calling thread; anywhere but in an ll thread, stops the
 * program with a message. */
void ll_done(void) __attribute__((noreturn));
/* Counters of processor proc: 0, or -EINVAL (no such one, out NULL, no
 * init); see so_stats. */
int  ll_stats(int proc, struct sched_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* LL_H */
