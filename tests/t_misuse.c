/* Misuse is caught with a clear message, not memory corruption. */
#include "tap.h"
#include "tsched.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void block_outside(void *arg)
{
	(void)arg;
	ustack_block();
}

static void abort_outside(void *arg)
{
	(void)arg;
	ustack_abort();
}

static void run_nested(void *arg)
{
	struct tsched inner;

	(void)arg;
	tsched_init(&inner);
	tsched_run(&inner);
}

static void spawn_and_run(void (*f)(void *))
{
	struct tsched ts;

	tsched_init(&ts);
	tsched_spawn(&ts, f, NULL);
	tsched_run(&ts);
}

static void run_from_thread(void *arg)
{
	(void)arg;
	spawn_and_run(run_nested);
}

/* s_next hands back a thread after it finished. */
static struct ustack *zombie;
static int zombie_calls;

static struct ustack *zombie_next(struct usched *s)
{
	(void)s;
	return zombie_calls++ < 2 ? zombie : NULL;
}

static void *plain_alloc(struct usched *s, int size)
{
	(void)s;
	return malloc(size);
}

static void plain_free(struct usched *s, void *buf, int size)
{
	(void)s;
	(void)size;
	free(buf);
}

/*
 * Runs a dispatcher whose s_next returns u twice. If init, u is set up
 * first, for owner or (if NULL) for this dispatcher.
 */
static void run_returning(struct ustack *u, int init, struct usched *owner)
{
	struct usched s = { .s_next = zombie_next, .s_alloc = plain_alloc,
			    .s_free = plain_free };

	if (init)
		ustack_init(u, owner != NULL ? owner : &s, tsched_nop, NULL,
			    NULL, 0);
	zombie = u;
	usched_run(&s);
}

static void resume_finished(void *arg)
{
	static struct ustack u;

	(void)arg;
	run_returning(&u, 1, NULL);	/* runs, then is returned again */
}

static void resume_uninitialised(void *arg)
{
	static struct ustack u;

	(void)arg;
	run_returning(&u, 0, NULL);
}

/* Neither zeroed nor set up: a state past the last one. */
static void resume_garbage(void *arg)
{
	static struct ustack u;

	(void)arg;
	memset(&u, 0x55, sizeof u);
	run_returning(&u, 0, NULL);
}

static void resume_foreign(void *arg)
{
	static struct usched other;
	static struct ustack u;

	(void)arg;
	run_returning(&u, 1, &other);
}

static void run_without_callbacks(void *arg)
{
	struct usched s = { .s_next = zombie_next };

	(void)arg;
	usched_run(&s);
}

static void run_without_free(void *arg)
{
	struct usched s = { .s_next = zombie_next, .s_alloc = plain_alloc };

	(void)arg;
	usched_run(&s);
}

static void run_negative_limit(void *arg)
{
	struct usched s = { .s_next = zombie_next, .s_alloc = plain_alloc,
			    .s_free = plain_free, .s_stack_max = -1 };

	(void)arg;
	usched_run(&s);
}

/*
 * A dispatcher of one thread that blocks once and is resumed once: its
 * s_alloc or s_free may block too (which must be caught).
 */
static struct ustack once_u;
static int once_calls;

static struct ustack *once_next(struct usched *s)
{
	(void)s;
	return once_calls++ < 2 ? &once_u : NULL;
}

/* A frame kept across the block: there is a stack to save. */
static void block_once(void *arg)
{
	volatile int kept = 1;

	(void)arg;
	ustack_block();
	kept++;
}

static void *blocking_alloc(struct usched *s, int size)
{
	ustack_block();
	return plain_alloc(s, size);
}

static void blocking_free(struct usched *s, void *buf, int size)
{
	ustack_block();
	plain_free(s, buf, size);
}

static struct usched once_s;

static struct usched *once_setup(void *(*alloc)(struct usched *, int),
				 void (*release)(struct usched *, void *, int))
{
	once_s = (struct usched){ .s_next = once_next, .s_alloc = alloc,
				  .s_free = release };
	ustack_init(&once_u, &once_s, block_once, NULL, NULL, 0);
	return &once_s;
}

static void block_in_alloc(void *arg)
{
	(void)arg;
	usched_run(once_setup(blocking_alloc, plain_free));
}

static void block_in_free(void *arg)
{
	(void)arg;
	usched_run(once_setup(plain_alloc, blocking_free));
}

/* block_once's first block needs a buffer, whose limit is now negative. */
static void limit_negative_then_block(void *arg)
{
	once_s.s_stack_max = -1;
	block_once(arg);
}

static void limit_negative_while_running(void *arg)
{
	struct usched *s = once_setup(plain_alloc, plain_free);

	(void)arg;
	ustack_init(&once_u, s, limit_negative_then_block, NULL, NULL, 0);
	usched_run(s);
}

/* s_done runs once the thread's buffer is given back: nothing to grow. */
static void blocking_done(struct usched *s, struct ustack *u)
{
	(void)s;
	(void)u;
	ustack_block();
}

static void block_in_done(void *arg)
{
	(void)arg;
	once_setup(plain_alloc, plain_free)->s_done = blocking_done;
	usched_run(&once_s);
}

/*
 * A thread left blocked by a run of its own dispatcher, then returned by
 * another one's s_next: it must not be resumed there.
 */
static void resume_foreign_blocked(void *arg)
{
	struct usched *s = once_setup(plain_alloc, plain_free);

	(void)arg;
	once_calls = 1;		/* the first run starts it, then ends */
	usched_run(s);
	run_returning(&once_u, 0, NULL);
}

static void rerun_elsewhere(void *arg)
{
	struct usched *s = once_setup(plain_alloc, plain_free);

	(void)arg;
	once_calls = 1;		/* the first run starts it, then ends */
	usched_run(s);
	once_calls = 1;		/* the second run would resume it */
	tsched_run_deeper(s);
}

static void init_without_function(void *arg)
{
	(void)arg;
	ustack_init(&once_u, &once_s, NULL, NULL, NULL, 0);
}

static void init_negative_buffer(void *arg)
{
	static char buf[64];

	(void)arg;
	ustack_init(&once_u, &once_s, block_once, NULL, buf, -64);
}

static void init_without_thread(void *arg)
{
	(void)arg;
	ustack_init(NULL, &once_s, block_once, NULL, NULL, 0);
}

static void init_without_dispatcher(void *arg)
{
	(void)arg;
	ustack_init(&once_u, NULL, block_once, NULL, NULL, 0);
}

/* A thread set up again while it runs: its new function never would. */
static void init_self(void *arg)
{
	struct ustack *u = ustack_self();

	(void)arg;
	ustack_init(u, u->u_sched, block_once, NULL, NULL, 0);
}

static void init_running(void *arg)
{
	(void)arg;
	spawn_and_run(init_self);
}

static void discard_self(void *arg)
{
	(void)arg;
	ustack_discard(ustack_self());
}

static void discard_running(void *arg)
{
	(void)arg;
	spawn_and_run(discard_self);
}

/* Resumed from a block, a thread runs as one just started does. */
static void discard_self_resumed(void *arg)
{
	(void)arg;
	tsched_yield();
	ustack_discard(ustack_self());
}

static void discard_resumed(void *arg)
{
	(void)arg;
	spawn_and_run(discard_self_resumed);
}

static void discard_null(void *arg)
{
	(void)arg;
	ustack_discard(NULL);
}

static void discard_zeroed(void *arg)
{
	static struct ustack u;

	(void)arg;
	ustack_discard(&u);
}

static void discard_garbage(void *arg)
{
	static struct ustack u;

	(void)arg;
	memset(&u, 0x55, sizeof u);
	ustack_discard(&u);
}

/* A thread discarded while blocked, then returned by s_next. */
static void resume_discarded(void *arg)
{
	struct usched *s = once_setup(plain_alloc, plain_free);

	(void)arg;
	once_calls = 1;		/* the first run starts it, then ends */
	usched_run(s);
	ustack_discard(&once_u);
	once_calls = 1;		/* the second run would resume it */
	usched_run(s);
}

static void run_without_dispatcher(void *arg)
{
	(void)arg;
	usched_run(NULL);
}

/* A handler on an alternate stack above the threads' bottom blocks. */
static void on_usr1(int sig)
{
	(void)sig;
	ustack_block();
}

static void raise_usr1(void *arg)
{
	(void)arg;
	raise(SIGUSR1);
}

static void block_on_altstack(void *arg)
{
	char alt[64 * 1024] __attribute__((aligned(16)));	/* above */
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt };
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };

	(void)arg;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		return;
	spawn_and_run(raise_usr1);
}

/* One dispatcher, two native threads. */
static volatile int inside;

static struct ustack *stuck_next(struct usched *s)
{
	(void)s;
	inside = 1;
	while (inside)
		pause();
	return NULL;
}

static void *runner(void *arg)
{
	usched_run(arg);
	return NULL;
}

static void run_twice(void *arg)
{
	static struct usched s = { .s_next = stuck_next,
				   .s_alloc = plain_alloc,
				   .s_free = plain_free };
	pthread_t t;

	(void)arg;
	pthread_create(&t, NULL, runner, &s);
	while (!inside)
		usleep(1000);
	alarm(10);	/* unrefused, both runs would wait in stuck_next */
	usched_run(&s);
}

/* Another native thread's run holds once_u blocked, from inside s_next. */
static struct ustack *hold_next(struct usched *s)
{
	return once_calls++ == 0 ? &once_u : stuck_next(s);
}

static void discard_elsewhere(void *arg)
{
	struct usched *s = once_setup(plain_alloc, plain_free);
	pthread_t t;

	(void)arg;
	s->s_next = hold_next;
	once_calls = 0;
	pthread_create(&t, NULL, runner, s);
	while (!inside)
		usleep(1000);
	ustack_discard(&once_u);
}

static const struct {
	void      (*m_f)(void *);
	const char *m_expect;
	const char *m_name;
} misuses[] = {
	{ block_outside, "ustack_block() called outside",
	  "blocking outside a thread" },
	{ abort_outside, "ustack_abort() called outside",
	  "aborting outside a thread" },
	{ run_from_thread, "usched_run() called from a thread",
	  "re-entering usched_run from a thread" },
	{ resume_finished, "which has finished",
	  "s_next returning a finished thread" },
	{ resume_uninitialised, "not set up by ustack_init",
	  "s_next returning an uninitialised thread" },
	{ resume_garbage, "not set up by ustack_init",
	  "s_next returning a thread full of garbage" },
	{ resume_foreign, "of another dispatcher",
	  "s_next returning another dispatcher's thread" },
	{ run_without_callbacks, "must be set",
	  "usched_run without s_alloc and s_free" },
	{ run_without_free, "must be set", "usched_run without s_free" },
	{ run_negative_limit, "s_stack_max is negative",
	  "usched_run with a negative s_stack_max" },
	{ limit_negative_while_running, "s_stack_max was set negative (-1) "
	  "while usched_run ran", "a block after s_stack_max turned negative" },
	{ run_twice, "already running on another native thread",
	  "one dispatcher on two native threads" },
	{ block_in_alloc, "ustack_block() called outside",
	  "blocking in s_alloc" },
	{ block_in_free, "ustack_block() called outside",
	  "blocking in s_free, as a thread ends" },
	{ block_in_done, "ustack_block() called outside",
	  "blocking in s_done" },
	{ resume_foreign_blocked, "of another dispatcher",
	  "s_next returning another dispatcher's blocked thread" },
	{ rerun_elsewhere, "would resume at other addresses",
	  "resuming blocked threads from another stack depth" },
	{ block_on_altstack, "called on another stack than its thread's",
	  "blocking from a handler on another stack" },
	{ init_without_function, "f is NULL",
	  "ustack_init without a function" },
	{ init_negative_buffer, "negative size",
	  "ustack_init with a buffer of negative size" },
	{ init_without_thread, "u is NULL", "ustack_init without a thread" },
	{ init_without_dispatcher, "s is NULL",
	  "ustack_init without a dispatcher" },
	{ init_running, "is the running thread",
	  "ustack_init on the running thread" },
	{ discard_running, "is running (it may end itself",
	  "discarding the running thread" },
	{ discard_resumed, "is running (it may end itself",
	  "discarding the running thread, resumed from a block" },
	{ discard_null, "ustack_discard(): (nil) is not set up",
	  "discarding NULL" },
	{ discard_zeroed, "is not set up by ustack_init",
	  "discarding a zeroed thread" },
	{ discard_garbage, "is not set up by ustack_init",
	  "discarding a thread full of garbage" },
	{ discard_elsewhere, "runs on another native thread",
	  "discarding a thread another native thread's run holds" },
	{ resume_discarded, "which has finished",
	  "s_next returning a discarded thread" },
	{ run_without_dispatcher, "usched: usched_run(): s is NULL",
	  "usched_run without one, said with the library's prefix" },
};

int main(void)
{
	for (size_t i = 0; i < sizeof misuses / sizeof misuses[0]; i++)
		dies_with(misuses[i].m_f, NULL, misuses[i].m_expect,
			  misuses[i].m_name);
	return tap_done();
}
