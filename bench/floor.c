/*
 * The floor: what a switch by stack copying costs at the least on this
 * machine, without usched (switch --floor). A step does what uarch_switch
 * and uarch_resume do and nothing else. It pushes the callee-saved
 * registers and the FP control state (a marker instead with share_fpctl),
 * copies the bytes from its stack pointer to the end of that context (its
 * return address included) out to one buffer with memcpy, copies another
 * buffer back in over them, and pops the registers from there. There is no
 * dispatcher, no scheduler call and no bookkeeping. The FP control state
 * is not loaded back: the saved one is the state in force, which
 * uarch_resume also leaves alone.
 *
 * Both buffers hold copies of a step's stack taken at the same call, with
 * the same registers, so a step returns where it was called. floor_loop,
 * in assembly, therefore keeps its state in memory above the copied bytes
 * and calls floor_step from one place only. Its first two steps fill each
 * buffer with its own copy; the steps after that copy out to one buffer
 * and in from the other, in turn. Both buffers start filled with a
 * pattern that no stack holds, so a step that copied too little shows.
 *
 *	|  floor_loop's state    |
 *	+------------------------+
 *	|  return to floor_loop  |  \
 *	|  saved registers       |   floor_context + frame bytes,
 *	|  frame                 |   copied out, then in
 *	+------------------------+  / <- sp
 */
#include "floor.h"
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void floor_loop(void *a, void *b, uint64_t steps, size_t frame,
		int share_fpctl);

/*
 * ======================== x86-64 ========================
 * The context as uarch_switch pushes it: rbp rbx r12-r15, MXCSR and the
 * x87 control word (or all ones); with the return address, 64 bytes.
 */
#if defined(__x86_64__)
const size_t floor_context = 64;

__asm__(
	".text\n"
	".p2align 4\n"
	".type floor_step, @function\n"
"floor_step:\n"				/* (out, in, frame, share_fpctl) */
	"pushq %rbp\n"
	"pushq %rbx\n"
	"pushq %r12\n"
	"pushq %r13\n"
	"pushq %r14\n"
	"pushq %r15\n"
	"pushq $-1\n"
	"testl %ecx, %ecx\n"
	"jnz 1f\n"
	"stmxcsr (%rsp)\n"
	"fnstcw 4(%rsp)\n"
"1:\n"
	"movq %rsi, %rbx\n"		/* kept across the copies */
	"movq %rdx, %r12\n"
	"leaq 64(%rdx), %r13\n"		/* frame, context, return address */
	"subq %rdx, %rsp\n"
	"movq %rsp, %rsi\n"
	"movq %r13, %rdx\n"
	"call memcpy@PLT\n"		/* out */
	"movq %rsp, %rdi\n"
	"movq %rbx, %rsi\n"
	"movq %r13, %rdx\n"
	"call memcpy@PLT\n"		/* in */
	"addq %r12, %rsp\n"
	"addq $8, %rsp\n"
	"popq %r15\n"
	"popq %r14\n"
	"popq %r13\n"
	"popq %r12\n"
	"popq %rbx\n"
	"popq %rbp\n"
	"ret\n"
	".size floor_step, .-floor_step\n"

	".globl floor_loop\n"
	".type floor_loop, @function\n"
	".p2align 4\n"
"floor_loop:\n"			/* state: a, b, steps, frame, share, step */
	"subq $56, %rsp\n"
	"movq %rdi, 0(%rsp)\n"
	"movq %rsi, 8(%rsp)\n"
	"movq %rdx, 16(%rsp)\n"
	"movq %rcx, 24(%rsp)\n"
	"movl %r8d, 32(%rsp)\n"
	"movq $0, 40(%rsp)\n"
"2:\n"
	"movq 40(%rsp), %rax\n"
	"cmpq 16(%rsp), %rax\n"
	"jae 3f\n"
	"movq 0(%rsp), %rdi\n"
	"movq 8(%rsp), %rsi\n"
	"movq %rdi, %rdx\n"
	"testq $1, %rax\n"
	"cmovnzq %rsi, %rdi\n"		/* out: a, b, a, ... */
	"cmovnzq %rdx, %rsi\n"		/* in: the other one */
	"cmpq $2, %rax\n"
	"cmovbq %rdi, %rsi\n"		/* the first two: its own */
	"incq %rax\n"
	"movq %rax, 40(%rsp)\n"
	"movq 24(%rsp), %rdx\n"
	"movl 32(%rsp), %ecx\n"
	"call floor_step\n"
	"jmp 2b\n"
"3:\n"
	"addq $56, %rsp\n"
	"ret\n"
	".size floor_loop, .-floor_loop\n"
);

/*
 * ======================== aarch64 ========================
 * The context as uarch_switch pushes it: x19-x28, x29, x30 (the return
 * address), d8-d15, FPCR (or all ones); 176 bytes.
 */
#elif defined(__aarch64__)
const size_t floor_context = 176;

__asm__(
	".text\n"
	".p2align 4\n"
	".type floor_step, %function\n"
"floor_step:\n"				/* (out, in, frame, share_fpctl) */
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
	"mov x9, #-1\n"
	"cbnz w3, 1f\n"
	"mrs x9, fpcr\n"
"1:\n"
	"str x9, [sp, #160]\n"
	"mov x19, x1\n"			/* kept across the copies */
	"mov x20, x2\n"
	"add x21, x2, #176\n"		/* frame and context */
	"sub sp, sp, x2\n"
	"mov x1, sp\n"
	"mov x2, x21\n"
	"bl memcpy\n"			/* out */
	"mov x0, sp\n"
	"mov x1, x19\n"
	"mov x2, x21\n"
	"bl memcpy\n"			/* in */
	"add sp, sp, x20\n"
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
	".size floor_step, .-floor_step\n"

	".globl floor_loop\n"
	".type floor_loop, %function\n"
	".p2align 4\n"
"floor_loop:\n"			/* state: a, b, steps, frame, share, step */
	"sub sp, sp, #64\n"
	"stp x29, x30, [sp, #48]\n"
	"stp x0, x1, [sp, #0]\n"
	"stp x2, x3, [sp, #16]\n"
	"str w4, [sp, #32]\n"
	"str xzr, [sp, #40]\n"
"2:\n"
	"ldr x9, [sp, #40]\n"
	"ldr x10, [sp, #16]\n"
	"cmp x9, x10\n"
	"b.hs 3f\n"
	"ldp x0, x1, [sp, #0]\n"
	"tst x9, #1\n"
	"csel x11, x1, x0, ne\n"	/* out: a, b, a, ... */
	"csel x1, x0, x1, ne\n"		/* in: the other one */
	"mov x0, x11\n"
	"cmp x9, #2\n"
	"csel x1, x0, x1, lo\n"		/* the first two: its own */
	"add x9, x9, #1\n"
	"str x9, [sp, #40]\n"
	"ldr x2, [sp, #24]\n"
	"ldr w3, [sp, #32]\n"
	"bl floor_step\n"
	"b 2b\n"
"3:\n"
	"ldp x29, x30, [sp, #48]\n"
	"add sp, sp, #64\n"
	"ret\n"
	".size floor_loop, .-floor_loop\n"
);
#else
#error "the floor is written for x86-64 and aarch64 only"
#endif

enum { UNCOPIED = 0xa5 };

/* A stack holds no word of all UNCOPIED bytes: one left was not copied. */
static int copied_whole(const unsigned char *buf, size_t bytes)
{
	unsigned char left[8];

	memset(left, UNCOPIED, sizeof left);
	for (size_t i = 0; i + sizeof left <= bytes; i += sizeof left)
		if (memcmp(buf + i, left, sizeof left) == 0)
			return 0;
	return 1;
}

double floor_ns(uint64_t rounds, size_t bytes, int share_fpctl)
{
	uint64_t steps = 2 * rounds + 2;
	void *a, *b;
	double secs;

	if (bytes < floor_context || (bytes - floor_context) % 16 != 0) {
		fprintf(stderr, "floor: %zu bytes do not make a stack of %zu "
			"bytes of context and 16-byte frames\n", bytes,
			floor_context);
		exit(1);
	}
	a = malloc(bytes);
	b = malloc(bytes);
	if (a == NULL || b == NULL) {
		fprintf(stderr, "floor: no memory for two buffers of %zu bytes\n",
			bytes);
		exit(1);
	}
	memset(a, UNCOPIED, bytes);
	memset(b, UNCOPIED, bytes);
	secs = bench_seconds();
	floor_loop(a, b, steps, bytes - floor_context, share_fpctl);
	secs = bench_seconds() - secs;
	if (!copied_whole(a, bytes) || !copied_whole(b, bytes)) {
		fprintf(stderr, "floor: a step did not copy all %zu bytes\n",
			bytes);
		exit(1);
	}
	free(a);
	free(b);
	return secs * 1e9 / (double)steps;
}
