/*
 * Every callee-saved register survives a block, and usched_run: threads
 * load values of their own into all of them, block while the others load
 * theirs, and read them back. Compiled code keeps few values in them
 * across a call, so the other tests would miss most registers a switch
 * forgot to restore. And a thread starts with a NULL frame pointer.
 */
#include "tap.h"
#include "tsched.h"

#include <stdint.h>

/*
 * regs_call(in, out, fn, arg): load in[] into the callee-saved registers,
 * call fn(arg), store the registers into out[], and return what fn did,
 * with the caller's own registers back.
 */
#if defined(__x86_64__)
enum { REGS_WORDS = 6 };
static const char *const regs_name[REGS_WORDS] = {
	"rbx", "rbp", "r12", "r13", "r14", "r15"
};
__asm__(
	".text\n"
	".p2align 4\n"
	".type regs_call, @function\n"
"regs_call:\n"				/* (in, out, fn, arg) */
	"pushq %rbx\n"
	"pushq %rbp\n"
	"pushq %r12\n"
	"pushq %r13\n"
	"pushq %r14\n"
	"pushq %r15\n"
	"pushq %rsi\n"			/* out; the stack is aligned */
	"movq %rdi, %rax\n"
	"movq %rdx, %r11\n"
	"movq %rcx, %rdi\n"
	"movq 0(%rax), %rbx\n"
	"movq 8(%rax), %rbp\n"
	"movq 16(%rax), %r12\n"
	"movq 24(%rax), %r13\n"
	"movq 32(%rax), %r14\n"
	"movq 40(%rax), %r15\n"
	"call *%r11\n"
	"movq (%rsp), %rcx\n"
	"movq %rbx, 0(%rcx)\n"
	"movq %rbp, 8(%rcx)\n"
	"movq %r12, 16(%rcx)\n"
	"movq %r13, 24(%rcx)\n"
	"movq %r14, 32(%rcx)\n"
	"movq %r15, 40(%rcx)\n"
	"popq %rsi\n"
	"popq %r15\n"
	"popq %r14\n"
	"popq %r13\n"
	"popq %r12\n"
	"popq %rbp\n"
	"popq %rbx\n"
	"ret\n"
	".size regs_call, .-regs_call\n"
);
#elif defined(__aarch64__)
enum { REGS_WORDS = 19 };
static const char *const regs_name[REGS_WORDS] = {
	"x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
	"x29", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15"
};
__asm__(
	".text\n"
	".p2align 4\n"
	".type regs_call, %function\n"
"regs_call:\n"				/* (in, out, fn, arg) */
	"sub sp, sp, #176\n"
	"stp x19, x20, [sp, #0]\n"
	"stp x21, x22, [sp, #16]\n"
	"stp x23, x24, [sp, #32]\n"
	"stp x25, x26, [sp, #48]\n"
	"stp x27, x28, [sp, #64]\n"
	"stp x29, x30, [sp, #80]\n"
	"stp d8, d9, [sp, #96]\n"
	"stp d10, d11, [sp, #112]\n"
	"stp d12, d13, [sp, #128]\n"
	"stp d14, d15, [sp, #144]\n"
	"str x1, [sp, #160]\n"		/* out */
	"mov x16, x2\n"
	"mov x17, x0\n"
	"mov x0, x3\n"
	"ldp x19, x20, [x17, #0]\n"
	"ldp x21, x22, [x17, #16]\n"
	"ldp x23, x24, [x17, #32]\n"
	"ldp x25, x26, [x17, #48]\n"
	"ldp x27, x28, [x17, #64]\n"
	"ldr x29, [x17, #80]\n"
	"ldp d8, d9, [x17, #88]\n"
	"ldp d10, d11, [x17, #104]\n"
	"ldp d12, d13, [x17, #120]\n"
	"ldp d14, d15, [x17, #136]\n"
	"blr x16\n"
	"ldr x1, [sp, #160]\n"
	"stp x19, x20, [x1, #0]\n"
	"stp x21, x22, [x1, #16]\n"
	"stp x23, x24, [x1, #32]\n"
	"stp x25, x26, [x1, #48]\n"
	"stp x27, x28, [x1, #64]\n"
	"str x29, [x1, #80]\n"
	"stp d8, d9, [x1, #88]\n"
	"stp d10, d11, [x1, #104]\n"
	"stp d12, d13, [x1, #120]\n"
	"stp d14, d15, [x1, #136]\n"
	"ldp x19, x20, [sp, #0]\n"
	"ldp x21, x22, [sp, #16]\n"
	"ldp x23, x24, [sp, #32]\n"
	"ldp x25, x26, [sp, #48]\n"
	"ldp x27, x28, [sp, #64]\n"
	"ldp x29, x30, [sp, #80]\n"
	"ldp d8, d9, [sp, #96]\n"
	"ldp d10, d11, [sp, #112]\n"
	"ldp d12, d13, [sp, #128]\n"
	"ldp d14, d15, [sp, #144]\n"
	"add sp, sp, #176\n"
	"ret\n"
	".size regs_call, .-regs_call\n"
);
#else
#error "t_regs knows the registers of x86-64 and aarch64 only"
#endif

int regs_call(const unsigned long *in, unsigned long *out,
	      int (*fn)(void *), void *arg);

enum { THREADS = 4, ROUNDS = 3, HOME = THREADS };

static long bad;

/* Values unlike any address or small number, different for each use. */
static void regs_fill(unsigned long *in, int who, int round)
{
	for (int k = 0; k < REGS_WORDS; k++)
		in[k] = (unsigned long)(who * 1009 + round * 101 + k + 1) *
			0x9e3779b97f4a7c15ULL;
}

static void regs_check(const unsigned long *in, const unsigned long *out,
		       int who, int round)
{
	for (int k = 0; k < REGS_WORDS; k++) {
		if (out[k] == in[k])
			continue;
		bad++;
		diag("%s %d, round %d: %s is %#lx, not %#lx",
		     who == HOME ? "usched_run's caller" : "thread", who,
		     round, regs_name[k], out[k], in[k]);
	}
}

/* At -O1 and up a tail call: no frame of its own saves a register. */
static int block(void *arg)
{
	(void)arg;
	return ustack_block();
}

static void holder(void *arg)
{
	int who = (int)(intptr_t)arg;
	struct tthread *self = tsched_self();
	struct tsched *ts = (struct tsched *)self->t_s.t_u.u_sched;

	for (int round = 0; round < ROUNDS; round++) {
		unsigned long in[REGS_WORDS], out[REGS_WORDS];

		regs_fill(in, who, round);
		/* after the others */
		sched_enqueue(&ts->ts_ready, &self->t_s);
		require(regs_call(in, out, block, NULL) == 0);
		regs_check(in, out, who, round);
	}
}

/*
 * A thread's function is called with a NULL frame pointer, so that a walk
 * of the frame chain (perf, a sanitizer's fast unwinder) ends at its
 * start, not in whatever a last thread left there.
 */
static void *start_frame = (void *)1;

static void starter(void *arg)
{
	void **frame = __builtin_frame_address(0);

	(void)arg;
	start_frame = frame[0];	/* the caller's: uarch_start's */
}

/* usched_run's own frame may save some registers; s_home has the rest. */
static int run(void *arg)
{
	tsched_run(arg);
	return 0;
}

int main(void)
{
	unsigned long in[REGS_WORDS], out[REGS_WORDS];
	struct tsched ts;

	tsched_init(&ts);
	for (int i = 0; i < THREADS; i++)
		tsched_spawn(&ts, holder, (void *)(intptr_t)i);
	tsched_spawn(&ts, starter, NULL);	/* after the holders began */
	regs_fill(in, HOME, 0);
	regs_call(in, out, run, &ts);
	ok(ts.ts_done == THREADS + 1, "%d threads of %d ran to the end",
	   (int)ts.ts_done, THREADS + 1);
	regs_check(in, out, HOME, 0);
	ok(bad == 0, "%d callee-saved registers kept across %d blocks of %d "
	   "threads and usched_run: %ld wrong", REGS_WORDS, ROUNDS, THREADS,
	   bad);
	ok(start_frame == NULL, "a thread starts with a NULL frame pointer "
	   "(got %p)", start_frame);
	return tap_done();
}
