/*
 * ring-pthread: the ring benchmark with one native thread per ring member.
 *
 * Usage: ring-pthread N R M D P (see args.h).  The kernel schedules N*R
 * threads over P CPUs: the first P the process may use, as usched's ring
 * pins its P processors, so that P = 1 runs on one CPU like the peers with
 * one native thread.
 *
 * Each member blocks in sem_wait() on its own semaphore; handing the token
 * to the right neighbour is a sem_post() on the neighbour's semaphore.  A
 * token posted before the neighbour waits stays in the semaphore, so a new
 * round may start before the previous token has finished its lap, as with a
 * counting channel in the other peers. The neighbour counts the tokens it
 * hands, and the member checks that count after every wait, as usched's
 * ring does.
 */
#define _GNU_SOURCE	/* cpu_set_t */

#include <errno.h>
#include <limits.h>	/* PTHREAD_STACK_MIN */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "ring-check.h"

#define PROG		"ring-pthread"
#define BASE_STACK	(64 * 1024)	/* plenty for the loop plus libc */

/* One per thread; cache-line aligned so neighbours do not false-share. */
struct member {
	sem_t		 m_sem;		/* tokens received, not yet taken */
	struct member	*m_right;
	uint64_t	 m_pos;		/* index within the cycle */
	uint64_t	 m_received;	/* M, once run() ended */
	uint64_t	 m_unhanded;	/* waits that got a token not handed */
	uint32_t	 m_handed;	/* tokens the left neighbour handed */
	int		 m_pad_bad;	/* the D-byte frame got corrupted */
} __attribute__((aligned(64)));

static struct ring_args cfg;

/* Takes the n-th token. */
static void take(struct member *me, uint64_t n)
{
	while (sem_wait(&me->m_sem) != 0) {
		if (errno != EINTR) {
			perror(PROG ": sem_wait");
			exit(1);
		}
	}
	if (!ring_token_handed(&me->m_handed, n))
		me->m_unhanded++;
}

static void give(struct member *to)
{
	if (sem_post(&to->m_sem) != 0) {
		perror(PROG ": sem_post");
		exit(1);
	}
}

static void hand(struct member *to)
{
	ring_count_handed(&to->m_handed);
	give(to);
}

static void run(struct member *me)
{
	uint64_t turn = 0;	/* == round % N, without a division */
	uint64_t i;

	for (i = 0; i < cfg.ra_m; i++) {
		if (turn == me->m_pos) {
			hand(me->m_right);
			take(me, i + 1);
		} else {
			take(me, i + 1);
			hand(me->m_right);
		}
		if (++turn == cfg.ra_n)
			turn = 0;
	}
	me->m_received = i;
}

static void *member_main(void *arg)
{
	struct member *me = arg;
	size_t d = cfg.ra_d;
	unsigned char pad[d > 0 ? d : 1];	/* live across every block */

	pad_fill(pad, d);
	pad_fault(&cfg, pad, me->m_pos);
	run(me);
	if (!pad_intact(pad, d))
		me->m_pad_bad = 1;
	return NULL;
}

static int verify(struct member *members)
{
	struct ring_check rc = { PROG, &cfg, 0, 0 };
	uint64_t i;

	for (i = 0; i < cfg.ra_threads; i++) {
		struct member *mb = &members[i];
		struct ring_member_end e = {
			mb->m_received, mb->m_unhanded, 0, mb->m_pad_bad
		};
		int left;

		if (sem_getvalue(&mb->m_sem, &left) == 0)
			e.me_left = (uint64_t)left;
		ring_check_member(&rc, i, &e);
	}
	return ring_check_done(&rc);
}

/* The number in /proc/sys/NAME, or 0 if it cannot be read. */
static unsigned long long sysctl_value(const char *name)
{
	char path[96];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* The memory maps the process has now: 0 if /proc/self/maps is unreadable. */
static unsigned long long maps_in_use(void)
{
	unsigned long long n = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	int c;

	if (f == NULL)
		return 0;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/*
 * Fails at once, naming the limit, if the kernel cannot have n threads
 * more: each needs a pid, and its stack and guard page two memory maps.
 * What this process has already counts too (its main thread, its maps),
 * else a ring at a limit got nearly all its threads, then failed.
 */
static void check_thread_limits(uint64_t n)
{
	static const struct {
		const char *l_name;
		unsigned    l_per_thread;
		int	    l_maps;	/* 1: counts maps, 0: tasks */
	} limits[] = {
		{ "kernel/pid_max", 1, 0 },
		{ "kernel/threads-max", 1, 0 },
		{ "vm/max_map_count", 2, 1 },
	};
	unsigned long long maps = maps_in_use();

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		unsigned long long max = sysctl_value(limits[i].l_name);
		unsigned long long used = limits[i].l_maps ? maps : 1;
		unsigned long long per = limits[i].l_per_thread;

		if (max != 0 && (used >= max || n > (max - used) / per)) {
			fprintf(stderr, PROG ": %llu threads exceed what "
				"/proc/sys/%s (%llu) allows\n",
				(unsigned long long)n, limits[i].l_name, max);
			exit(1);
		}
	}
}

/*
 * Confines the process, and so the threads it creates after this, to the
 * first p CPUs it may use; to all of them if there are no more than p.
 */
static void use_cpus(uint64_t p)
{
	cpu_set_t allowed, used;
	uint64_t n = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		perror(PROG ": sched_getaffinity");
		exit(1);
	}
	if ((uint64_t)CPU_COUNT(&allowed) <= p)
		return;
	CPU_ZERO(&used);
	for (int cpu = 0; cpu < CPU_SETSIZE && n < p; cpu++) {
		if (CPU_ISSET(cpu, &allowed)) {
			CPU_SET(cpu, &used);
			n++;
		}
	}
	if (sched_setaffinity(0, sizeof(used), &used) != 0) {
		perror(PROG ": sched_setaffinity");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct member *members;
	pthread_t *tids;
	pthread_attr_t attr;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t base, stack;
	double start, elapsed;
	uint64_t i;
	int err;

	ring_args_parse(&cfg, argc, argv, RING_P_CPUS);
	/* Stack pages touched, struct pthread, kernel stack and task. */
	check_memory(PROG, (double)cfg.ra_threads * (cfg.ra_d + 32 * 1024));

	/* ra_threads <= RING_MAX_THREADS: these sizes cannot overflow. */
	members = aligned_alloc(64, cfg.ra_threads * sizeof(*members));
	tids = malloc(cfg.ra_threads * sizeof(*tids));
	if (members == NULL || tids == NULL) {
		fprintf(stderr, PROG ": out of memory for %llu threads\n",
			(unsigned long long)cfg.ra_threads);
		return 1;
	}
	check_thread_limits(cfg.ra_threads);	/* with these arrays' maps */
	for (i = 0; i < cfg.ra_threads; i++) {
		struct member *mb = &members[i];
		uint64_t first = i - i % cfg.ra_n;

		mb->m_pos = i % cfg.ra_n;
		mb->m_right = &members[first + (mb->m_pos + 1) % cfg.ra_n];
		mb->m_received = 0;
		mb->m_unhanded = 0;
		mb->m_handed = 0;
		mb->m_pad_bad = 0;
		if (sem_init(&mb->m_sem, 0, 0) != 0) {
			perror(PROG ": sem_init");
			return 1;
		}
	}

	use_cpus(cfg.ra_p);
	/* glibc refuses a stack under PTHREAD_STACK_MIN, which is more than
	 * BASE_STACK where pages may be 64 KiB (128 KiB on aarch64). */
	base = BASE_STACK;
	if (base < (size_t)PTHREAD_STACK_MIN)
		base = PTHREAD_STACK_MIN;
	/* cfg.ra_d <= RING_MAX_D, so this cannot overflow either. */
	stack = (base + cfg.ra_d + page - 1) / page * page;
	if (pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setstacksize(&attr, stack) != 0) {
		fprintf(stderr, PROG ": cannot set a %zu-byte thread stack\n",
			stack);
		return 1;
	}

	if (cfg.ra_fault == RING_FAULT_SPURIOUS)
		give(&members[0]);	/* not counted */
	start = bench_seconds();
	for (i = 0; i < cfg.ra_threads; i++) {
		err = pthread_create(&tids[i], &attr, member_main, &members[i]);
		if (err != 0) {
			fprintf(stderr, PROG ": cannot create thread %llu "
				"of %llu: %s\n", (unsigned long long)i + 1,
				(unsigned long long)cfg.ra_threads,
				strerror(err));
			/* the threads already running die with us */
			exit(1);
		}
	}
	for (i = 0; i < cfg.ra_threads; i++) {
		err = pthread_join(tids[i], NULL);
		if (err != 0) {
			fprintf(stderr, PROG ": pthread_join: %s\n",
				strerror(err));
			return 1;
		}
	}
	elapsed = bench_seconds() - start;

	if (verify(members) != 0)
		return 1;
	printf("%.6f\n", elapsed);
	pthread_attr_destroy(&attr);
	for (i = 0; i < cfg.ra_threads; i++)
		sem_destroy(&members[i].m_sem);
	free(tids);
	free(members);
	return bench_output_status(PROG);
}
