/*
 * malloc and its kin, replaced in the tests that link tmalloc.o by versions
 * that forward to glibc's: a hook sees every allocation and may make it
 * fail, and the blocks allocated while tracking is on can be counted (leak
 * checks). Sanitizers and valgrind bring their own malloc, which is then
 * the one called: tmalloc_ours() says whether this one is.
 */
#ifndef TMALLOC_H
#define TMALLOC_H

#include <stddef.h>

/*
 * Called first by every allocation, with its size and the address it was
 * called from; non-zero: the allocation fails with ENOMEM. NULL: none.
 * Set it before the threads that allocate start; it must not allocate.
 */
extern int (*tmalloc_hook)(size_t size, void *caller);

/* Whether this program's malloc is the one called. It sets the hook for
 * a moment: call it before threads that allocate start. */
int tmalloc_ours(void);
/* Exits with a TAP skip unless it is: for tests that need nothing else. */
void tmalloc_require_ours(void);

/* Whether the calling native thread is inside pthread_create. */
int tmalloc_in_pthread_create(void);

/* Starts and stops tracking new allocations; frees are always seen. */
void tmalloc_track(int on);

/*
 * Tracked blocks not freed yet, but glibc's own (pthread_create keeps some
 * in its cache); their bytes in *bytes. -1 if there were too many to track:
 * over TMALLOC_TRACK_MAX at once.
 */
enum { TMALLOC_TRACK_MAX = 1024 };
long tmalloc_outstanding(long *bytes);

#endif
