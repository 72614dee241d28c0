/*
 * The slow paths of sched/lock.h.
 */
#include "lock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { LOCK_SPINS = 100 };	/* a holder leaves soon: tries, then sleep */

void sched_futex_wait(int *word, int val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

void sched_futex_wake(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * After a few tries a taker sleeps with the word at 2, so that the give
 * wakes it. From then on it takes a free lock with 2 too, as it cannot
 * know whether others sleep: at worst its give makes one needless wake-up.
 * A try takes with 1, which is safe: a sleeper it overtakes finds the lock
 * held when it wakes, and sets 2 again before sleeping on.
 */
void sched_lock_contended(struct sched_lock *l)
{
	for (int i = 0; i < LOCK_SPINS; i++) {
		int free = 0;

		sched_relax();
		if (__atomic_load_n(&l->lk_word, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&l->lk_word, &free, 1, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
	}
	while (__atomic_exchange_n(&l->lk_word, 2, __ATOMIC_ACQUIRE) != 0)
		sched_futex_wait(&l->lk_word, 2);
}
