/*
 * What every usched scheduler provides, as one function table, so that a
 * program can pick a scheduler by name at run time.
 */
#ifndef SCHED_SCHED_H
#define SCHED_SCHED_H

#ifdef __cplusplus
extern "C" {
#endif

/* Per-processor counters. A wake counts at the processor of the thread
 * woken, also if that thread was running or had a wake kept already. */
struct sched_stats {
	unsigned long ss_switches;	/* threads s_next handed over */
	unsigned long ss_local_wakes;	/* wake-ups from this processor */
	unsigned long ss_remote_wakes;	/* from other native threads */
	unsigned long ss_sleeps;	/* times it slept on its futex, idle
					 * after spinning */
	unsigned long ss_max_stack;	/* largest stack saved here, bytes */
};

struct sched_ops {
	const char *so_name;
	/* proc_nr processors (1 to 4096); thread_nr, the threads expected
	 * (0 if unknown), is a hint that the pools, which grow as threads
	 * come, do not need. -EBUSY if set up and not finished: fini first;
	 * -EINVAL: a bad proc_nr, a negative thread_nr or a bad USCHED_PIN;
	 * -ENOMEM. Not while another native thread calls init, start or
	 * fini. */
	int   (*so_init)(int proc_nr, int thread_nr);
	/* Starts the processors. Threads may be spawned before or after.
	 * -EPERM from one of its own threads; -EALREADY if started (also by
	 * another native thread's start at the same time); -EINVAL before
	 * init, once fini was called (it starts them), or with a bad
	 * USCHED_PIN; -EAGAIN (or another error of pthread_create) if a
	 * processor's native thread could not be made, or pinned (-EINVAL:
	 * its CPU went away): those made run on, and the next start or fini
	 * starts the others. */
	int   (*so_start)(void);
	/* A new thread running f(arg); NULL with errno set on failure:
	 * ENOMEM, or EINVAL: before init, f is NULL, or fini found every
	 * thread finished. A spawn while fini waits adds a thread it waits
	 * for: fini returns only once spawns stop.
	 * group places it: ll runs it on processor group % proc_nr (a
	 * negative group: EINVAL); rr ignores it and spreads threads over
	 * the processors in turn. */
	void *(*so_spawn)(void (*f)(void *), void *arg, int group);
	/* Blocks the calling thread until woken; 0, or -errno (not blocked):
	 * -EPERM outside a thread of this scheduler, -E2BIG if its stack is
	 * over USCHED_STACK_MAX_DEFAULT (1 MiB), -ENOMEM. A wake already
	 * received returns at once: waking oneself, then waiting, does not
	 * let the other threads run (so_yield does). With ll, a wake from
	 * elsewhere is received once it is in the processor's inbox: one
	 * that found an earlier wake from elsewhere still on its way there
	 * is received with it (the README says why). */
	int   (*so_wait)(void);
	/* Wakes a thread; a wake before its wait is kept. -ESRCH: finished,
	 * or fini found every thread finished; -EINVAL: NULL, or a thread
	 * of another scheduler, until that one's fini frees it. A handle is
	 * valid for its own scheduler's wake until the next so_init.
	 * Not async-signal-safe, as nothing here is: it may interrupt a
	 * wake or switch of the same native thread, or take a lock it
	 * holds. */
	int   (*so_wake)(void *thread);
	/* The calling thread's handle, NULL outside a thread of this
	 * scheduler. */
	void *(*so_self)(void);
	/* Ends the calling thread, as returning from its function does;
	 * for threads of this scheduler (elsewhere, even in another
	 * scheduler's thread, stops the program with a message). */
	void  (*so_done)(void);
	/* Starts the processors if needed (failing as so_start does; then
	 * it may be called again), waits for every thread to finish, stops
	 * the processors and frees everything. -EDEADLK from one of its
	 * own threads; -EINVAL before init, after fini, or while another
	 * native thread's fini runs. Native threads that spawn or wake must
	 * be done (joined) before so_init again. */
	int   (*so_fini)(void);
	/* Counters of processor proc, from any native thread, from init
	 * (zero) on, also while it runs, and after fini (the last ones)
	 * until the next init; -EINVAL if no such one or out is NULL. */
	int   (*so_stats)(int proc, struct sched_stats *out);
	/* Lets the threads ready on the caller's processor run, then
	 * returns: the caller goes behind them. 0 at once if there are
	 * none. Wakes are neither taken nor lost. -EPERM outside a thread
	 * of this scheduler; -E2BIG or -ENOMEM as so_wait, not yielded.
	 * (Last in the table, which it joined last.) */
	int   (*so_yield)(void);
};

extern const struct sched_ops rr_ops;
extern const struct sched_ops ll_ops;

/* The scheduler called name ("rr", "ll"), or NULL (also for NULL). */
const struct sched_ops *sched_find(const char *name);
/* Names of all schedulers, separated by '|', for usage messages. */
const char *sched_names(void);

/*
 * For the processors started next: 1 (or more) pins processor i to the
 * i-th CPU that the native thread starting them (so_start's, or so_fini's
 * if it starts them) may use, modulo their number; 0 does not pin.
 * Negative (the default): as USCHED_PIN says, "0" or "1"; unset or empty
 * is 1, anything else makes so_init and so_start return -EINVAL.
 */
void sched_set_pinning(int on);
/*
 * Threads share the floating-point control state (s_share_fpctl in
 * usched.h): faster switches, but a thread's change of the state holds for
 * the threads that run after it, until it sets it back. Off by default;
 * taken by the processors started next.
 */
void sched_set_share_fpctl(int on);

#ifdef __cplusplus
}
#endif

#endif /* SCHED_SCHED_H */
