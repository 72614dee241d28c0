/*
 * The schedulers' lock (sched/lock.h): one holder at a time among native
 * threads that contend for it, and a give wakes the takers that went to
 * sleep on it.
 */
#include "tap.h"
#include "../sched/lock.h"

#include <pthread.h>
#include <time.h>

enum {
	TAKERS = 4,
	ROUNDS = 50000,		/* takes of each taker, contending */
	SLEEPERS = 3
};

static struct sched_lock lock;
static int inside;		/* takers in the critical section */
static int overlaps;		/* times one found another there */
static volatile long count;	/* incremented under the lock, not atomic */

static int word(void)
{
	return __atomic_load_n(&lock.lk_word, __ATOMIC_RELAXED);
}

static void critical_section(void)
{
	if (__atomic_exchange_n(&inside, 1, __ATOMIC_RELAXED) != 0)
		__atomic_fetch_add(&overlaps, 1, __ATOMIC_RELAXED);
	count = count + 1;
	__atomic_store_n(&inside, 0, __ATOMIC_RELAXED);
}

static void *taker(void *arg)
{
	long rounds = (long)arg;

	for (long i = 0; i < rounds; i++) {
		sched_lock(&lock);
		critical_section();
		sched_unlock(&lock);
	}
	return NULL;
}

static int start(pthread_t *t, int n, long rounds)
{
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, taker, (void *)rounds) != 0)
			return 0;
	return 1;
}

static void join(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static void test_free(void)
{
	sched_lock(&lock);
	ok(word() == 1, "a free lock is taken without a sleeper mark");
	sched_unlock(&lock);
	ok(word() == 0, "and given back free");
}

static void test_contended(void)
{
	pthread_t t[TAKERS];

	count = 0;
	require(start(t, TAKERS, ROUNDS));
	tap_watchdog(120, "%d takers never finished", TAKERS);
	join(t, TAKERS);
	tap_watchdog_off();
	ok(__atomic_load_n(&overlaps, __ATOMIC_RELAXED) == 0,
	   "%d native threads: never two in the critical section (%d times)",
	   TAKERS, overlaps);
	ok(count == (long)TAKERS * ROUNDS, "no increment lost: %ld of %ld",
	   count, (long)TAKERS * ROUNDS);
	ok(word() == 0, "the lock is free afterwards (word %d)", word());
}

/* Takers find the lock held long enough to sleep; the give wakes them. */
static void test_sleepers(void)
{
	pthread_t t[SLEEPERS];
	struct timespec pause = { .tv_nsec = 50 * 1000 * 1000 };

	count = 0;
	sched_lock(&lock);
	require(start(t, SLEEPERS, 1));
	tap_watchdog(10, "no taker ever marked the lock as slept on");
	while (word() != 2)
		nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
	tap_watchdog_off();
	nanosleep(&pause, NULL);	/* the others sleep too, likely */
	ok(count == 0, "no taker got in while it was held");
	tap_watchdog(10, "a give did not wake the takers that slept");
	sched_unlock(&lock);
	join(t, SLEEPERS);
	tap_watchdog_off();
	ok(count == SLEEPERS, "every sleeping taker got it: %ld of %d", count,
	   SLEEPERS);
	ok(word() == 0, "the lock is free afterwards (word %d)", word());
}

int main(void)
{
	test_free();
	test_contended();
	test_sleepers();
	return tap_done();
}
