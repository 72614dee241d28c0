/*
 * usched: a dispatcher for cooperative user-space threads that all run on
 * one native stack, by copying each blocked thread's stack to the heap.
 *
 * usched dispatches; it does not schedule. The user (or a scheduler such as
 * rr.c or ll.c) says which thread runs next through s_next, and provides the
 * stack buffers through s_alloc and s_free. See usched.c for the mechanism
 * and README.md for the rules a thread must follow.
 */
#ifndef USCHED_H
#define USCHED_H

#include <stddef.h>

/*
 * Stacks the compiler keeps beside the native one (clang's SafeStack and
 * ShadowCallStack) are per native thread: they would not be copied with a
 * thread's stack, and the threads' frames there would overwrite each other.
 * HWAddressSanitizer's tags of stack memory would not follow a copy either.
 * (gcc's ShadowCallStack defines nothing to tell it by.)
 */
#if defined(__has_feature)
#define USCHED_HAS_(feature) __has_feature(feature)
#else
#define USCHED_HAS_(feature) 0
#endif
#if USCHED_HAS_(safe_stack) || USCHED_HAS_(shadow_call_stack)
#error "usched: -fsanitize=safe-stack and shadow-call-stack are not supported"
#endif
#if USCHED_HAS_(hwaddress_sanitizer) || defined(__SANITIZE_HWADDRESS__)
#error "usched: -fsanitize=hwaddress is not supported"
#endif
#undef USCHED_HAS_

/* The contexts are of 64-bit words, and so are the assembly's offsets. */
#if defined(__ILP32__)
#error "usched: 64-bit pointers only (not i386, x32, nor aarch64's ILP32)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct ustack;

/* Words of a saved context: callee-saved registers, return address, FP
 * control state. */
#if defined(__aarch64__)
#define USCHED_CTX_WORDS 22
#elif defined(__x86_64__)
#define USCHED_CTX_WORDS 8
#else
#error "usched supports x86-64 and aarch64 only"
#endif

/* Default limit on the stack a thread may have in use when it blocks. */
enum { USCHED_STACK_MAX_DEFAULT = 1 << 20 };

struct usched {
	/* Set by the user, in a struct otherwise zeroed (= { ... } or
	 * calloc). s_next, s_alloc and s_free are required. */

	/* Next thread to run (new or blocked), or NULL to leave usched_run. */
	struct ustack *(*s_next)(struct usched *s);
	/* A stack buffer of at least size bytes (any alignment), or NULL;
	 * size is a multiple of 16, so that 16-byte classes fit it. */
	void          *(*s_alloc)(struct usched *s, int size);
	/* Give back a buffer from s_alloc (or one passed to ustack_init). */
	void           (*s_free)(struct usched *s, void *buf, int size);
	/* Optional: a thread finished, or was discarded; its buffer was
	 * already given back (u_stack is NULL, u_len 0). */
	void           (*s_done)(struct usched *s, struct ustack *u);
	/* Optional: limit on a blocked thread's stack, 0 for the default
	 * (negative stops usched_run with a message, or, set so while it
	 * runs, the block that needs a bigger buffer); checked when a buffer
	 * must grow (a bigger one from ustack_init allows as much). A
	 * stack of 1 KiB or more takes up to 63 bytes more of buffer: it is
	 * saved at the stack pointer's offset modulo 64, which memcpy copies
	 * fastest. */
	int              s_stack_max;
	/* Optional: nonzero if the threads share one floating-point control
	 * state (x86-64: MXCSR's control bits, x87 control word; aarch64:
	 * FPCR; the exception flags are shared in any case), as
	 * stackless coroutines do. Blocks then neither save nor restore it
	 * (~1.5 ns less a switch on x86-64), so a thread that changes it
	 * changes it for the threads that run or start after it, until it
	 * sets it back; usched_run's caller still gets its own back. May be
	 * changed at any time: a thread that blocked while it was set saved
	 * no state, and resumes with the one in force. */
	int              s_share_fpctl;

	/* Read-only: the largest stack a thread of this dispatcher saved. */
	int              s_max_used;

	/* Private to usched.c. */
	/* Where every thread's stack begins: usched_run's sp. */
	char            *s_bottom;
	struct ustack   *s_self;     /* the running thread */
	struct ustack   *s_blocked;  /* the thread that blocked, for s_next */
	int              s_running;  /* set while usched_run is active */
	int              s_nr_blocked; /* threads blocked, to be resumed */
	void            *s_san_home; /* usched_run's caller's sanitizer state */
	void            *s_san_dead; /* sanitizer state of a finished thread */
	unsigned long    s_home[USCHED_CTX_WORDS]; /* usched_run's registers */
};

/*
 * A thread: 104 bytes on x86-64 and 216 on aarch64, 64 and 176 of them
 * its registers. What it needs before it starts and what it needs once it
 * ran share their place.
 */
struct ustack {
	unsigned long  u_ctx[USCHED_CTX_WORDS]; /* private: the registers
						  * of a blocked thread */
	void          *u_stack;      /* saved-stack buffer */
	struct usched *u_sched;
	int            u_len;        /* its size */
	int            u_state;      /* private: usched.c's enum ustack_state */
	union {
		struct {             /* private, until the thread starts */
			void (*u_f)(void *arg);
			void  *u_arg;
		};
		struct {             /* once it started */
			int    u_used;   /* bytes saved at the last block */
			void  *u_san;    /* private: sanitizer state */
		};
	};
};

/*
 * Runs threads until s_next returns NULL. Threads still blocked then hold
 * addresses of this stack: only a later run called from the same place
 * (native thread and stack depth) may resume them; a run whose stack
 * pointer differs stops the program with a message, unless they were
 * discarded. (What is checked is the address: a new native thread that
 * glibc gave an exited one's stack, and its thread block with it, passes.)
 */
void usched_run(struct usched *s);
/* The thread s is running, or NULL; for schedulers that know s already. */
static inline struct ustack *usched_running(const struct usched *s)
{
	return s->s_self;
}
/*
 * For s_next: the thread whose block made this call, its stack already
 * saved; NULL when the call follows a thread's end or usched_run's start.
 */
static inline struct ustack *usched_blocked(const struct usched *s)
{
	return s->s_blocked;
}
/*
 * Sets up u to run f(arg) with buffer stack of len bytes (or NULL; a block
 * that needs more, as a stack of 1 KiB or more takes 63 bytes more, gets
 * one from s_alloc). u must not be blocked: its saved stack would be lost,
 * not freed (discard it first). The running thread stops the program: f
 * would never run.
 */
void ustack_init(struct ustack *u, struct usched *s, void (*f)(void *),
		 void *arg, void *stack, int len);
/*
 * Blocks the running thread: its stack is saved and s_next picks another.
 * 0 once resumed; -ENOMEM or -E2BIG (over s_stack_max) if the stack could
 * not be saved, without blocking. Outside a thread, stops the program.
 */
int  ustack_block(void);
/* Ends the running thread, as returning from f does; outside one, stops
 * the program. */
void ustack_abort(void) __attribute__((noreturn));
/*
 * Ends u, blocked or never run, without running it again: its buffer goes
 * back through s_free, s_done is called as for a thread that finishes, and
 * a blocked u no longer counts as blocked (see usched_run). Nothing of its
 * stack runs: what its frames held, memory or locks, is for the caller to
 * release. s_next must not return u afterwards (so no thread of rr or ll,
 * which may have it queued). A finished u is left as it is. Stops the
 * program if u runs, or if its dispatcher runs on another native thread;
 * on this one, any of its threads or call-backs may discard (s_next its
 * usched_blocked() too).
 */
void ustack_discard(struct ustack *u);
/* The running thread of this native thread's dispatcher, or NULL. */
struct ustack *ustack_self(void);

#ifdef __cplusplus
}
#endif

#endif /* USCHED_H */
