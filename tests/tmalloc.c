#define _GNU_SOURCE
#include "tmalloc.h"
#include "tap.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>	/* memalign, which this replaces */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int (*tmalloc_hook)(size_t size, void *caller);

static int tracking;

/*
 * pthread_create allocates the new thread's TLS vector, which glibc keeps
 * with the stack in its cache after the join: not the program's to free.
 */
static __thread int in_pthread_create;

void tmalloc_require_ours(void)
{
	if (!tmalloc_ours()) {
		puts("1..0 # SKIP another malloc than this program's is "
		     "called");
		exit(0);
	}
}

int tmalloc_in_pthread_create(void)
{
	return in_pthread_create;
}

void tmalloc_track(int on)
{
	__atomic_store_n(&tracking, on, __ATOMIC_SEQ_CST);
}

#ifdef TAP_SANITIZED
int tmalloc_ours(void)
{
	return 0;
}

long tmalloc_outstanding(long *bytes)
{
	*bytes = 0;
	return 0;
}
#else
struct block {
	void  *b_ptr;
	size_t b_size;
	int    b_glibc;		/* made inside pthread_create */
};

/* Allocations made while tracking and not freed yet. */
static struct block blocks[TMALLOC_TRACK_MAX];
static long blocks_nr;
static int blocks_lock;
static int blocks_full;

typedef int pthread_create_fn(pthread_t *, const pthread_attr_t *,
			      void *(*)(void *), void *);
static pthread_create_fn *real_pthread_create;

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nr, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *ptr);

static void blocks_acquire(void)
{
	while (__atomic_exchange_n(&blocks_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void blocks_release(void)
{
	__atomic_store_n(&blocks_lock, 0, __ATOMIC_RELEASE);
}

/* True if the hook makes this allocation, made from caller, fail. */
static int fault_here(size_t size, void *caller)
{
	if (tmalloc_hook == NULL || !tmalloc_hook(size, caller))
		return 0;
	errno = ENOMEM;
	return 1;
}

static void track(void *ptr, size_t size, int always)
{
	if (ptr == NULL ||
	    !(always || __atomic_load_n(&tracking, __ATOMIC_ACQUIRE)))
		return;
	blocks_acquire();
	for (int i = 0; i < TMALLOC_TRACK_MAX; i++) {
		if (blocks[i].b_ptr == NULL) {
			blocks[i] = (struct block){ ptr, size,
						    in_pthread_create };
			__atomic_add_fetch(&blocks_nr, 1, __ATOMIC_RELEASE);
			blocks_release();
			return;
		}
	}
	__atomic_store_n(&blocks_full, 1, __ATOMIC_RELAXED);
	blocks_release();
}

/* Forgets ptr; true if it was tracked, with its size in *size. */
static int untrack(void *ptr, size_t *size)
{
	int found = 0;

	if (ptr == NULL || __atomic_load_n(&blocks_nr, __ATOMIC_ACQUIRE) == 0)
		return 0;
	blocks_acquire();
	for (int i = 0; i < TMALLOC_TRACK_MAX && !found; i++) {
		if (blocks[i].b_ptr == ptr) {
			blocks[i].b_ptr = NULL;
			__atomic_sub_fetch(&blocks_nr, 1, __ATOMIC_RELEASE);
			*size = blocks[i].b_size;
			found = 1;
		}
	}
	blocks_release();
	return found;
}

#define CALLER __builtin_return_address(0)

static void *alloc(size_t size, void *caller)
{
	void *p;

	if (fault_here(size, caller))
		return NULL;
	p = __libc_malloc(size);
	track(p, size, 0);
	return p;
}

static void *alloc_aligned(size_t align, size_t size, void *caller)
{
	void *p;

	if (fault_here(size, caller))
		return NULL;
	p = __libc_memalign(align, size);
	track(p, size, 0);
	return p;
}

void *malloc(size_t size)
{
	return alloc(size, CALLER);
}

void *calloc(size_t nr, size_t size)
{
	size_t bytes;
	void *p;

	if (__builtin_mul_overflow(nr, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	if (fault_here(bytes, CALLER))
		return NULL;
	p = __libc_calloc(nr, size);
	track(p, bytes, 0);
	return p;
}

void *realloc(void *ptr, size_t size)
{
	size_t old = 0;
	void *p;
	int was;

	if (ptr == NULL)
		return alloc(size, CALLER);
	if (size == 0) {		/* glibc: frees ptr */
		free(ptr);
		return NULL;
	}
	if (fault_here(size, CALLER))
		return NULL;
	was = untrack(ptr, &old);
	p = __libc_realloc(ptr, size);
	if (p != NULL)
		track(p, size, was);
	else if (was)
		track(ptr, old, 1);	/* ptr is still there, as it was */
	return p;
}

void *memalign(size_t align, size_t size)
{
	return alloc_aligned(align, size, CALLER);
}

void *aligned_alloc(size_t align, size_t size)
{
	return alloc_aligned(align, size, CALLER);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)) != 0)
		return EINVAL;
	p = alloc_aligned(align, size, CALLER);
	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

void free(void *ptr)
{
	size_t size;

	untrack(ptr, &size);	/* first: the address may come back at once */
	__libc_free(ptr);
}

/* Before main, so before any thread is created. */
__attribute__((constructor)) static void find_pthread_create(void)
{
	real_pthread_create = (pthread_create_fn *)dlsym(RTLD_NEXT,
							 "pthread_create");
	require(real_pthread_create != NULL);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
		   void *(*f)(void *), void *arg)
{
	int rc;

	in_pthread_create = 1;
	rc = real_pthread_create(thread, attr, f, arg);
	in_pthread_create = 0;
	return rc;
}

static int probed;

static int probe(size_t size, void *caller)
{
	(void)size;
	(void)caller;
	probed = 1;
	return 0;
}

/* Valgrind replaces this malloc with its own. */
int tmalloc_ours(void)
{
	int (*hook)(size_t size, void *caller) = tmalloc_hook;
	void *(*volatile m)(size_t) = malloc;	/* not inlined */
	void *p;

	probed = 0;
	tmalloc_hook = probe;
	p = m(1);
	tmalloc_hook = hook;
	free(p);
	return probed;
}

long tmalloc_outstanding(long *bytes)
{
	long n = __atomic_load_n(&blocks_full, __ATOMIC_RELAXED) ? -1 : 0;

	*bytes = 0;
	blocks_acquire();
	for (int i = 0; i < TMALLOC_TRACK_MAX; i++) {
		if (blocks[i].b_ptr != NULL && !blocks[i].b_glibc && n >= 0) {
			n++;
			*bytes += blocks[i].b_size;
		}
	}
	blocks_release();
	return n;
}
#endif /* TAP_SANITIZED */
