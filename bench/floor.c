/*
 * The floor: what a switch by stack copying costs at the least on this
 * machine, without usched (switch --floor). A step does what uarch_switch
 * and uarch_resume do and nothing else. It stores the callee-saved
 * registers, its return address and the FP control state (a marker
 * instead with share_fpctl) in one buffer's context, copies the bytes
 * above its return address, its caller's frames, out to that buffer with
 * memcpy, copies another buffer's bytes back in over them, and loads the
 * registers and the return address from that buffer's context. There is
 * no dispatcher, no scheduler call and no bookkeeping. The FP control
 * state is not loaded back: the saved one is the state in force, which
 * uarch_resume also leaves alone.
 *
 * Both buffers hold copies of a step's stack taken at the same call, with
 * the same registers, so a step returns where it was called. floor_loop,
 * in assembly, therefore keeps its state in memory above the copied bytes
 * (which it leaves as a gap) and calls floor_step from one place only. Its
 * first two steps fill each buffer with its own copy; the steps after that
 * copy out to one buffer and in from the other, in turn. Both buffers
 * start filled with a pattern that no stack holds, so a step that copied
 * too little shows.
 *
 *	|  floor_loop's state    |
 *	+------------------------+
 *	|  gap                   |  `bytes`, copied out, then in
 *	+------------------------+ <- floor_step's caller's sp
 *	|  return to floor_loop  |  kept in the context, with the registers
 *	+------------------------+
 *
 * A buffer: the context (floor_context bytes), then the copied bytes.
 */
#include "floor.h"
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void floor_loop(void *a, void *b, uint64_t steps, size_t bytes,
		int share_fpctl);

/*
 * ======================== x86-64 ========================
 * The context as uarch_switch stores it: rbx rbp r12-r15, MXCSR and the
 * x87 control word (or all ones), the return address; 64 bytes.
 */
#if defined(__x86_64__)
const size_t floor_context = 64;

__asm__(
	".text\n"
	".p2align 4\n"
	".type floor_step, @function\n"
"floor_step:\n"			/* (out, in, bytes, share_fpctl) */
	"movq %rbx, 0(%rdi)\n"
	"movq %rbp, 8(%rdi)\n"
	"movq %r12, 16(%rdi)\n"
	"movq %r13, 24(%rdi)\n"
	"movq %r14, 32(%rdi)\n"
	"movq %r15, 40(%rdi)\n"
	"movq (%rsp), %rax\n"
	"movq %rax, 56(%rdi)\n"
	"movq $-1, 48(%rdi)\n"
	"testl %ecx, %ecx\n"
	"jnz 1f\n"
	"stmxcsr 48(%rdi)\n"
	"fnstcw 52(%rdi)\n"
"1:\n"
	"movq %rsi, %rbx\n"		/* kept across the copies */
	"movq %rdx, %r12\n"
	"leaq 8(%rsp), %r13\n"		/* the caller's sp */
	"subq $8, %rsp\n"
	"addq $64, %rdi\n"
	"movq %r13, %rsi\n"
	"call memcpy@PLT\n"		/* out */
	"movq %r13, %rdi\n"
	"leaq 64(%rbx), %rsi\n"
	"movq %r12, %rdx\n"
	"call memcpy@PLT\n"		/* in */
	"addq $8, %rsp\n"
	"movq 56(%rbx), %rax\n"
	"movq %rax, (%rsp)\n"
	"movq 8(%rbx), %rbp\n"
	"movq 16(%rbx), %r12\n"
	"movq 24(%rbx), %r13\n"
	"movq 32(%rbx), %r14\n"
	"movq 40(%rbx), %r15\n"
	"movq 0(%rbx), %rbx\n"
	"ret\n"
	".size floor_step, .-floor_step\n"

	".globl floor_loop\n"
	".type floor_loop, @function\n"
	".p2align 4\n"
/* state below rbp: a, b, steps, bytes, share, step */
"floor_loop:\n"
	"pushq %rbp\n"
	"movq %rsp, %rbp\n"
	"subq $48, %rsp\n"
	"movq %rdi, -48(%rbp)\n"
	"movq %rsi, -40(%rbp)\n"
	"movq %rdx, -32(%rbp)\n"
	"movq %rcx, -24(%rbp)\n"
	"movl %r8d, -16(%rbp)\n"
	"movq $0, -8(%rbp)\n"
	"subq %rcx, %rsp\n"		/* the gap */
"2:\n"
	"movq -8(%rbp), %rax\n"
	"cmpq -32(%rbp), %rax\n"
	"jae 3f\n"
	"movq -48(%rbp), %rdi\n"
	"movq -40(%rbp), %rsi\n"
	"movq %rdi, %rdx\n"
	"testq $1, %rax\n"
	"cmovnzq %rsi, %rdi\n"		/* out: a, b, a, ... */
	"cmovnzq %rdx, %rsi\n"		/* in: the other one */
	"cmpq $2, %rax\n"
	"cmovbq %rdi, %rsi\n"		/* the first two: its own */
	"incq %rax\n"
	"movq %rax, -8(%rbp)\n"
	"movq -24(%rbp), %rdx\n"
	"movl -16(%rbp), %ecx\n"
	"call floor_step\n"
	"jmp 2b\n"
"3:\n"
	"movq %rbp, %rsp\n"
	"popq %rbp\n"
	"ret\n"
	".size floor_loop, .-floor_loop\n"
);

/*
 * ======================== aarch64 ========================
 * The context as uarch_switch stores it: x19-x28, x29, x30 (the return
 * address), d8-d15, FPCR (or all ones); 176 bytes.
 */
#elif defined(__aarch64__)
const size_t floor_context = 176;

__asm__(
	".text\n"
	".p2align 4\n"
	".type floor_step, %function\n"
"floor_step:\n"			/* (out, in, bytes, share_fpctl) */
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
	"mov x9, #-1\n"
	"cbnz w3, 1f\n"
	"mrs x9, fpcr\n"
"1:\n"
	"str x9, [x0, #160]\n"
	"mov x19, x1\n"			/* kept across the copies */
	"mov x20, x2\n"
	"add x0, x0, #176\n"
	"mov x1, sp\n"
	"bl memcpy\n"			/* out */
	"mov x0, sp\n"
	"add x1, x19, #176\n"
	"mov x2, x20\n"
	"bl memcpy\n"			/* in */
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
	"ret\n"
	".size floor_step, .-floor_step\n"

	".globl floor_loop\n"
	".type floor_loop, %function\n"
	".p2align 4\n"
/* state above x29's frame record: a, b, steps, bytes, share, step */
"floor_loop:\n"
	"stp x29, x30, [sp, #-64]!\n"
	"mov x29, sp\n"
	"stp x0, x1, [x29, #16]\n"
	"stp x2, x3, [x29, #32]\n"
	"str w4, [x29, #48]\n"
	"str xzr, [x29, #56]\n"
	"sub sp, sp, x3\n"		/* the gap */
"2:\n"
	"ldr x9, [x29, #56]\n"
	"ldr x10, [x29, #32]\n"
	"cmp x9, x10\n"
	"b.hs 3f\n"
	"ldp x0, x1, [x29, #16]\n"
	"tst x9, #1\n"
	"csel x11, x1, x0, ne\n"	/* out: a, b, a, ... */
	"csel x1, x0, x1, ne\n"		/* in: the other one */
	"mov x0, x11\n"
	"cmp x9, #2\n"
	"csel x1, x0, x1, lo\n"		/* the first two: its own */
	"add x9, x9, #1\n"
	"str x9, [x29, #56]\n"
	"ldr x2, [x29, #40]\n"
	"ldr w3, [x29, #48]\n"
	"bl floor_step\n"
	"b 2b\n"
"3:\n"
	"mov sp, x29\n"
	"ldp x29, x30, [sp], #64\n"
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

double floor_ns(uint64_t rounds, size_t bytes, int share_fpctl,
		int short_copy)
{
	uint64_t steps = 2 * rounds + 2;
	unsigned char *a, *b;
	double secs;

	if (bytes % 16 != 0) {
		fprintf(stderr, "floor: %zu bytes are not 16-byte frames\n",
			bytes);
		exit(1);
	}
	a = malloc(floor_context + bytes);
	b = malloc(floor_context + bytes);
	if (a == NULL || b == NULL) {
		fprintf(stderr, "floor: no memory for two buffers of %zu bytes\n",
			floor_context + bytes);
		exit(1);
	}
	memset(a, UNCOPIED, floor_context + bytes);
	memset(b, UNCOPIED, floor_context + bytes);
	secs = bench_seconds();
	floor_loop(a, b, steps, bytes - (short_copy && bytes > 0 ? 16 : 0),
		   share_fpctl);
	secs = bench_seconds() - secs;
	if (!copied_whole(a + floor_context, bytes) ||
	    !copied_whole(b + floor_context, bytes)) {
		fprintf(stderr, "floor: a step did not copy all %zu bytes\n",
			bytes);
		exit(1);
	}
	free(a);
	free(b);
	return secs * 1e9 / (double)steps;
}
