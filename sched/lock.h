/*
 * Waiting, shared by the schedulers: futex sleeps and wake-ups, spinning,
 * and a lock built on them. Free, a take and a give are one atomic
 * instruction each and a few others, against some thirty more in
 * pthread_mutex_lock and _unlock: rr takes a lock at every wake and
 * switch. A taker that finds it held spins a little, then sleeps, so it
 * also serves the rare long holds (a start creating native threads).
 */
#ifndef SCHED_LOCK_H
#define SCHED_LOCK_H

#pragma GCC visibility push(hidden)

/* All zeroes is a free lock. */
struct sched_lock {
	int lk_word;	/* 0: free; 1: held; 2: held, and someone may sleep */
};

/* Sleeps while *word is val (or until a wake-up; spurious ones too). */
void sched_futex_wait(int *word, int val);
/* Wakes one sleeper on word. */
void sched_futex_wake(int *word);

/* sched_lock's slow path: the lock was held. */
void sched_lock_contended(struct sched_lock *l);

static inline void sched_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

static inline void sched_lock(struct sched_lock *l)
{
	int free = 0;

	if (!__atomic_compare_exchange_n(&l->lk_word, &free, 1, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		sched_lock_contended(l);
}

static inline void sched_unlock(struct sched_lock *l)
{
	if (__atomic_exchange_n(&l->lk_word, 0, __ATOMIC_RELEASE) == 2)
		sched_futex_wake(&l->lk_word);
}

#pragma GCC visibility pop

#endif
