/*
 * usched: cooperative user-space threads on one native stack.
 *
 * Every thread of a dispatcher (struct usched) runs on the native stack of
 * the native thread that called usched_run(), and every one of them starts
 * at the same address, the dispatcher's "bottom". A thread that blocks has
 * the part of the stack it uses copied to a heap buffer; the stack is then
 * free for the next thread, whose saved copy is put back at the very
 * addresses it came from, so pointers inside it stay right. A thread that
 * never blocks costs a function call and no copy.
 *
 * The stack grows down; higher addresses are drawn higher.
 *
 * usched_run() saves its registers in s_home (the "home" context) as it
 * switches away; the first thread starts right below usched_run's frame:
 *
 *	|  usched_run, callers   |
 *	+========================+ <- s_bottom: usched_run's sp
 *	|  return to uarch_start |  thread A starts here: its
 *	|  A's function          |  function is called as a plain one
 *	|  ...                   |
 *	+------------------------+ <- sp: what A's ustack_block() had
 *	|  return address        |  to A->u_ctx, with the callee-saved
 *	+------------------------+  registers, by uarch_switch()
 *	|  usched_suspend()      |  runs below A's stack, so it can copy
 *	|  memcpy(), s_next()    |  [sp, bottom) out without touching it
 *	+------------------------+
 *
 * A's frames, exactly the bytes from that stack pointer to the bottom, go
 * to A->u_stack; their number, A->u_used, also gives the stack pointer
 * back (one of COPY_ALIGN_MIN bytes or more goes at sp's offset modulo 64
 * in the buffer, below). The registers are not among them: stored apart,
 * they are not copied twice, and the copy does not read them back a moment
 * after they were stored, which a CPU cannot forward to its wide loads (it
 * waits for the stores to reach the cache).
 *
 * Now s_next() names the next thread, B, which blocked earlier at
 * sp = bottom - B->u_used. Its saved bytes must go back to [sp, bottom),
 * and that range may cover the frames doing the work. So the stack
 * pointer is first moved to sp, so that everything about to be written
 * lies above it, and only then is B's copy put back:
 *
 *	+========================+ <- s_bottom
 *	|  B's stack, being      |
 *	|  copied back in        |
 *	+------------------------+ <- sp = bottom - B->u_used
 *	|  memcpy()              |  nothing live above the stack
 *	+------------------------+  pointer but the copy
 *
 * Then B's registers and return address are loaded from B->u_ctx (x86-64
 * pushes the address back below sp), and B returns from its
 * ustack_block(). A switch is thus one save, one copy out, one call of
 * s_next(), one copy in and one return: there is no trip back through a
 * dispatcher loop. A new thread is started by moving the stack pointer to
 * the bottom and calling it; when s_next() returns NULL, the home context
 * is resumed the same way, with no bytes to copy, and usched_run()
 * returns.
 *
 * At every instruction of a switch, no byte that is live or being copied
 * lies below the stack pointer, so a signal handler, which runs below it,
 * may fire anywhere.
 *
 * Registers: the callee-saved registers and the floating-point control
 * state (x86-64: MXCSR's control bits and the x87 control word; aarch64:
 * FPCR), which the ABIs also make callee-saved, are kept per thread; the
 * exception flags are the native thread's, as the ABIs leave them to the
 * caller. A new thread starts with the control state of the caller of
 * usched_run(). Reading it is slow, so with s_share_fpctl a block saves a
 * marker (UARCH_FPCTL_NONE) instead, and resuming a thread with that
 * marker, or starting one, leaves the state in force.
 */
#include "usched.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ustack_state {
	US_NEW = 1,	/* set up by ustack_init, never ran */
	US_RUNNING,
	US_BLOCKED,
	US_DONE
};

/* The dispatcher running on this native thread, if any. */
static __thread struct usched *usched_here
	__attribute__((tls_model("initial-exec")));

#define HIDDEN      __attribute__((visibility("hidden")))
/* Called only from the assembly: keep it, even under -flto. */
#define ASM_CALLED  __attribute__((used))
#define COLD        __attribute__((noinline, cold))
#define unlikely(x) __builtin_expect(!!(x), 0)
#define STR(x)      STR_(x)
#define STR_(x)     #x

/*
 * A saved stack of COPY_ALIGN_MIN bytes or more lies in its buffer at the
 * stack pointer's offset modulo 64, for up to 63 bytes more of buffer:
 * glibc copies such sizes with rep movsb, which on a Zen 3 took 1.3-2
 * times as long when the two offsets differed, and 35 times when the
 * destination was 16 bytes above the source modulo 4 KiB. Smaller copies
 * gain nothing worth the bytes.
 */
#define COPY_ALIGN_MIN 1024

/*
 * The architecture-specific primitives, in assembly at the end of this file.
 *
 * uarch_switch(ctx, fn, bottom, share_fpctl, arg): store the callee-saved
 *	registers, the return address and the FP control state
 *	(UARCH_FPCTL_NONE instead if share_fpctl) in ctx, then call
 *	fn(arg, sp) with sp the caller's stack pointer: the caller's frames
 *	lie in [sp, bottom), and nothing of the context is among them, so
 *	the copy does not read back what was just stored. fn returns, in two
 *	registers, a struct uarch_to: an error (to_len < 0: return to_len; no
 *	register has changed), or the context to switch to and the size of
 *	its stack, which goes below bottom (NULL: sp), as uarch_resume does.
 *	Across fn it keeps the FP control state it stored, not ctx: fn may
 *	discard ctx's thread, and s_done free its struct.
 *	Returning the target to the assembly that saved the context, rather
 *	than jumping from deep inside fn, keeps calls and returns paired, so
 *	the CPU predicts the returns of the resumed thread; in registers, it
 *	is at hand at once.
 * uarch_resume(bottom, ctx, len, fpctl): set the stack pointer to
 *	bottom - len, copy len bytes there from the buffer whose address
 *	follows ctx (u_stack; at ustack_saved's offset in it), load the
 *	registers from ctx, put its return address back and return 0 from
 *	that uarch_switch. The saved FP control state is loaded unless it
 *	is UARCH_FPCTL_NONE or equals fpctl, the state in force as
 *	uarch_switch saves it (or UARCH_FPCTL_NONE: not known), as loading
 *	is slow.
 * uarch_start(bottom, fn, arg, home): unless home is NULL, load the FP
 *	control state saved in the context home; set the stack pointer to
 *	bottom and call fn(arg), then usched_exit().
 *
 * A context is USCHED_CTX_WORDS words, first in struct ustack, followed by
 * u_stack, which uarch_resume reads there.
 */
struct uarch_to {
	const void *to_ctx;	/* the context to resume, */
	long        to_len;	/* the size of its stack, or -errno */
};
_Static_assert(offsetof(struct ustack, u_ctx) == 0 &&
	       offsetof(struct ustack, u_stack) == sizeof(unsigned long) *
	       USCHED_CTX_WORDS, "uarch_resume finds u_stack after u_ctx");

typedef struct uarch_to ucont_t(void *arg, char *sp);

HIDDEN int uarch_switch(unsigned long *ctx, ucont_t *fn, char *bottom,
			int share_fpctl, void *arg);
enum { UARCH_FPCTL_NONE = -1 };	/* never a real state */

HIDDEN __attribute__((noreturn))
void uarch_resume(char *bottom, const void *ctx, size_t len, long fpctl);
HIDDEN __attribute__((noreturn))
void uarch_start(char *bottom, void (*fn)(void *), void *arg,
		 const unsigned long *home);
HIDDEN __attribute__((noreturn)) void usched_exit(void);

/*
 * ======================== Sanitizers ========================
 * Functions that run across a switch of stacks return into another thread
 * than they were called from, and copy stacks that hold other frames'
 * redzones: sanitizers must not instrument them.
 */
#if defined(__clang__)
#define SWITCHING __attribute__((disable_sanitizer_instrumentation, \
				 no_sanitize("address")))
#else
#define SWITCHING __attribute__((no_sanitize("thread", "address")))
#endif

#if defined(__SANITIZE_THREAD__)
#define USCHED_TSAN 1
#elif defined(__SANITIZE_ADDRESS__)
#define USCHED_ASAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define USCHED_TSAN 1
#elif __has_feature(address_sanitizer)
#define USCHED_ASAN 1
#endif
#endif

#ifdef USCHED_TSAN
/* TSan keeps a call stack per native thread: give each thread a "fiber". */
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);

static void san_enter(struct usched *s)
{
	s->s_san_home = __tsan_get_current_fiber();
}

/* Switches to u's context (home for NULL), creating it for a new thread. */
static SWITCHING void san_switch(struct usched *s, struct ustack *u)
{
	if (u != NULL && u->u_san == NULL)
		u->u_san = __tsan_create_fiber(0);
	__tsan_switch_to_fiber(u != NULL ? u->u_san : s->s_san_home, 0);
	if (s->s_san_dead != NULL) {
		__tsan_destroy_fiber(s->s_san_dead);
		s->s_san_dead = NULL;
	}
}

static void san_finish(struct usched *s, struct ustack *u)
{
	s->s_san_dead = u->u_san;	/* destroyed once switched away */
	u->u_san = NULL;
}

/* A blocked thread is never switched to again; in s_next after its
 * block, its fiber is still the current one. */
static void san_discard(struct usched *s, struct ustack *u)
{
	if (u->u_san == __tsan_get_current_fiber()) {
		san_finish(s, u);
		return;
	}
	__tsan_destroy_fiber(u->u_san);
	u->u_san = NULL;
}
#else
static inline void san_enter(struct usched *s) { (void)s; }
static inline void san_finish(struct usched *s, struct ustack *u)
{
	(void)s;
	(void)u;
}
static inline void san_discard(struct usched *s, struct ustack *u)
{
	(void)s;
	(void)u;
}
#endif

#ifdef USCHED_ASAN
/*
 * ASan: the shadow of a blocked thread's stack (which bytes are redzones)
 * travels with it, after the stack bytes in its buffer, and comes back
 * when it resumes. Once saved, it is cleared: ASan expects the shadow below
 * the stack pointer to be clean, as function prologues poison redzones but
 * do not unpoison the rest of their frame. Copies bypass ASan's memcpy,
 * which would object to the redzones. Stack pointers are 16-byte aligned,
 * so the shadow of [sp, bottom) is exactly (bottom - sp) / 8 bytes.
 */
#include <sanitizer/asan_interface.h>

#define SAN_EXTRA(used) ((used) / 8)

/* Copies bypassing ASan's checks. */
static SWITCHING void san_copy(void *dst, const void *src, size_t n)
{
	volatile char *d = dst;
	const volatile char *from = src;

	for (size_t i = 0; i < n; i++)	/* volatile: not turned into memcpy */
		d[i] = from[i];
}
#define stack_copy san_copy

static SWITCHING char *asan_shadow(const char *addr)
{
	size_t scale, offset;

	__asan_get_shadow_mapping(&scale, &offset);
	return (char *)(((uintptr_t)addr >> scale) + offset);
}

static SWITCHING void san_save(char *to, char *sp, long used)
{
	stack_copy(to + used, asan_shadow(sp), SAN_EXTRA(used));
	__asan_unpoison_memory_region(sp, used);
}

/*
 * detect_stack_use_after_return moves frames to a fake stack per native
 * thread, which blocks do not copy: threads would share those frames.
 */
static int san_fake_stack(void)
{
	return __asan_get_current_fake_stack() != NULL;
}

/*
 * Called by uarch_resume instead of memcpy: the stack, then its shadow.
 * Only now, with the stack pointer at dst: a signal handler runs below it,
 * and would find the resumed thread's redzones in its own frame.
 */
HIDDEN ASM_CALLED SWITCHING void uarch_copy(void *dst, const void *src,
					    size_t n)
{
	san_copy(dst, src, n);
	san_copy(asan_shadow(dst), (const char *)src + n, SAN_EXTRA(n));
}
#else
#define SAN_EXTRA(used) 0
#define stack_copy memcpy

static inline void san_save(char *to, char *sp, long used)
{
	(void)to;
	(void)sp;
	(void)used;
}

static inline int san_fake_stack(void)
{
	return 0;
}
#endif

/* The buffer bytes a saved stack of used bytes takes. */
static inline long ustack_room(long used)
{
	return used + (unlikely(used >= COPY_ALIGN_MIN) ? 63 : 0) +
	       SAN_EXTRA(used);
}

/* Where in u's buffer its stack of used bytes, from sp, is saved. */
static inline char *ustack_saved(const struct ustack *u, const char *sp,
				 long used)
{
	char *buf = u->u_stack;

	/* unlikely: the small copies are the ones whose time a branch shows */
	if (unlikely(used >= COPY_ALIGN_MIN))
		return buf + (((uintptr_t)sp - (uintptr_t)buf) & 63);
	return buf;
}

#ifndef USCHED_TSAN
static inline void san_switch(struct usched *s, struct ustack *u)
{
	(void)s;
	(void)u;
}
#endif

#if defined(USCHED_ASAN) || defined(USCHED_TSAN)
static inline const char *san_unmatched(void)
{
	return NULL;
}
#else
/*
 * A program built with ASan or TSan brings its runtime. A library built
 * without it would copy stacks through the runtime's checked memcpy and
 * leave the shadow behind: every block would be reported, or go unseen.
 */
void __asan_init(void) __attribute__((weak));
void __tsan_init(void) __attribute__((weak));

/* The sanitizer whose runtime is here although usched is built without. */
static const char *san_unmatched(void)
{
	if (__asan_init != NULL)
		return "address";
	if (__tsan_init != NULL)
		return "thread";
	return NULL;
}
#endif

static __attribute__((noreturn, format(printf, 1, 2)))
void usched_panic(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	fputs("usched: ", stderr);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
	va_end(args);
	abort();
}

static int usched_stack_max(const struct usched *s)
{
	if (s->s_stack_max < 0)	/* usched_run refused it: set since */
		usched_panic("ustack_block(): s_stack_max was set negative "
			     "(%d) while usched_run ran", s->s_stack_max);
	return s->s_stack_max > 0 ? s->s_stack_max : USCHED_STACK_MAX_DEFAULT;
}

static inline struct uarch_to usched_to(const void *ctx, long len)
{
	return (struct uarch_to){ .to_ctx = ctx, .to_len = len };
}

/* s_next returned a thread that is not blocked: start it, or complain. */
static COLD SWITCHING struct uarch_to usched_start(struct usched *s,
						  struct ustack *u)
{
	if (u->u_state < US_NEW || u->u_state > US_DONE)
		usched_panic("s_next returned %p, not set up by ustack_init()",
			     (void *)u);
	if (u->u_sched != s)
		usched_panic("s_next returned thread %p of another dispatcher",
			     (void *)u);
	switch (u->u_state) {
	case US_NEW: {
		void (*f)(void *) = u->u_f;
		void *arg = u->u_arg;

		u->u_used = 0;
		u->u_san = NULL;
		s->s_self = u;
		san_switch(s, u);
		u->u_state = US_RUNNING;
		uarch_start(s->s_bottom, f, arg,
			    s->s_share_fpctl ? NULL : s->s_home);
	}
	case US_RUNNING:
		usched_panic("s_next returned thread %p, which is running",
			     (void *)u);
	default:
		usched_panic("s_next returned thread %p, which has finished",
			     (void *)u);
	}
}

/*
 * Asks s_next for a thread. Starts a new one right here; for a blocked one
 * (or home, when there is none) returns where to switch.
 */
static inline SWITCHING struct uarch_to usched_pick(struct usched *s)
{
	struct ustack *u = s->s_next(s);

	if (u == NULL) {
		san_switch(s, NULL);
		return usched_to(s->s_home, 0);
	}
	if (unlikely(u->u_sched != s || u->u_state != US_BLOCKED))
		return usched_start(s, u);
	s->s_self = u;
	s->s_nr_blocked--;
	san_switch(s, u);
	u->u_state = US_RUNNING;
	return usched_to(u->u_ctx, u->u_used);
}

/*
 * u is over, as finished or discarded: its buffer goes back, s_done learns.
 * SWITCHING as usched_finish is: clang inlines it there only then.
 */
static inline SWITCHING void usched_put_away(struct usched *s,
					      struct ustack *u)
{
	u->u_state = US_DONE;
	if (u->u_stack != NULL) {
		s->s_free(s, u->u_stack, u->u_len);
		u->u_stack = NULL;
		u->u_len = 0;
	}
	if (s->s_done != NULL)
		s->s_done(s, u);
}

static SWITCHING __attribute__((noreturn)) void usched_finish(struct ustack *u)
{
	struct usched *s = u->u_sched;
	struct uarch_to to;

	san_finish(s, u);
	s->s_self = NULL;	/* call-backs run outside every thread */
	s->s_blocked = NULL;
	usched_put_away(s, u);
	to = usched_pick(s);
	uarch_resume(s->s_bottom, to.to_ctx, to.to_len, UARCH_FPCTL_NONE);
}

/* Called by uarch_start when a thread's function returns. */
ASM_CALLED SWITCHING void usched_exit(void)
{
	usched_finish(usched_here->s_self);
}

/*
 * Gives u a buffer for used bytes, keeping the old one on failure. A first
 * buffer is as big as the deepest stack saved here, up to twice what u
 * needs, so that threads alike do not grow again; a growing stack grows
 * again soon, so it gets half as much again.
 */
static COLD int ustack_grow(struct ustack *u, long used)
{
	struct usched *s = u->u_sched;
	long max = usched_stack_max(s), want, size;
	void *buf;

	if (used > max)
		return -E2BIG;
	if (u->u_len > 0)	/* long: near INT_MAX, 1.5 times overflows */
		want = (long)u->u_len + u->u_len / 2;
	else
		want = s->s_max_used < 2 * used ? s->s_max_used : 2 * used;
	if (want < used)
		want = used;
	if (want > max)
		want = max;
	size = (ustack_room(want) + 15) & ~15L;	/* see s_alloc */
	if (size > INT_MAX)	/* s_stack_max near INT_MAX */
		return -E2BIG;
	buf = s->s_alloc(s, size);
	if (buf == NULL)
		return -ENOMEM;
	if (u->u_stack != NULL)
		s->s_free(s, u->u_stack, u->u_len);
	u->u_stack = buf;
	u->u_len = size;
	return 0;
}

/* Called by uarch_switch in ustack_block: copy the stack out, pick next. */
static SWITCHING struct uarch_to usched_suspend(void *arg, char *sp)
{
	struct ustack *u = arg;
	struct usched *s = u->u_sched;
	long used = s->s_bottom - sp;

	s->s_self = NULL;	/* s_alloc and s_free run outside u */
	/* unsigned: a stack pointer above the bottom takes this branch too */
	if (unlikely((unsigned long)ustack_room(used) >
		     (unsigned long)u->u_len)) {
		int err;

		if (used < 0)	/* above the bottom; 0 bytes never get here */
			usched_panic("ustack_block() called on another stack "
				     "than its thread's (a signal handler's?)");
		err = ustack_grow(u, used);
		if (err != 0) {
			s->s_self = u;
			return usched_to(NULL, err);
		}
	}
	/* Bookkeeping first: across the copy only s stays live. */
	u->u_used = used;
	if (unlikely(used > s->s_max_used))	/* so_stats reads it too */
		__atomic_store_n(&s->s_max_used, (int)used, __ATOMIC_RELAXED);
	u->u_state = US_BLOCKED;
	s->s_nr_blocked++;
	s->s_blocked = u;
	/* A thread that tail-calls the block saves nothing, and may have
	 * no buffer: memcpy(NULL, sp, 0) is undefined. */
	if (used > 0) {
		char *to = ustack_saved(u, sp, used);

		stack_copy(to, sp, used);
		san_save(to, sp, used);
	}
	return usched_pick(s);
}

/* Called by uarch_switch in usched_run, whose sp is the threads' bottom. */
static SWITCHING struct uarch_to usched_enter(void *arg, char *sp)
{
	struct usched *s = arg;

	if (s->s_nr_blocked > 0 && sp != s->s_bottom)
		usched_panic("usched_run(): %d threads blocked in an earlier "
			     "run would resume at other addresses; call it "
			     "from where that run was called",
			     s->s_nr_blocked);
	s->s_bottom = sp;
	s->s_self = NULL;
	s->s_blocked = NULL;
	return usched_pick(s);
}

void usched_run(struct usched *s)
{
	const char *san = san_unmatched();

	if (s == NULL)
		usched_panic("usched_run(): s is NULL");
	if (usched_here != NULL)
		usched_panic("usched_run() called from a thread or call-back "
			     "of a running dispatcher");
	if (s->s_next == NULL || s->s_alloc == NULL || s->s_free == NULL)
		usched_panic("usched_run(): s_next, s_alloc and s_free "
			     "must be set");
	if (s->s_stack_max < 0)
		usched_panic("usched_run(): s_stack_max is negative");
	if (san != NULL)
		usched_panic("usched_run(): the program is built with "
			     "-fsanitize=%s and libusched is not; build it "
			     "with the program's flags (make O=DIR "
			     "CFLAGS='-fsanitize=%s ...')", san, san);
	if (san_fake_stack())
		usched_panic("usched_run(): AddressSanitizer's "
			     "detect_stack_use_after_return is on; its frames "
			     "would not follow the threads "
			     "(ASAN_OPTIONS=detect_stack_use_after_return=0 "
			     "turns it off, unless built with "
			     "-fsanitize-address-use-after-return=always)");
	if (__atomic_exchange_n(&s->s_running, 1, __ATOMIC_ACQUIRE))
		usched_panic("usched_run(): dispatcher %p is already running "
			     "on another native thread", (void *)s);
	usched_here = s;
	san_enter(s);
	uarch_switch(s->s_home, &usched_enter, NULL, 0, s);
	usched_here = NULL;
	__atomic_store_n(&s->s_running, 0, __ATOMIC_RELEASE);
}

void ustack_init(struct ustack *u, struct usched *s, void (*f)(void *),
		 void *arg, void *stack, int len)
{
	if (u == NULL || s == NULL || f == NULL || (stack != NULL && len < 0))
		usched_panic("ustack_init(): %s", u == NULL ? "u is NULL" :
			     s == NULL ? "s is NULL" : f == NULL ? "f is NULL" :
			     "a buffer of negative size");
	/* Its function would never run: it ends as the old one returns. */
	if (usched_here != NULL && u == usched_here->s_self)
		usched_panic("ustack_init(): %p is the running thread",
			     (void *)u);
	/* atomic: a scheduler may reuse u while a stale handle is read */
	__atomic_store_n(&u->u_sched, s, __ATOMIC_RELAXED);
	u->u_stack = stack;
	u->u_len = stack != NULL ? len : 0;
	u->u_state = US_NEW;
	u->u_f = f;
	u->u_arg = arg;
}

void ustack_discard(struct ustack *u)
{
	struct usched *s;
	struct ustack *self;

	if (u == NULL || u->u_state < US_NEW || u->u_state > US_DONE)
		usched_panic("ustack_discard(): %p is not set up by "
			     "ustack_init()", (void *)u);
	if (u->u_state == US_DONE)
		return;
	if (u->u_state == US_RUNNING)
		usched_panic("ustack_discard(): thread %p is running (it may "
			     "end itself with ustack_abort())", (void *)u);
	s = u->u_sched;
	if (__atomic_load_n(&s->s_running, __ATOMIC_ACQUIRE) &&
	    usched_here != s)
		usched_panic("ustack_discard(): the dispatcher of thread %p "
			     "runs on another native thread", (void *)u);
	if (u->u_state == US_BLOCKED) {
		san_discard(s, u);
		s->s_nr_blocked--;
		if (s->s_blocked == u)	/* from s_next */
			s->s_blocked = NULL;
	}
	self = s->s_self;	/* a thread of s, discarding */
	s->s_self = NULL;
	usched_put_away(s, u);
	s->s_self = self;
}

struct ustack *ustack_self(void)
{
	struct usched *s = usched_here;

	return s != NULL ? s->s_self : NULL;
}

int ustack_block(void)
{
	/* s is u->u_sched, but one load nearer: the FP control state is
	 * saved only once the branch on s_share_fpctl is resolved. */
	struct usched *s = usched_here;
	struct ustack *u = s != NULL ? s->s_self : NULL;

	if (u == NULL)
		usched_panic("ustack_block() called outside a usched thread");
	return uarch_switch(u->u_ctx, &usched_suspend, s->s_bottom,
			    s->s_share_fpctl, u);
}

void ustack_abort(void)
{
	struct ustack *u = ustack_self();

	if (u == NULL)
		usched_panic("ustack_abort() called outside a usched thread");
	usched_finish(u);
}

/*
 * ======================== x86-64 ========================
 * Context, as uarch_switch stores it: +0 rbx rbp r12 r13 r14 r15, +48
 *	MXCSR without its exception flags, +52 x87 control word, +54 0 (or
 *	+48 all ones if the FP control state is shared), +56 the return
 *	address; u_stack at +64.
 *	The FP control state is put together in a register: an 8-byte load
 *	of what stmxcsr and fnstcw had just stored in pieces would wait for
 *	the stores to reach the cache (no store forwarding), ~1.5 ns a block.
 *	MXCSR's exception flags (bits 0-5) are status, as the x87 status
 *	word and aarch64's FPSR are: the native thread's, not a thread's.
 *	They are not saved, a load keeps those in force, and two states
 *	that differ only in flags compare equal, so that a flag one thread
 *	raised does not make every switch reload.
 * A saved stack starts just above the return address (its caller's sp
 * before the call), 16-byte aligned; the return address goes back below
 * it on a resume.
 */
#if defined(__x86_64__)
#ifdef USCHED_ASAN
#define UARCH_COPY "uarch_copy"
#else
#define UARCH_COPY "memcpy@PLT"
#endif
#define MXCSR_FLAGS 63
__asm__(
	".text\n"
	".globl uarch_switch\n"
	".hidden uarch_switch\n"
	".type uarch_switch, @function\n"
	".p2align 4\n"
"uarch_switch:\n"			/* (ctx, fn, bottom, share, arg) */
	".cfi_startproc\n"
	"movq %rbx, 0(%rdi)\n"
	"movq %rbp, 8(%rdi)\n"
	"movq %r12, 16(%rdi)\n"
	"movq %r13, 24(%rdi)\n"
	"movq %r14, 32(%rdi)\n"
	"movq %r15, 40(%rdi)\n"
	"movq (%rsp), %rax\n"
	"movq %rax, 56(%rdi)\n"
	"leaq 8(%rsp), %r10\n"		/* the caller's sp: its frames */
	"subq $24, %rsp\n"
	".cfi_adjust_cfa_offset 24\n"
	"movq $-1, %rax\n"		/* UARCH_FPCTL_NONE */
	"testl %ecx, %ecx\n"
	"jnz 2f\n"
	"stmxcsr 16(%rsp)\n"		/* in uarch_switch's frame's pad */
	"fnstcw 20(%rsp)\n"
	"movl 16(%rsp), %eax\n"
	"andl $~" STR(MXCSR_FLAGS) ", %eax\n"
	"movzwl 20(%rsp), %ecx\n"
	"shlq $32, %rcx\n"
	"orq %rcx, %rax\n"
"2:\n"
	"movq %rax, 48(%rdi)\n"
	"movq %rax, 8(%rsp)\n"		/* kept across fn: the FP control */
	"testq %rdx, %rdx\n"
	"cmovzq %r10, %rdx\n"
	"movq %rdx, 0(%rsp)\n"		/* in force, and the bottom */
	"movq %rsi, %r9\n"
	"movq %r8, %rdi\n"
	"movq %r10, %rsi\n"
	"call *%r9\n"			/* to_ctx in rax, to_len in rdx */
	"testq %rdx, %rdx\n"
	"js 1f\n"
	"movq 8(%rsp), %rcx\n"
	"movq %rax, %rsi\n"
	"movq 0(%rsp), %rdi\n"
	"jmp uarch_resume\n"
"1:\n"
	"movl %edx, %eax\n"
	"addq $24, %rsp\n"
	".cfi_adjust_cfa_offset -24\n"
	"ret\n"
	".cfi_endproc\n"
	".size uarch_switch, .-uarch_switch\n"

	".globl uarch_resume\n"
	".hidden uarch_resume\n"
	".type uarch_resume, @function\n"
	".p2align 4\n"
"uarch_resume:\n"			/* (bottom, ctx, len, fpctl) */
	".cfi_startproc\n"
	".cfi_undefined %rip\n"		/* jumped to: backtraces end here */
	"movq %rsi, %rbx\n"		/* kept across the copy */
	"movq %rcx, %r12\n"
	"subq %rdx, %rdi\n"		/* the thread's sp */
	"movq %rdi, %rsp\n"
	"testq %rdx, %rdx\n"
	"jz 1f\n"
	"movq 64(%rbx), %rsi\n"		/* u_stack */
	"cmpq $" STR(COPY_ALIGN_MIN) ", %rdx\n"
	"jb 3f\n"
	"movl %edi, %eax\n"		/* ustack_saved's offset */
	"subl %esi, %eax\n"
	"andl $63, %eax\n"
	"addq %rax, %rsi\n"
"3:\n"
	"call " UARCH_COPY "\n"
"1:\n"
	"cmpq 48(%rbx), %r12\n"
	"je 2f\n"
	"cmpq $-1, 48(%rbx)\n"		/* UARCH_FPCTL_NONE */
	"je 2f\n"
	"call .Lload_fpctl\n"
"2:\n"
	"pushq 56(%rbx)\n"		/* the return address */
	"movq 8(%rbx), %rbp\n"
	"movq 16(%rbx), %r12\n"
	"movq 24(%rbx), %r13\n"
	"movq 32(%rbx), %r14\n"
	"movq 40(%rbx), %r15\n"
	"movq 0(%rbx), %rbx\n"
	"xorl %eax, %eax\n"
	"ret\n"
	".cfi_endproc\n"
	".size uarch_resume, .-uarch_resume\n"

	/* Loads the FP control state of the context at rbx, keeping the
	 * exception flags in force; clobbers rax. MXCSR only if it differs:
	 * every thread's start comes here, and loading it is slow. */
".Lload_fpctl:\n"
	".cfi_startproc\n"
	"subq $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"stmxcsr (%rsp)\n"
	"movl (%rsp), %eax\n"
	"andl $" STR(MXCSR_FLAGS) ", %eax\n"
	"orl 48(%rbx), %eax\n"
	"cmpl (%rsp), %eax\n"
	"je 1f\n"
	"movl %eax, (%rsp)\n"
	"ldmxcsr (%rsp)\n"
"1:\n"
	"fldcw 52(%rbx)\n"
	"addq $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"ret\n"
	".cfi_endproc\n"

	".globl uarch_start\n"
	".hidden uarch_start\n"
	".type uarch_start, @function\n"
	".p2align 4\n"
"uarch_start:\n"
	".cfi_startproc\n"
	".cfi_undefined %rip\n"		/* backtraces end here */
	"testq %rcx, %rcx\n"
	"jz 1f\n"
	"movq %rcx, %rbx\n"		/* no caller to keep it for */
	"call .Lload_fpctl\n"
"1:\n"
	"movq %rdi, %rsp\n"
	"movq %rdx, %rdi\n"
	"xorl %ebp, %ebp\n"
	"call *%rsi\n"
	"call usched_exit\n"
	"ud2\n"
	".cfi_endproc\n"
	".size uarch_start, .-uarch_start\n"
);

/*
 * ======================== aarch64 ========================
 * Context, as uarch_switch stores it: +0 x19..x28, +80 x29 x30 (the
 *	return address), +96 d8..d15, +160 FPCR (all ones if shared); u_stack
 *	at +176. A saved stack starts at the sp of uarch_switch's caller.
 */
#elif defined(__aarch64__)
#ifdef USCHED_ASAN
#define UARCH_COPY "uarch_copy"
#else
#define UARCH_COPY "memcpy"
#endif
__asm__(
	".text\n"
	".globl uarch_switch\n"
	".hidden uarch_switch\n"
	".type uarch_switch, %function\n"
	".p2align 4\n"
"uarch_switch:\n"			/* (ctx, fn, bottom, share, arg) */
	".cfi_startproc\n"
	"stp x19, x20, [x0, #0]\n"
	"stp x21, x22, [x0, #16]\n"
	"stp x23, x24, [x0, #32]\n"
	"stp x25, x26, [x0, #48]\n"
	"stp x27, x28, [x0, #64]\n"
	"stp x29, x30, [x0, #80]\n"
	"stp d8, d9, [x0, #96]\n"
	"stp d10, d11, [x0, #112]\n"
	"stp d12, d13, [x0, #128]\n"
	"stp d14, d15, [x0, #144]\n"
	"mov x9, #-1\n"			/* UARCH_FPCTL_NONE */
	"cbnz w3, 3f\n"
	"mrs x9, fpcr\n"
"3:\n"
	"str x9, [x0, #160]\n"
	"mov x10, sp\n"			/* the caller's frames */
	"cbnz x2, 2f\n"
	"mov x2, x10\n"
"2:\n"
	"stp x29, x30, [sp, #-32]!\n"
	".cfi_def_cfa_offset 32\n"
	".cfi_offset x29, -32\n"
	".cfi_offset x30, -24\n"
	"stp x2, x9, [sp, #16]\n"		/* kept: bottom, FP control */
	"mov x9, x1\n"
	"mov x0, x4\n"
	"mov x1, x10\n"
	"blr x9\n"			/* to_ctx in x0, to_len in x1 */
	"tbnz x1, #63, 1f\n"
	"ldp x9, x3, [sp, #16]\n"
	"mov x2, x1\n"
	"mov x1, x0\n"
	"mov x0, x9\n"
	"b uarch_resume\n"
"1:\n"
	"mov x0, x1\n"
	"ldp x29, x30, [sp], #32\n"
	".cfi_def_cfa_offset 0\n"
	"ret\n"
	".cfi_endproc\n"
	".size uarch_switch, .-uarch_switch\n"

	".globl uarch_resume\n"
	".hidden uarch_resume\n"
	".type uarch_resume, %function\n"
	".p2align 4\n"
"uarch_resume:\n"			/* (bottom, ctx, len, fpctl) */
	".cfi_startproc\n"
	".cfi_undefined x30\n"		/* jumped to: backtraces end here */
	"mov x19, x1\n"			/* kept across the copy */
	"mov x20, x3\n"
	"sub x0, x0, x2\n"		/* the thread's sp */
	"mov sp, x0\n"
	"cbz x2, 1f\n"
	"ldr x1, [x19, #176]\n"		/* u_stack */
	"cmp x2, #" STR(COPY_ALIGN_MIN) "\n"
	"b.lo 3f\n"
	"sub x9, x0, x1\n"		/* ustack_saved's offset */
	"and x9, x9, #63\n"
	"add x1, x1, x9\n"
"3:\n"
	"bl " UARCH_COPY "\n"
"1:\n"
	"ldr x9, [x19, #160]\n"
	"cmp x9, x20\n"
	"b.eq 2f\n"
	"cmn x9, #1\n"			/* UARCH_FPCTL_NONE */
	"b.eq 2f\n"
	"msr fpcr, x9\n"
"2:\n"
	"ldp x21, x22, [x19, #16]\n"
	"ldp x23, x24, [x19, #32]\n"
	"ldp x25, x26, [x19, #48]\n"
	"ldp x27, x28, [x19, #64]\n"
	"ldp x29, x30, [x19, #80]\n"
	"ldp d8, d9, [x19, #96]\n"
	"ldp d10, d11, [x19, #112]\n"
	"ldp d12, d13, [x19, #128]\n"
	"ldp d14, d15, [x19, #144]\n"
	"ldp x19, x20, [x19, #0]\n"
	"mov x0, #0\n"
	"ret\n"
	".cfi_endproc\n"
	".size uarch_resume, .-uarch_resume\n"

	".globl uarch_start\n"
	".hidden uarch_start\n"
	".type uarch_start, %function\n"
	".p2align 4\n"
"uarch_start:\n"
	".cfi_startproc\n"
	".cfi_undefined x30\n"		/* backtraces end here */
	"cbz x3, 1f\n"
	"ldr x9, [x3, #160]\n"
	"msr fpcr, x9\n"
"1:\n"
	"mov sp, x0\n"
	"mov x0, x2\n"
	"mov x29, #0\n"
	"blr x1\n"
	"bl usched_exit\n"
	"brk #0\n"
	".cfi_endproc\n"
	".size uarch_start, .-uarch_start\n"
);
#else
#error "usched supports x86-64 and aarch64 only"
#endif
