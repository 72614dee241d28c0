#!/usr/bin/env python3
"""make check-mutants: every mutant of usched.c or a scheduler fails a test.

An assembly mutant changes one instruction of an architecture's section of
usched.c: an instruction that stores or loads (a memory operand, or the FP
control register) is dropped, or its offset moved by 8; a conditional
branch or move takes the other condition. A C mutant, one of C_MUTANTS,
replaces a text of the C code of usched.c or of the schedulers (ll.c, rr.c,
sched/) with another: a comparison turned, a check or a store dropped, a
value changed. Each mutant is built in a copy of the tree and tests run on
it, two at a time: the dispatcher's for usched.c (under qemu for aarch64),
SCHED_TESTS for the schedulers (FULL_SCALE's, unscaled); a C mutant runs at
x86-64 gcc -O2 unless RUN_IN names the configuration that can tell it (a
sanitizer's code, aarch64's FP control). A mutant that passes them all is a
defect of the tests, unless it is listed: in SPEED_ONLY, those of the
assembly that change when work is done, not what a thread finds when it
resumes; in EQUIVALENT, those of the C code that no program can tell from
the code. A C mutant whose text is not in its file exactly once, or that
does not build, fails the run too: the list follows the code.

    tests/mutants.py [--arch x86-64|aarch64|all] [--kind asm|c|all]
                     [--list] [--only ID]...
"""
import argparse
import collections
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from sweep import kill_group  # noqa: E402
# The dispatcher's tests; t_sched and the rest test the schedulers.
TESTS = ["t_basic", "t_discard", "t_regs", "t_fpenv", "t_stack", "t_errors",
         "t_signal", "t_misuse", "t_faults", "t_bufs", "t_wake_block",
         "t_million", "t_model", "t_examples"]
# The schedulers' tests that kill their mutants, in the order that kills
# them soonest, and their USCHED_TEST_THREADS: as under a sanitizer, which
# takes t_sched and t_model a fifth of the time of 200000.
SCHED_TESTS = ["t_queue", "t_yield", "t_wake_block", "t_lock", "t_pin",
               "t_errors", "t_bufs", "t_model", "t_sched", "t_faults"]
SCHED_THREADS = "20000"
# Scheduler mutants that only tests at full scale kill (USCHED_TEST_THREADS
# unset), and those tests: t_sched tries 4096 processors only then. A test
# listed n times runs up to n times: t_sched catches ll-fini-late only when
# a wake reaches an inbox after its processor stopped, a race that about
# one run in three misses.
FULL_SCALE = {"proc-init-max": ["t_sched"], "ll-fini-late": ["t_sched"] * 6}
TIMEOUT = 120
# Fewer mutants than this: the parser no longer reads the assembly, and a
# run that tried nothing must not pass.
MIN_MUTANTS = 40
QEMU = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
# Mutants built and tested at once (CI has 2 cores).
JOBS = 2

ARCHS = {
    "x86-64": {
        "marker": "======================== x86-64",
        "cc": "gcc", "make": [], "exec": [],
        "mem": re.compile(r"\(%\w+\)|xcsr|fnstcw|fldcw"),
        "offset": re.compile(r"(-?\d*)\((%\w+)\)"),
        "flip": [("jnz", "jz"), ("jne", "je"), ("jns", "js"),
                 ("cmovnz", "cmovz")],
    },
    "aarch64": {
        "marker": "======================== aarch64",
        "cc": "aarch64-linux-gnu-gcc", "make": ["AR=aarch64-linux-gnu-ar"],
        "exec": QEMU,
        "mem": re.compile(r"\[|\bmrs\b|\bmsr\b"),
        "offset": re.compile(r"\[(\w+)(?:, #(-?\d+))?\]"),
        "flip": [("cbnz", "cbz"), ("tbnz", "tbz"), ("b.ne", "b.eq")],
    },
}

# Why a mutant that loads the saved FP state when it need not be survives:
# nothing a thread can see changes, only the time a switch takes. The FP
# state in force, as uarch_resume gets it, is then another word, in
# practice never equal to a saved state, which is loaded.
STALE = "the FP state in force is then a stale word of the stack"
SCRATCH = "the FP state in force is then what fn left in a scratch register"
# (arch, kind, instruction): mutants that change only speed, and why.
SPEED_ONLY = {
    ("x86-64", "drop", "movq %rax, 8(%rsp)"): STALE,
    ("x86-64", "offset", "movq %rax, 8(%rsp)"): STALE,
    ("x86-64", "drop", "movq 8(%rsp), %rcx"): SCRATCH,
    ("x86-64", "offset", "movq 8(%rsp), %rcx"):
        "the FP state in force is then the pieces stmxcsr and fnstcw "
        "stored, and two stale bytes: the state or never a saved one",
    ("x86-64", "offset", "cmpq 48(%rbx), %r12"):
        "compares the return address with the FP state in force: never "
        "equal, so the saved state is loaded",
    ("x86-64", "drop", "cmpl (%rsp), %eax"):
        "MXCSR is loaded unless the state to load is 0, which it never is",
    ("x86-64", "offset", "cmpl (%rsp), %eax"):
        "compares with a return address: MXCSR is loaded",
}

# usched_finish gives the buffer back, then calls s_done.
FINISH_FREE = ("\tif (u->u_stack != NULL) {\n"
               "\t\ts->s_free(s, u->u_stack, u->u_len);\n"
               "\t\tu->u_stack = NULL;\n"
               "\t\tu->u_len = 0;\n"
               "\t}\n")
FINISH_DONE = "\tif (s->s_done != NULL)\n\t\ts->s_done(s, u);\n"

# The C mutants of a file, by file below: (id, text of the file, what
# replaces it, what that breaks), in the file's order. The text must be
# there exactly once.
USCHED_C = [
    ("align-min", "#define COPY_ALIGN_MIN 1024", "#define COPY_ALIGN_MIN 2048",
     "stacks of 1-2 KiB are saved at their buffer's start"),
    # TSan's fibers
    ("tsan-new-fiber", "if (u != NULL && u->u_san == NULL)",
     "if (u != NULL)", "a resumed thread gets a new fiber"),
    ("tsan-leak-fiber", "\t\t__tsan_destroy_fiber(s->s_san_dead);\n", "",
     "a finished thread's fiber is never destroyed"),
    ("tsan-discard-current", "\t\tsan_finish(s, u);\n\t\treturn;\n", "",
     "s_next destroys the fiber of the thread that blocked, still current"),
    ("tsan-discard-leak", "\t__tsan_destroy_fiber(u->u_san);\n", "",
     "a discarded thread's fiber is never destroyed"),
    ("tsan-dead-kept", "\t\ts->s_san_dead = NULL;\n", "",
     "a finished thread's fiber is destroyed again at every switch"),
    # ASan's shadow
    ("asan-extra", "#define SAN_EXTRA(used) ((used) / 8)",
     "#define SAN_EXTRA(used) ((used) / 16)",
     "half of a blocked thread's shadow travels with it"),
    ("asan-save-shadow",
     "\tstack_copy(to + used, asan_shadow(sp), SAN_EXTRA(used));\n", "",
     "a blocked thread's redzones are not saved"),
    ("asan-unpoison", "\t__asan_unpoison_memory_region(sp, used);\n", "",
     "a blocked thread's redzones stay on the stack"),
    ("asan-restore-shadow",
     "\tsan_copy(asan_shadow(dst), (const char *)src + n, SAN_EXTRA(n));\n",
     "", "a resumed thread's redzones are not put back"),
    # ustack_room, ustack_saved
    ("room-align", "(unlikely(used >= COPY_ALIGN_MIN) ? 63 : 0)", "0",
     "a big stack's buffer has no room for its offset"),
    ("room-san", " +\n\t       SAN_EXTRA(used);\n}", ";\n}",
     "a buffer has no room for the shadow"),
    ("saved-offset", "\tif (unlikely(used >= COPY_ALIGN_MIN))\n",
     "\tif (0)\n", "a big stack is saved at its buffer's start, and "
     "resumed from its offset"),
    # usched_panic, usched_stack_max
    ("panic-prefix", '\tfputs("usched: ", stderr);\n', "",
     "messages do not name the library"),
    ("limit-negative", "\tif (s->s_stack_max < 0)\t/* usched_run refused "
     "it: set since */\n", "\tif (0)\n",
     "a limit set negative while running passes for the default"),
    ("limit-set", "s->s_stack_max > 0 ? s->s_stack_max :",
     "s->s_stack_max > 0 ? s->s_stack_max + 16 :",
     "s_stack_max lets 16 bytes more through"),
    ("limit-default", ": USCHED_STACK_MAX_DEFAULT;",
     ": USCHED_STACK_MAX_DEFAULT + 4096;",
     "the default limit is 4 KiB over 1 MiB"),
    # usched_start
    ("start-state-low", "if (u->u_state < US_NEW || u->u_state > US_DONE)",
     "if (u->u_state > US_DONE)", "a zeroed thread is not refused"),
    ("start-state-high", "if (u->u_state < US_NEW || u->u_state > US_DONE)",
     "if (u->u_state < US_NEW)", "a state past the last is not refused"),
    ("start-foreign", "\tif (u->u_sched != s)\n", "\tif (0)\n",
     "another dispatcher's new thread starts"),
    ("start-used", "\t\tu->u_used = 0;\n", "",
     "a new thread's saved size is a leftover of u_f"),
    ("start-san", "\t\tu->u_san = NULL;\n", "",
     "a new thread's fiber is a leftover of u_arg"),
    ("start-self", "\t\ts->s_self = u;\n\t\tsan_switch(s, u);\n",
     "\t\tsan_switch(s, u);\n", "a new thread is not the running one"),
    ("start-running", "\t\tu->u_state = US_RUNNING;\n", "",
     "a started thread stays new"),
    ("start-fpctl-home", "s->s_share_fpctl ? NULL : s->s_home);",
     "s->s_home);", "with a shared FP state, a new thread takes the caller's"),
    ("start-fpctl-none", "s->s_share_fpctl ? NULL : s->s_home);",
     "NULL);", "a new thread takes the FP state in force"),
    # usched_pick
    ("pick-home-san", "\t\tsan_switch(s, NULL);\n", "",
     "home resumes on the last thread's fiber"),
    ("pick-foreign", "u->u_sched != s || u->u_state != US_BLOCKED",
     "u->u_state != US_BLOCKED",
     "another dispatcher's blocked thread resumes"),
    ("pick-self", "\ts->s_self = u;\n\ts->s_nr_blocked--;\n",
     "\ts->s_nr_blocked--;\n", "a resumed thread is not the running one"),
    ("pick-count", "\ts->s_self = u;\n\ts->s_nr_blocked--;\n",
     "\ts->s_self = u;\n",
     "resumed threads still count as blocked"),
    ("pick-san", "\tsan_switch(s, u);\n\tu->u_state = US_RUNNING;\n",
     "\tu->u_state = US_RUNNING;\n",
     "a resumed thread runs on the last one's fiber"),
    ("pick-running", "\tu->u_state = US_RUNNING;\n\treturn", "\treturn",
     "a resumed thread stays blocked"),
    # usched_finish
    ("finish-done-state", "\tu->u_state = US_DONE;\n", "",
     "a finished thread passes for a running one"),
    ("finish-san", "\tsan_finish(s, u);\n\ts->s_self = NULL;",
     "\t(void)san_finish;\n\ts->s_self = NULL;",
     "a finished thread's fiber is never destroyed"),
    ("finish-self", "\ts->s_self = NULL;\t/* call-backs run outside every "
     "thread */\n", "", "s_free and s_done run as the finished thread"),
    ("finish-blocked", "\ts->s_blocked = NULL;\n\tusched_put_away(s, u);",
     "\tusched_put_away(s, u);",
     "s_next after an end sees the last thread that blocked"),
    ("finish-free", "\t\ts->s_free(s, u->u_stack, u->u_len);\n"
     "\t\tu->u_stack = NULL;\n", "\t\tu->u_stack = NULL;\n",
     "a finished thread's buffer leaks"),
    ("finish-stack", "\t\tu->u_stack = NULL;\n", "",
     "s_done finds the buffer given back still in u_stack"),
    ("finish-len", "\t\tu->u_len = 0;\n", "",
     "s_done finds the size of the buffer given back"),
    ("finish-done-first", FINISH_FREE + FINISH_DONE,
     FINISH_DONE + FINISH_FREE, "s_done runs before the buffer is back"),
    ("finish-done", FINISH_DONE, "", "s_done is never called"),
    ("finish-fpctl", "to.to_len, UARCH_FPCTL_NONE);", "to.to_len, 0);",
     "after an end, a thread whose FP state is 0 keeps the one in force"),
    # ustack_grow
    ("grow-limit-ge", "\tif (used > max)\n", "\tif (used >= max)\n",
     "a stack of s_stack_max bytes is refused"),
    ("grow-limit", "\tif (used > max)\n\t\treturn -E2BIG;\n", "",
     "a stack over s_stack_max is saved"),
    ("grow-half-int", "want = (long)u->u_len + u->u_len / 2;",
     "want = u->u_len + u->u_len / 2;",
     "growing a buffer over 1.43e9 bytes overflows an int"),
    ("grow-half", "want = (long)u->u_len + u->u_len / 2;",
     "want = u->u_len;", "a growing stack gets no room to grow"),
    ("grow-first", "if (u->u_len > 0)", "if (u->u_len >= 0)",
     "a first buffer gets no room to grow"),
    ("grow-deepest", "s->s_max_used < 2 * used ?",
     "s->s_max_used > 2 * used ?",
     "a first buffer is not as big as the deepest stack"),
    ("grow-twice", ": 2 * used;", ": used;",
     "a first buffer is only as big as the stack"),
    ("grow-need", "\tif (want < used)\n\t\twant = used;\n", "",
     "a buffer is smaller than the stack"),
    ("grow-max", "\tif (want > max)\n\t\twant = max;\n", "",
     "a buffer is bigger than s_stack_max"),
    ("grow-round", "(ustack_room(want) + 15) & ~15L;",
     "ustack_room(want) & ~15L;", "sizes are rounded down"),
    ("grow-int-max", "\tif (size > INT_MAX)\t/* s_stack_max near INT_MAX */\n"
     "\t\treturn -E2BIG;\n", "", "s_alloc is asked for a negative size"),
    ("grow-enomem", "\t\treturn -ENOMEM;\n", "\t\treturn -E2BIG;\n",
     "a failed s_alloc reads as -E2BIG"),
    ("grow-free", "\tif (u->u_stack != NULL)\n"
     "\t\ts->s_free(s, u->u_stack, u->u_len);\n\tu->u_stack = buf;\n",
     "\tu->u_stack = buf;\n", "the old buffer leaks"),
    ("grow-free-size", "s->s_free(s, u->u_stack, u->u_len);\n"
     "\tu->u_stack = buf;\n", "s->s_free(s, u->u_stack, size);\n"
     "\tu->u_stack = buf;\n", "the old buffer goes back with the new size"),
    ("grow-len", "\tu->u_len = size;\n", "\tu->u_len = want;\n",
     "u_len is less than s_alloc gave"),
    # usched_suspend
    ("suspend-self", "\ts->s_self = NULL;\t/* s_alloc", "\t/* s_alloc",
     "s_alloc and s_free run as the blocking thread"),
    ("suspend-fits-ge", "(unsigned long)ustack_room(used) >\n",
     "(unsigned long)ustack_room(used) >=\n",
     "a stack that just fits its buffer grows it"),
    ("suspend-fits-signed", "(unsigned long)ustack_room(used) >\n"
     "\t\t     (unsigned long)u->u_len", "(long)ustack_room(used) >\n"
     "\t\t     (long)u->u_len", "a block above the bottom is not refused"),
    ("suspend-above", "if (used < 0)\t/*", "if (used <= 0)\t/*",
     "0 bytes are refused as above the bottom"),
    ("suspend-error-self", "\t\t\ts->s_self = u;\n", "",
     "a thread whose block failed is not the running one"),
    ("suspend-error", "return usched_to(NULL, err);",
     "return usched_to(NULL, -ENOMEM);", "every failed block says -ENOMEM"),
    ("suspend-used", "\tu->u_used = used;\n", "",
     "a thread's saved size is the last block's"),
    ("suspend-max-ge", "\tif (unlikely(used > s->s_max_used))",
     "\tif (unlikely(used >= s->s_max_used))",
     "s_max_used is stored again when equal"),
    ("suspend-max", "\tif (unlikely(used > s->s_max_used))\t/* so_stats "
     "reads it too */\n\t\t__atomic_store_n(&s->s_max_used, (int)used, "
     "__ATOMIC_RELAXED);\n", "", "s_max_used stays 0"),
    ("suspend-state", "\tu->u_state = US_BLOCKED;\n", "",
     "a blocked thread passes for a running one"),
    ("suspend-count", "\ts->s_nr_blocked++;\n", "",
     "blocked threads are not counted"),
    ("suspend-blocked", "\ts->s_blocked = u;\n", "",
     "s_next does not learn which thread blocked"),
    ("suspend-empty", "\tif (used > 0) {\n", "\tif (used >= 0) {\n",
     "an empty stack is copied to a NULL buffer"),
    ("suspend-san", "\t\tsan_save(to, sp, used);\n", "\t\t(void)san_save;\n",
     "a blocked thread's redzones are neither saved nor cleared"),
    # usched_enter
    ("enter-rerun-one", "s->s_nr_blocked > 0 && sp != s->s_bottom",
     "s->s_nr_blocked > 1 && sp != s->s_bottom",
     "one blocked thread may resume at other addresses"),
    ("enter-rerun-here", "s->s_nr_blocked > 0 && sp != s->s_bottom",
     "s->s_nr_blocked > 0",
     "a run with threads blocked is refused, even from the same place"),
    ("enter-self", "\ts->s_bottom = sp;\n\ts->s_self = NULL;\n",
     "\ts->s_bottom = sp;\n", "s_self is not reset as a run starts"),
    ("enter-blocked", "\ts->s_blocked = NULL;\n\treturn usched_pick(s);",
     "\treturn usched_pick(s);",
     "a run's first s_next sees the last run's blocked thread"),
    # usched_run
    ("run-null", '\tif (s == NULL)\n\t\tusched_panic("usched_run(): s is '
     'NULL");\n', "", "usched_run(NULL) crashes with no message"),
    ("run-nested", "\tif (usched_here != NULL)\n", "\tif (0)\n",
     "usched_run from a thread is not refused"),
    ("run-no-free", "s->s_alloc == NULL || s->s_free == NULL",
     "s->s_alloc == NULL", "a missing s_free is not refused"),
    ("run-negative", "if (s->s_stack_max < 0)\n\t\tusched_panic(\"usched_run",
     "if (s->s_stack_max < -1)\n\t\tusched_panic(\"usched_run",
     "s_stack_max -1 is not refused"),
    ("run-sanmix", "\tif (san != NULL)\n", "\tif (0)\n",
     "a sanitized program with a plain libusched is not stopped"),
    ("run-fake-stack", "\tif (san_fake_stack())\n",
     "\tif (0 && san_fake_stack())\n",
     "detect_stack_use_after_return is not refused"),
    ("run-twice", "__ATOMIC_ACQUIRE))\n", "__ATOMIC_ACQUIRE) && 0)\n",
     "a dispatcher may run on two native threads at once"),
    ("run-san", "\tsan_enter(s);\n", "\t(void)san_enter;\n",
     "usched_run's caller has no fiber to return to"),
    ("run-fpctl", "uarch_switch(s->s_home, &usched_enter, NULL, 0, s);",
     "uarch_switch(s->s_home, &usched_enter, NULL, s->s_share_fpctl, s);",
     "with a shared FP state, the caller's is not saved"),
    ("run-here", "\tusched_here = NULL;\n", "",
     "after a run, the native thread is still inside it"),
    ("run-running", "\t__atomic_store_n(&s->s_running, 0, __ATOMIC_RELEASE);"
     "\n", "", "a dispatcher runs once"),
    # ustack_init
    ("init-empty", "(stack != NULL && len < 0)", "(stack != NULL && len <= 0)",
     "a buffer of 0 bytes is refused"),
    ("init-no-buffer", "(stack != NULL && len < 0)", "(len < 0)",
     "a negative size with no buffer is refused"),
    ("init-len", "u->u_len = stack != NULL ? len : 0;", "u->u_len = len;",
     "a size with no buffer is taken as a buffer's"),
    ("init-messages", 'u == NULL ? "u is NULL" :\n\t\t\t     s == NULL ? '
     '"s is NULL"', 'u == NULL ? "s is NULL" :\n\t\t\t     s == NULL ? '
     '"u is NULL"', "a missing thread is called a missing dispatcher"),
    ("init-no-f", "s == NULL || f == NULL ||", "s == NULL ||",
     "a NULL function is not refused"),
    ("init-state", "\tu->u_state = US_NEW;\n", "",
     "a thread set up again keeps its old state"),
    ("init-running", "u == usched_here->s_self)", "0)",
     "the running thread may be set up again"),
    # ustack_discard
    ("discard-null", "if (u == NULL || u->u_state < US_NEW ||",
     "if (u->u_state < US_NEW ||", "discarding NULL crashes with no message"),
    ("discard-zeroed", "if (u == NULL || u->u_state < US_NEW ||",
     "if (u == NULL ||", "a zeroed thread is discarded"),
    ("discard-garbage", "US_NEW || u->u_state > US_DONE)\n\t\tusched_panic("
     "\"ustack_discard", "US_NEW)\n\t\tusched_panic(\"ustack_discard",
     "a thread in a state past the last is discarded"),
    ("discard-done", "\tif (u->u_state == US_DONE)\n\t\treturn;\n", "",
     "a finished thread is put away again"),
    ("discard-running", "\tif (u->u_state == US_RUNNING)\n\t\tusched_panic("
     "\"ustack_discard", "\tif (0)\n\t\tusched_panic(\"ustack_discard",
     "the running thread is discarded"),
    ("discard-elsewhere", "\t    usched_here != s)\n", "\t    0)\n",
     "a thread is discarded while another native thread runs it"),
    ("discard-blocked", "\tif (u->u_state == US_BLOCKED) {\n",
     "\tif (0) {\n", "a blocked thread is discarded as a new one would be"),
    ("discard-san", "\t\tsan_discard(s, u);\n", "\t\t(void)san_discard;\n",
     "a discarded thread's fiber is never destroyed"),
    ("discard-count", "\t\ts->s_nr_blocked--;\n", "",
     "a discarded thread still counts as blocked"),
    ("discard-next", "\t\tif (s->s_blocked == u)\t/* from s_next */\n"
     "\t\t\ts->s_blocked = NULL;\n", "",
     "usched_blocked() still names a thread s_next discarded"),
    ("discard-outside", "\t/* a thread of s, discarding */\n\ts->s_self = "
     "NULL;\n", "\t/* a thread of s, discarding */\n",
     "s_free and s_done run as the discarding thread"),
    ("discard-self", "\ts->s_self = self;\n", "",
     "the discarding thread is no longer the running one"),
    # ustack_self, ustack_block, ustack_abort
    ("self-outside", "return s != NULL ? s->s_self : NULL;",
     "return s->s_self;", "ustack_self() outside a dispatcher crashes"),
    ("block-outside", '\tif (u == NULL)\n\t\tusched_panic("ustack_block() '
     'called outside', '\tif (0)\n\t\tusched_panic("ustack_block() called '
     'outside', "ustack_block() outside a thread is not refused"),
    ("block-fpctl", "\t\t\t    s->s_share_fpctl, u);", "\t\t\t    0, u);",
     "a shared FP state is saved and restored at each block"),
    ("abort-outside", '\tif (u == NULL)\n\t\tusched_panic("ustack_abort() '
     'called outside', '\tif (0)\n\t\tusched_panic("ustack_abort() called '
     'outside', "ustack_abort() outside a thread is not refused"),
    # uarch_resume (x86-64)
    ("resume-align-skip", '\t"jb 3f\\n"', '\t"jmp 3f\\n"',
     "a big stack is resumed from its buffer's start"),
    ("resume-align-mask", '\t"andl $63, %eax\\n"', '\t"andl $31, %eax\\n"',
     "a big stack is resumed from its offset modulo 32"),
    # MXCSR's exception flags, in the x86-64 assembly as above
    ("fpctl-save-flags", '\t"andl $~" STR(MXCSR_FLAGS) ", %eax\\n"\n', "",
     "a block saves the flags, which a reload brings back"),
    ("fpctl-load-flags", '\t"andl $" STR(MXCSR_FLAGS) ", %eax\\n"',
     '\t"andl $0, %eax\\n"', "a load of the control state clears the flags"),
]

LL_C = [
    # ll_wake_into
    ("ll-wake-done", "\tcase ST_DONE:\n\t\treturn -ESRCH;\n", "",
     "a wake of a finished thread returns 0"),
    ("ll-wake-ready", "\t\tthread_set_state(t, ST_READY);\n\t\tadd(q, t);",
     "\t\tadd(q, t);",
     "a woken thread still waits: a second wake queues it twice"),
    ("ll-wake-n", "if (--n == 0)", "if (n == 0)",
     "a wake that readies a waiting thread banks one more"),
    ("ll-wake-into-n", "\tt->t_permits += n;\n", "\tt->t_permits += 1;\n",
     "wakes piled up from elsewhere count as one"),
    # ll_drain
    ("ll-drain-stat", "n - spawned);", "n);",
     "a spawn from elsewhere counts as a remote wake"),
    ("ll-drain-order", "&t->l_t, n, sched_push_front);",
     "&t->l_t, n, sched_enqueue);",
     "threads woken from elsewhere run the last woken first"),
    ("ll-drain-release",
     "\t\tthread_release(&t->l_t);\t/* the inbox's hold */\n", "",
     "a thread taken from the inbox stays held: its struct is never reused"),
    # ll_inbox_used
    ("ll-inbox-used", "return __atomic_load_n(&l->lp_inbox, __ATOMIC_RELAXED) "
     "!= NULL;", "return l == NULL;",
     "the inbox looks empty: wakes from elsewhere are never taken"),
    # ll_take_permit
    ("ll-permit-le", "if (t->t_permits <= 0)", "if (t->t_permits < 0)",
     "a wait with no wake banked returns at once"),
    ("ll-permit-take", "\tt->t_permits--;\n\treturn 1;", "\treturn 1;",
     "a banked wake is never used up"),
    # ll_next
    ("ll-next-permit", "if (__builtin_expect(ll_take_permit(t), 0))",
     "if (0)", "a wake during the block is lost"),
    ("ll-next-inbox", "\tif (!ll_inbox_used(l))\n\t\tt = sched_dequeue",
     "\tt = sched_dequeue",
     "a processor with threads ready never reads its inbox"),
    ("ll-next-switches", "\tstat_add(&p->p_stats.ss_switches, 1);\n", "",
     "switches are not counted"),
    # ll_post
    ("ll-post-release", "\t\tthread_release(&t->l_t);\t/* already in the "
     "inbox */\n", "\t\t;\n",
     "a wake of a thread in the inbox keeps its hold: the struct is never "
     "reused"),
    # ll_fini
    ("ll-fini-late", "return procs_fini(&ll_procs, ll_count_late);",
     "return procs_fini(&ll_procs, NULL);",
     "wakes still in an inbox at fini are not counted"),
    # ll_thread_init
    ("ll-init-group", "if (group < 0)", "if (group < -1)",
     "group -1 is not refused"),
    ("ll-init-uninit", "\tif (l == NULL)\n\t\treturn NULL;\n", "",
     "a spawn before init crashes"),
    ("ll-init-local", "if (proc_here(PROCS_LL) == &l->lp_p)", "if (0)",
     "a spawn on its own processor goes through the inbox"),
    ("ll-init-remote", "\t\tt->l_remote = 1;\n", "",
     "a thread spawned from elsewhere is not counted as the inbox's"),
    ("ll-init-hold", "\t\tthread_hold(&t->l_t);\t/* the inbox's */\n", "",
     "the inbox lets go of a hold it never took"),
    ("ll-init-spawned", "thread_set_state(&t->l_t, ST_SPAWNED);",
     "thread_set_state(&t->l_t, ST_WAITING);",
     "a thread spawned from elsewhere passes for a waiting one"),
    # ll_wait_drained, ll_wait
    ("ll-wait-drained", "return ll_take_permit(t) ? 0 : ustack_block();",
     "return ustack_block();",
     "a wake from elsewhere that came first blocks the wait all the same"),
    ("ll-wait-outside",
     "\tif (t == NULL)\n\t\treturn -EPERM;\n\tif (ll_take_permit(t))",
     "\tif (ll_take_permit(t))", "ll_wait outside a thread crashes"),
    ("ll-wait-permit", "\tif (ll_take_permit(t))\n\t\treturn 0;\n\t/* A wake",
     "\t/* A wake", "a wait with a wake banked blocks all the same"),
    ("ll-wait-inbox", "\t\treturn ll_wait_drained(l, t);\n", "\t\t;\n",
     "a wait blocks before it reads the inbox"),
    # ll_wake
    # ll_yield
    ("ll-yield-outside", "\t\treturn -EPERM;\n\tl = ll_proc_of((struct "
     "ll_thread *)t);\n\tif (ll_inbox_used(l))\n\t\tll_drain(l);",
     "\tl = ll_proc_of((struct ll_thread *)t);\n\tif (ll_inbox_used(l))"
     "\n\t\tll_drain(l);", "ll_yield outside a thread crashes"),
    ("ll-yield-drain", "\t\tll_drain(l);\n\tif (l->lp_p.p_ready.q_head == "
     "NULL)", "\t\t;\n\tif (l->lp_p.p_ready.q_head == NULL)",
     "threads woken from elsewhere do not run before a yielder"),
    ("ll-yield-fast", "\tif (l->lp_p.p_ready.q_head == NULL)\n\t\treturn 0;"
     "\n", "", "a yield with nothing else ready switches all the same"),
    ("ll-yield-permit", "\tt->t_permits++;\n\trc = ustack_block();",
     "\trc = ustack_block();", "a yield waits for a wake"),
    ("ll-yield-block", "\tt->t_permits++;\n\trc = ustack_block();",
     "\trc = 0;", "a yield lets nothing run"),
    ("ll-yield-undo", "\t\tt->t_permits--;\n", "\t\t;\n",
     "a failed yield leaves its wake, and a wait returns too soon"),
    ("ll-wake-other", "\tif (!procs_have(&ll_procs, &l->lp_p))\n"
     "\t\treturn -EINVAL;\n", "",
     "a wake of an rr thread takes it for one of ll's"),
    ("ll-wake-null", "if (__builtin_expect(t == NULL, 0))", "if (0)",
     "ll_wake(NULL) crashes"),
    ("ll-wake-outside", "\t\treturn ll_wake_outside(t);",
     "\t\treturn ll_wake_remote(t);",
     "a wake from a native thread may read a struct fini freed"),
    ("ll-wake-here", "if (here != &l->lp_p)", "if (here != NULL)",
     "a wake from the thread's own processor takes the remote path"),
    ("ll-wake-stat", "\tif (rc == 0)\n\t\tstat_add(&l->lp_p.p_stats."
     "ss_local_wakes, 1);", "", "local wakes are not counted"),
]

RR_C = [
    # rr_ready, rr_next
    ("rr-ready-front", "\tsched_enqueue(&r->r_p.p_ready, t);\n",
     "\tsched_push_front(&r->r_p.p_ready, t);\n",
     "ready threads run the last queued first"),
    ("rr-next-woken", "if (t->t_permits > 0) {", "if (0) {",
     "a wake during the block is lost"),
    ("rr-next-permit", "if (t->t_permits > 0) {", "if (t->t_permits >= 0) {",
     "a thread that blocks with no wake banked runs again"),
    ("rr-next-take", "\t\t\trr_permits_add(t, -1);\n\t\t\trr_ready(r, t);",
     "\t\t\trr_ready(r, t);", "a wake during the block is not used up"),
    ("rr-next-switches", "\tstat_add(&p->p_stats.ss_switches, 1);\n", "",
     "switches are not counted"),
    # rr_init, rr_thread_init
    ("rr-init-rc", "\tif (rc != 0)\n\t\treturn rc;\n", "",
     "a failed init returns 0"),
    ("rr-init-spread", "\t__atomic_store_n(&rr_spread, 0, __ATOMIC_RELAXED);"
     "\n", "", "an init's first thread goes where the last run's next would"),
    ("rr-spawn-turn", "\t\t__atomic_compare_exchange_n(&rr_spread, &next, n, "
     "0,\n\t\t\t\t\t    __ATOMIC_RELAXED, __ATOMIC_RELAXED);\n", "",
     "a failed spawn takes a processor's turn"),
    # rr_wait
    ("rr-wait-outside", "\tif (t == NULL)\n\t\treturn -EPERM;\n\t/* Only",
     "\t/* Only", "rr_wait outside a thread crashes"),
    ("rr-wait-permit", "__ATOMIC_RELAXED) > 0) {", "__ATOMIC_RELAXED) >= 0) {",
     "a wait with no wake banked returns at once"),
    ("rr-wait-take", "\t\trr_permits_add_locked(rr_proc_of(t), t, -1);\n",
     "", "a banked wake is never used up"),
    # rr_yield
    ("rr-yield-outside", "\t\treturn -EPERM;\n\tr = rr_proc_of(t);",
     "\tr = rr_proc_of(t);", "rr_yield outside a thread crashes"),
    ("rr-yield-fast", "others = r->r_p.p_ready.q_head != NULL;",
     "others = 1;", "a yield with nothing else ready switches all the same"),
    ("rr-yield-permit", "\tif (others)\n\t\trr_permits_add(t, 1);\n", "",
     "a yield waits for a wake"),
    ("rr-yield-block", "\trc = ustack_block();\n\tif (rc != 0)\t/* not "
     "blocked: rr_next", "\trc = 0;\n\tif (rc != 0)\t/* not blocked: "
     "rr_next", "a yield lets nothing run"),
    ("rr-yield-undo", "\t\trr_permits_add_locked(r, t, -1);\n", "\t\t;\n",
     "a failed yield leaves its wake, and a wait returns too soon"),
    # rr_wake_from, rr_wake
    ("rr-wake-local", "int local = here == &r->r_p, rc = 0;",
     "int local = here != NULL, rc = 0;",
     "a wake from another processor counts as local"),
    ("rr-wake-hold-local", "\tif (!local) {\t/* on its own", "\t{\t/* on its",
     "a wake from the thread's processor holds its struct for ever"),
    ("rr-wake-other", "\t\tif (!procs_have(&rr_procs, &r->r_p))\n"
     "\t\t\treturn -EINVAL;\n", "",
     "a wake of an ll thread takes it for one of rr's"),
    ("rr-wake-done", "\t\trc = -ESRCH;\n", "",
     "a wake of a finished thread returns 0"),
    ("rr-wake-stat-rc", "\tif (rc == 0)\n\t\tstat_add(local",
     "\tstat_add(local", "a wake of a finished thread is counted"),
    ("rr-wake-stat-where", "stat_add(local ? &r->r_p.p_stats.ss_local_wakes :"
     "\n\t\t\t\t &r->r_p.p_stats.ss_remote_wakes, 1);",
     "stat_add(&r->r_p.p_stats.ss_local_wakes, 1);",
     "remote wakes count as local ones"),
    ("rr-wake-release", "\tif (!local)\n\t\tthread_release(t);\n", "",
     "a wake from elsewhere holds the struct for ever"),
    ("rr-wake-null",
     "\tif (t == NULL)\n\t\treturn -EINVAL;\n\tif (here != NULL)",
     "\tif (here != NULL)", "rr_wake(NULL) crashes"),
    ("rr-wake-outside", "\tif (!procs_wake_enter(&rr_procs))\t/* fini frees t "
     "*/\n\t\treturn -ESRCH;\n\trc = rr_wake_from(t, here);\n"
     "\tprocs_wake_leave(&rr_procs);\n\treturn rc;",
     "\t(void)rc;\n\treturn rr_wake_from(t, here);",
     "a wake from a native thread may read a struct fini freed"),
]

PROC_H = [
    # count_enter, procs_own_*, stat_add, thread_hold_alive
    ("proc-enter-shut", "\t\tif ((n & mask) == shut)\n\t\t\treturn 0;\n", "",
     "spawns and wakes once fini found every thread finished go on"),
    ("proc-own-enter", "if (p->p_live++ > 0)", "if (p->p_live++ >= 0)",
     "a processor's own spawns are not counted: fini may stop with "
     "threads left"),
    ("proc-give-back-reset", "\t\tp->p_ended = 0;\n", "",
     "counts kept for ended threads are given back at every idle"),
    ("proc-stat-add", "__atomic_load_n(c, __ATOMIC_RELAXED) + n,",
     "__atomic_load_n(c, __ATOMIC_RELAXED) + 1,",
     "a counter grows by one however many it is told"),
    ("proc-have", "return p->p_procs == ps;", "return 1;",
     "a wake of the other scheduler's thread takes it for its own"),
    ("proc-alive-release", "\t\treturn 1;\n\tthread_release(t);\n\treturn 0;",
     "\t\treturn 1;\n\treturn 0;",
     "a wake of a finished thread keeps its hold: the struct is never reused"),
    # the ready queue, and the prefetch of its head
    ("queue-enqueue-next", "\tt->t_next = NULL;\n\tif (q->q_tail != NULL)",
     "\tif (q->q_tail != NULL)",
     "a thread queued last keeps the link it had"),
    ("queue-enqueue-tail", "\t\tq->q_head = t;\n\tq->q_tail = t;\n}",
     "\t\tq->q_head = t;\n}", "the queue's end stays the first thread"),
    ("queue-front-next", "\tt->t_next = q->q_head;\n", "",
     "a thread pushed in front is not linked to the others"),
    ("queue-front-tail", "\tif (q->q_head == NULL)\n\t\tq->q_tail = t;\n"
     "\tq->q_head = t;", "\tq->q_head = t;",
     "a thread pushed in front of an empty queue is not its end"),
    ("queue-append-empty", "\tif (from->q_head == NULL)\n\t\treturn;\n", "",
     "an empty batch appended loses the queue's end"),
    ("queue-append-tail", "\tq->q_tail = from->q_tail;\n", "",
     "the queue's end stays before a batch appended"),
    ("queue-dequeue-tail", "\t\tif (q->q_head == NULL)\n"
     "\t\t\tq->q_tail = NULL;\n", "",
     "an emptied queue keeps its old end"),
    ("proc-prefetch-empty", "if (n == NULL || (buf = n->t_u.u_stack) == NULL)",
     "if ((buf = n->t_u.u_stack) == NULL)",
     "the prefetch reads the head of an empty queue: a crash"),
]

PROC_C = [
    # pinning_on
    ("proc-pin-set", "if (pinning >= 0 || env == NULL",
     "if (pinning > 0 || env == NULL",
     "sched_set_pinning(0) does not override USCHED_PIN"),
    ("proc-pin-empty", "env == NULL || *env == 0)", "env == NULL)",
     "an empty USCHED_PIN is refused"),
    ("proc-pin-default", "\t\treturn pinning != 0;\n",
     "\t\treturn pinning > 0;\n",
     "with USCHED_PIN unset, processors are not pinned"),
    ("proc-pin-one", "strcmp(env, \"1\") == 0 ? 1 :",
     "strcmp(env, \"1\") == 0 ? 0 :", "USCHED_PIN=1 does not pin"),
    ("proc-pin-bad", ": strcmp(env, \"0\") == 0 ? 0 : -1;",
     ": strcmp(env, \"0\") == 0 ? 0 : 1;",
     "a USCHED_PIN other than 0 or 1 pins"),
    # procs_pick
    ("proc-pick-uninit", "\tif (ps->ps_base == NULL) {\n\t\terrno = EINVAL;",
     "\tif (0) {\n\t\terrno = EINVAL;", "a spawn before init divides by 0"),
    ("proc-pick-first", "return proc_nth(ps, n % ps->ps_nr);",
     "return proc_nth(ps, (n + 1) % ps->ps_nr);",
     "the first thread or group goes to processor 1"),
    # procs_init, proc_attr_pin, proc_attr
    ("proc-init-zero", "if (nr <= 0 || nr > 4096", "if (nr < 0 || nr > 4096",
     "init of 0 processors is not refused"),
    ("proc-init-max", "nr > 4096 ||", "nr >= 4096 ||",
     "init of 4096 processors is refused"),
    ("proc-init-expected", " || expected < 0)", ")",
     "init expecting -1 threads is not refused"),
    ("proc-init-busy", "\tif (ps->ps_base != NULL && !ps->ps_finished)\t/* "
     "fini first */\n\t\treturn -EBUSY;\n", "",
     "init again before fini is not refused"),
    ("proc-init-pin", "\tif (pinning_on() < 0)\t/* said before",
     "\tif (0)\t/* said before", "init with a bad USCHED_PIN is not refused"),
    ("proc-pin-idx", "proc_attr_pin(&attr, &allowed, ps->ps_run)",
     "proc_attr_pin(&attr, &allowed, 0)",
     "every processor is pinned to the first CPU"),
    ("proc-pin-wrap", "\ti %= CPU_COUNT(allowed);\n", "",
     "processors past the CPUs are not pinned"),
    ("proc-pin-allowed", "if (CPU_ISSET(cpu, allowed) && n++ == i)",
     "if (n++ == i)", "a processor is pinned to the i-th CPU, allowed or not"),
    ("proc-start-pin-off", "\tpin = ps->ps_pin &&\n", "\tpin = 1 &&\n",
     "processors are pinned with pinning off"),
    ("proc-start-pin-err", "\t\tif (pin)\n\t\t\trc = proc_attr_pin"
     "(&attr, &allowed, ps->ps_run);\n\t\tif (rc != 0)\n\t\t\tbreak;\n",
     "\t\tif (pin)\n\t\t\tproc_attr_pin(&attr, &allowed, ps->ps_run);\n",
     "a processor whose pinning cannot be set (ENOMEM) starts unpinned"),
    ("proc-attr-min", "size < PROC_STACK_MIN", "size > PROC_STACK_MIN",
     "a processor's native stack may be too small for its threads"),
    # procs_start_held, procs_start
    ("proc-start-again", "\tif (ps->ps_run == ps->ps_nr)\n"
     "\t\treturn -EALREADY;\n", "", "start again returns 0"),
    ("proc-start-pin-bad", "\t\tif (pin < 0)\n\t\t\treturn -EINVAL;\n", "",
     "start with a bad USCHED_PIN is not refused"),
    ("proc-start-pin", "\t\tps->ps_pin = pin;\n", "",
     "processors are never pinned"),
    ("proc-start-fpctl", "\t\tp->p_sched.s_share_fpctl = share_fpctl;\n", "",
     "sched_set_share_fpctl is ignored"),
    ("proc-start-break", "proc_main, p);\n\t\tif (rc != 0)\n\t\t\tbreak;\n",
     "proc_main, p);\n",
     "a processor that could not be made counts as started"),
    ("proc-start-closing", "int rc = -EINVAL;\t/* once fini",
     "int rc = 0;\t/* once fini", "start once fini was called returns 0"),
    ("proc-start-uninit", "\tif (ps->ps_base == NULL)\n\t\treturn -EINVAL;\n"
     "\tif (procs_inside(ps))\t/* a thread must not */",
     "\tif (procs_inside(ps))\t/* a thread must not */",
     "start before init crashes"),
    ("proc-start-inside", "\tif (procs_inside(ps))\t/* a thread must not */\n"
     "\t\treturn -EPERM;\n", "", "start from a thread is not refused"),
    # procs_fini, procs_done, procs_stats
    ("proc-fini-uninit",
     "\tif (ps->ps_base == NULL)\n\t\treturn -EINVAL;\n\tif "
     "(procs_inside(ps))\t/* would wait",
     "\tif (procs_inside(ps))\t/* would wait", "fini before init returns 0"),
    ("proc-fini-inside", "\tif (procs_inside(ps))\t/* would wait for itself "
     "*/\n\t\treturn -EDEADLK;\n", "", "fini from a thread is not refused"),
    ("proc-fini-twice",
     "if (__atomic_exchange_n(&ps->ps_closing, 1, __ATOMIC_ACQUIRE))",
     "if (__atomic_exchange_n(&ps->ps_closing, 1, __ATOMIC_ACQUIRE) && 0)",
     "fini after fini starts the processors again"),
    ("proc-fini-start", "rc = ps->ps_run < ps->ps_nr ? procs_start_held(ps) : "
     "0;", "rc = 0;", "fini does not start the processors not started"),
    ("proc-fini-reopen", "\tif (rc != 0)\t/* before a start that waits may "
     "see it */\n\t\t__atomic_store_n(&ps->ps_closing, 0, "
     "__ATOMIC_RELEASE);\n", "",
     "after a fini that failed to start the processors, all is refused"),
    ("proc-fini-finished", "\tps->ps_finished = 1;", "",
     "init after fini is refused as busy"),
    ("proc-done-outside", "\tif (sched_self(ps->ps_slot) == NULL) {",
     "\tif (0) {", "done() outside a thread of its scheduler is not refused"),
    ("proc-stats-negative", "i < 0 || ", "",
     "the counters of processor -1 are read"),
    ("proc-stats-range", "i >= ps->ps_nr", "i > ps->ps_nr",
     "the counters of a processor past the last are read"),
    ("proc-stats-remote",
     ".ss_remote_wakes = stat_read(&p->p_stats.ss_remote_wakes)",
     ".ss_remote_wakes = stat_read(&p->p_stats.ss_local_wakes)",
     "remote wakes read as the local ones"),
    ("proc-stats-max", ".ss_max_stack = __atomic_load_n(",
     ".ss_max_stack = 0 * __atomic_load_n(",
     "the largest saved stack reads 0"),
]

POOL_C = [
    # chunk_new
    ("pool-chunk-nomem", "\tif (c == NULL)\n\t\treturn NULL;\n#ifdef",
     "#ifdef", "a chunk malloc refused is written through"),
    ("pool-chunk-list", "while (!__atomic_compare_exchange_n(&ps->ps_chunks",
     "while (0 && !__atomic_compare_exchange_n(&ps->ps_chunks",
     "chunks are not on the list fini frees"),
    # arena_carve, buf_class
    ("pool-carve-nomem", "\t\tif (c == NULL)\n\t\t\treturn NULL;\n"
     "\t\ta->a_next", "\t\ta->a_next",
     "a chunk that could not be allocated is carved from NULL"),
    ("pool-carve-align", "(char *)(c + 2);", "(char *)(c + 1);",
     "structs and buffers are 8 bytes off 16-byte alignment"),
    ("pool-carve-left", "\ta->a_left -= size;\n", "",
     "an arena carves on past the end of its chunk"),
    ("pool-class-round",
     "return (size + BUF_CLASS_SIZE - 1) / BUF_CLASS_SIZE;",
     "return size / BUF_CLASS_SIZE;",
     "a buffer's class is rounded down: it is too small"),
    # pool_buf_alloc, pool_buf_free
    ("pool-alloc-big", "\tif (c >= BUF_CLASSES)\n\t\treturn malloc(size);",
     "\tif (c > BUF_CLASSES)\n\t\treturn malloc(size);",
     "a buffer one class too big is carved, then given to free()"),
    ("pool-alloc-reuse", "\tif (buf != NULL) {\n\t\tp->p_bufs[c]",
     "\tif (0) {\n\t\tp->p_bufs[c]", "freed buffers are never reused"),
    ("pool-alloc-pop", "\t\tp->p_bufs[c] = *(void **)buf;\n", "",
     "a buffer taken from a free list stays there for the next thread"),
    ("pool-free-big", "\tif (c >= BUF_CLASSES) {\n\t\tfree(buf);",
     "\tif (c > BUF_CLASSES) {\n\t\tfree(buf);",
     "a malloc'd buffer one class too big goes on a free list past the "
     "last"),
    ("pool-free-push", "\tp->p_bufs[c] = buf;\n", "",
     "freed buffers are lost"),
    # thread_carve, thread_mem
    ("pool-carve-zero",
     "\tif (t != NULL)\t/* a reused one keeps its scheduler's fields */\n"
     "\t\tmemset(t, 0, ps->ps_thread_size);\n", "\t(void)memset;\n",
     "a struct carved from reused memory keeps what was there"),
    ("pool-free-unlink", "\t\t\t\t*prev = t->t_next;\n", "",
     "a struct reused stays on the free list"),
    ("pool-spare-claim", "!= NULL && !thread_claim(t)) {", "!= NULL && 0) {",
     "a spawn from elsewhere reuses a struct that a wake from elsewhere "
     "holds"),
    ("pool-own-claim", "\t\t\tif (thread_claim(t)) {", "\t\t\tif (1) {",
     "a spawn on a processor reuses a struct that a wake from elsewhere "
     "holds"),
    ("pool-owed",
     "\t\t__atomic_store_n(&p->p_owed, p->p_owed + 1, __ATOMIC_RELAXED);\n",
     "", "spawns from elsewhere take new structs for ever"),
    # thread_reuse, proc_thread_new, proc_thread_done, pool_free
    ("pool-repaid", "\t\tp->p_repaid++;\n", "",
     "once a struct is owed, every one goes to spawns from elsewhere"),
    ("pool-reuse-free", "\t\tp->p_free = t;\n", "",
     "a finished thread's struct is lost"),
    ("pool-new-f", "\tif (f == NULL ||\n\t    !(own", "\tif (!(own",
     "a spawn of a NULL function is not refused"),
    ("pool-new-leave", "\t\tif (own)\n\t\t\tprocs_own_leave(p);\n\t\telse\n"
     "\t\t\tprocs_leave(p->p_procs, 1);\n", "",
     "a spawn that got no memory stays counted: fini waits for ever"),
    ("pool-new-enomem", "\t\terrno = ENOMEM;\n", "\t\terrno = EINVAL;\n",
     "a spawn that got no memory says EINVAL"),
    ("pool-new-permits", "\tt->t_permits = 0;\n", "",
     "a reused struct keeps the wakes its last thread banked"),
    ("pool-done-state",
     "\tthread_set_state(t, ST_DONE);\n\tthread_reuse", "\tthread_reuse",
     "a finished thread passes for a live one"),
    ("pool-free-chunks", "\t\tfree(c);\n", "", "fini frees no chunk"),
]

LOCK_H = [
    ("lock-take", "\t\tsched_lock_contended(l);\n", "\t\t;\n",
     "a lock found held is taken all the same"),
    ("lock-unlock-wake", "__ATOMIC_RELEASE) == 2)", "__ATOMIC_RELEASE) == 1)",
     "a give does not wake the takers that sleep"),
]
LOCK_C = [
    ("lock-sleep-mark", "while (__atomic_exchange_n(&l->lk_word, 2,",
     "while (__atomic_exchange_n(&l->lk_word, 1,",
     "a taker sleeps without marking the lock: no give wakes it"),
]

SCHED_C = [
    ("sched-find-cmp", "strcmp(scheds[i]->so_name, name) == 0",
     "strcmp(scheds[i]->so_name, name) != 0",
     "a name finds another scheduler"),
    ("sched-names-sep", "\t\tif (i > 0)\n\t\t\tstrcat(names, \"|\");\n", "",
     "the names run together"),
]

# The C mutants, by file.
C_MUTANTS = {
    "usched.c": USCHED_C,
    "ll.c": LL_C,
    "rr.c": RR_C,
    "sched/proc.h": PROC_H,
    "sched/proc.c": PROC_C,
    "sched/pool.c": POOL_C,
    "sched/lock.h": LOCK_H,
    "sched/lock.c": LOCK_C,
    "sched/sched.c": SCHED_C,
}

# Where a C mutant runs when x86-64 gcc -O2 cannot tell it: the code of a
# sanitizer (the Makefile's configurations of that name), a check of a
# test script, aarch64's FP control, or a read of freed memory.
RUN_IN = {
    "tsan-new-fiber": "tsan",
    "tsan-leak-fiber": "tsan",
    "tsan-dead-kept": "tsan",
    "tsan-discard-current": "tsan",
    "tsan-discard-leak": "tsan",
    "asan-extra": "asan",
    "asan-save-shadow": "asan",
    "asan-unpoison": "asan",
    "asan-restore-shadow": "asan",
    "start-san": "tsan",
    "pick-home-san": "tsan",
    "pick-san": "tsan",
    "finish-san": "tsan",
    "discard-san": "tsan",
    # x86-64's saved state is never 0 (MXCSR has bits set): it is loaded
    # all the same. aarch64's default FPCR is 0.
    "finish-fpctl": "aarch64",
    "room-san": "asan",
    # memcpy(NULL, sp, 0) does nothing, but is undefined.
    "suspend-empty": "ubsan",
    "suspend-san": "asan",
    "run-sanmix": "sanmix",
    "run-fake-stack": "asan",
    "run-san": "tsan",
    # A wake after fini reads a freed struct, which still says ST_DONE.
    "ll-wake-outside": "asan",
    "rr-wake-outside": "asan",
}

# C mutants that no program can tell from the code, and why.
EQUIVALENT = {
    "suspend-above":
        "0 bytes never take the branch: compared unsigned, 0 is above "
        "no u_len, negative or not",
    "suspend-max-ge": "stores the value already there",
    "enter-self":
        "s_self is NULL already: a dispatcher starts zeroed, and every "
        "run ends with s_next returning NULL, called with s_self NULL",
    "pool-class-round":
        "no size is rounded: the dispatcher asks s_alloc and s_free only "
        "for multiples of 16 (ustack_grow rounds them)",
}

# Where C mutants are built and run, with what is not the arch's: its
# compiler, the Makefile's flags of that name (CFLAGS_asan...), its tests.
C_CONFIGS = {
    "x86-64": {"arch": "x86-64"},
    "aarch64": {"arch": "aarch64"},
    # t_asan first: some mutants fail it alone
    "asan": {"arch": "x86-64", "flags": "asan", "tests": ["t_asan"] + TESTS},
    "ubsan": {"arch": "x86-64", "flags": "ubsan"},
    # clang, as the Makefile's (CC_tsan)
    "tsan": {"arch": "x86-64", "cc": "clang", "flags": "tsan"},
    # A library built without sanitizers, in a program built with them:
    # the script builds both.
    "sanmix": {"arch": "x86-64", "tests": ["t_sanmix.sh"]},
}


def asm_lines(src, arch):
    """(index, instruction) of the instruction lines of arch's section."""
    start = src.index("__asm__(", src.index(ARCHS[arch]["marker"]))
    lines = src[:start].count("\n")
    out = []
    for i, line in enumerate(src[start:].split("\n")):
        if line == ");":
            break
        m = re.match(r'\s*"([^".][^"]*?)\\n"', line)
        if m and not m.group(1).endswith(":"):
            out.append((lines + i, m.group(1)))
    return out


def flipped(ins, pairs):
    op = ins.split()[0]
    for a, b in pairs:
        for x, y in ((a, b), (b, a)):
            if op == x or op.startswith(x) and op[len(x):] in ("q", "l"):
                return y + op[len(x):] + ins[len(op):]
    return None


def moved(ins, arch):
    """ins with its memory offset moved by 8, or None."""
    rx = ARCHS[arch]["offset"]
    m = rx.search(ins)
    if m is None:
        return None
    if arch == "x86-64":
        off = int(m.group(1) or 0) + 8
        new = "%d(%s)" % (off, m.group(2))
    else:
        if "], #" in ins or "]!" in ins:  # pre/post-index: an sp step
            return None
        off = int(m.group(2) or 0) + 8
        new = "[%s, #%d]" % (m.group(1), off)
    return ins[:m.start()] + new + ins[m.end():]


def mutants(src, arch):
    """(kind, line index, instruction, replacement or None to drop)."""
    a = ARCHS[arch]
    for idx, ins in asm_lines(src, arch):
        if a["mem"].search(ins):
            yield "drop", idx, ins, None
            new = moved(ins, arch)
            if new is not None:
                yield "offset", idx, ins, new
        new = flipped(ins, a["flip"])
        if new is not None:
            yield "branch", idx, ins, new


def describe(kind, ins, new):
    return "%s %s%s" % (kind, ins, "" if new is None else " -> " + new)


def apply(src, idx, ins, new):
    lines = src.split("\n")
    assert ins in lines[idx]
    if new is None:
        lines[idx] = ""
    else:
        lines[idx] = lines[idx].replace('"%s\\n"' % ins, '"%s\\n"' % new)
    return "\n".join(lines)


def setup(name):
    """What builds and runs the tests in configuration name (an arch's
    name, or one of C_CONFIGS): compiler, make arguments, CFLAGS, command
    the tests run under, the tests of usched.c, USCHED_TEST_THREADS."""
    c = C_CONFIGS.get(name, {"arch": name})
    a = ARCHS[c["arch"]]
    cfg = {"name": name, "cc": c.get("cc", a["cc"]), "make": a["make"],
           "cflags": "-O2 -g", "exec": a["exec"],
           "tests": c.get("tests", TESTS), "threads": "200000"}
    if "flags" in c:
        # as tests/matrix.sh reads them; the tests scale themselves down
        # under a sanitizer
        cfg["cflags"] = subprocess.run(
            ["make", "-s", "--no-print-directory", "-C", ROOT,
             "print-cflags-" + c["flags"]], capture_output=True, text=True,
            env=make_env(), check=True).stdout.strip()
        cfg["threads"] = None
    return cfg


def make_env():
    """The environment, without a calling make's variables (make
    check-mutants), which the tests' makes would take."""
    return {k: v for k, v in os.environ.items()
            if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def script(test):
    return test.endswith((".sh", ".py"))


def copy_tree(dst):
    def skip(d, names):
        return [n for n in names if n in (".git", "build", "report",
                                          "target", "bin")]
    shutil.copytree(ROOT, dst, ignore=skip)


def build(tree, cfg, tests):
    """Builds what tests run in tree, in configuration cfg: the directory
    it is in, or None if it does not build."""
    out = os.path.join(tree, "build", cfg["name"])
    targets = [os.path.join(out, "tests", t) for t in tests
               if not script(t)]
    if "t_examples" in tests:
        targets += [os.path.join(out, "examples", e[:-2])
                    for e in os.listdir(os.path.join(tree, "examples"))
                    if e.endswith(".c")]
    if not targets:  # scripts build what they need
        return out
    r = subprocess.run(["make", "-s", "-C", tree, "O=" + out,
                        "CC=" + cfg["cc"], "CFLAGS=" + cfg["cflags"]] +
                       cfg["make"] + targets,
                       capture_output=True, text=True, env=make_env())
    if r.returncode == -signal.SIGINT:  # ^C: no verdict on the mutant
        raise KeyboardInterrupt
    return out if r.returncode == 0 else None


# The process groups of the tests running (in JOBS threads), which a ^C
# does not reach: each runs in a session of its own.
RUNNING = set()
RUNNING_LOCK = threading.Lock()


def kill_running():
    with RUNNING_LOCK:
        for pid in RUNNING:
            kill_group(pid)


def passes(argv, env, cwd):
    """Whether argv exits 0 within TIMEOUT seconds: None if it timed out.
    A test that prints a failed point or bails out has failed, as prove
    reads it: it is stopped there, not left to run into its watchdog.
    What it leaves running (a test's hung child) is killed."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, cwd=cwd,
                         start_new_session=True)
    failed = threading.Event()

    def read():
        for line in p.stdout:
            if line.startswith((b"not ok", b"Bail out!")):
                failed.set()
                kill_group(p.pid)
                return
    reader = threading.Thread(target=read)
    reader.start()
    with RUNNING_LOCK:
        RUNNING.add(p.pid)
    try:
        rc = p.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        rc = None
    finally:  # a ^C too: the test must not outlive the script
        kill_group(p.pid)
        p.wait()
        with RUNNING_LOCK:
            RUNNING.discard(p.pid)
        reader.join()
        p.stdout.close()
    if failed.is_set():
        return False
    return None if rc is None else rc == 0


def first_failure(out, cfg, tests, threads):
    """The first of tests that fails on the build in out, in configuration
    cfg, under USCHED_TEST_THREADS threads (None: unset), or None."""
    tree = os.path.dirname(os.path.dirname(out))
    env = make_env()
    env.pop("USCHED_TEST_THREADS", None)
    if threads is not None:
        env["USCHED_TEST_THREADS"] = threads
    if cfg["exec"]:
        env["USCHED_TEST_EXEC"] = " ".join(cfg["exec"])
    for t in tests:
        if script(t):
            argv = [os.path.join(tree, "tests", t)]
        else:
            argv = cfg["exec"] + [os.path.join(out, "tests", t)]
        r = passes(argv, env, tree)
        if r is None:
            return t + " (timed out)"
        if not r:
            return t
    return None


def available(cfg):
    tools = [cfg["cc"]] + cfg["exec"][:1]
    missing = [t for t in tools if not shutil.which(t)]
    return " or ".join(missing) if missing else None


def c_list():
    """Every C mutant, as (file, id, text, replacement, what it breaks)."""
    for path, ms in C_MUTANTS.items():
        for m in ms:
            yield (path,) + m


def c_errors(srcs):
    """What is wrong with the C mutants' list, for the texts srcs of the
    files (by path): a text that is not in its file exactly once, an id
    given twice, or a name in RUN_IN or EQUIVALENT of no mutant or
    configuration."""
    errs = []
    ids = [m[1] for m in c_list()]
    for path, mid, old, new, what in c_list():
        n = srcs[path].count(old)
        if n != 1:
            errs.append("%s: its text is in %s %d times, not once "
                        "(%s)" % (mid, path, n, what))
        if ids.count(mid) > 1:
            errs.append("%s: two mutants of that id" % mid)
    for mid in list(RUN_IN) + list(EQUIVALENT) + list(FULL_SCALE):
        if mid not in ids:
            errs.append("%s: listed, but no C mutant has that id" % mid)
    for mid, name in RUN_IN.items():
        if name not in C_CONFIGS:
            errs.append("%s: no configuration %s" % (mid, name))
    return errs


def speed_only_errors(src, arch):
    """SPEED_ONLY's entries for arch that name no mutant of its code."""
    found = set((kind, ins) for kind, _, ins, _ in mutants(src, arch))
    return ["%s %s: listed in SPEED_ONLY, but no such mutant"
            % (arch, describe(kind, ins, None))
            for a, kind, ins in SPEED_ONLY
            if a == arch and (kind, ins) not in found]


def c_where(mid):
    return RUN_IN.get(mid, "x86-64")


def c_line(src, old):
    """The number of the line where old starts in src."""
    return src[:src.index(old)].count("\n") + 1


def tests_of(path, mid, cfg):
    """The tests a mutant of path (C mutant mid, or None) runs in
    configuration cfg, and their USCHED_TEST_THREADS."""
    if mid in FULL_SCALE:
        return FULL_SCALE[mid], None
    if path == "usched.c":
        return cfg["tests"], cfg["threads"]
    return SCHED_TESTS, SCHED_THREADS


def asm_jobs(src, arch):
    """The mutants of arch's assembly, as Run takes them."""
    for kind, idx, ins, new in mutants(src, arch):
        yield Mutant(arch, "%s %s" % (arch, describe(kind, ins, new)), arch,
                     "usched.c", apply(src, idx, ins, new),
                     SPEED_ONLY.get((arch, kind, ins)), True, None)


def c_jobs(srcs, names, only):
    """The C mutants that run in configurations names, as Run takes
    them: those of ids only, if it is not empty."""
    for path, mid, old, new, what in c_list():
        name = c_where(mid)
        if name in names and (not only or mid in only):
            yield Mutant("C " + path, "C %s (%s, %s)" % (mid, name, what),
                         name, path, srcs[path].replace(old, new, 1),
                         EQUIVALENT.get(mid), False, mid)


# A mutant: its group in the summary, what it is, the configuration it
# runs in, the file it changes and what it makes of it, why it may pass
# every test (or None), whether it may fail to build (an instruction the
# assembler refuses), and its id if it is a C mutant.
Mutant = collections.namedtuple("Mutant", "group what cfg path src why "
                                "unbuilt_ok mid")


class Run:
    """A run of mutants in JOBS threads, each with a copy of the tree per
    configuration. Rather than run every test of a configuration on the
    code unchanged first (a minute in all), the tests that failed on its
    mutants run on it last, with the same USCHED_TEST_THREADS: a kill
    counts if that test passes there."""

    def __init__(self, srcs, names, tmp):
        self.srcs = srcs
        self.tmp = tmp
        self.cfgs = {n: setup(n) for n in names}
        self.killers = {n: set() for n in names}
        self.trees = {}
        self.changed = {}  # tree: the file a mutant last changed there
        self.bad = 0
        self.survived = collections.Counter()
        self.lock = threading.Lock()
        self.stop = threading.Event()  # ^C: verdicts no longer count

    def say(self, line, bad=False):
        with self.lock:
            print(line, flush=True)
            self.bad += bad

    def write(self, tree, path, src):
        with open(os.path.join(tree, path), "w") as f:
            f.write(src)

    def build(self, k, name, path, src, tests):
        """Builds src as path, the other files as they are, in worker k's
        tree for name, what tests run: where."""
        tree = self.trees.get((k, name))
        if tree is None:
            tree = os.path.join(self.tmp, "w%d-%s" % (k, name))
            copy_tree(tree)
            self.trees[k, name] = tree
        last = self.changed.get(tree, path)
        if last != path:
            self.write(tree, last, self.srcs[last])
        self.write(tree, path, src)
        self.changed[tree] = path
        return build(tree, self.cfgs[name], tests)

    def mutant(self, k, m):
        tests, threads = tests_of(m.path, m.mid, self.cfgs[m.cfg])
        out = self.build(k, m.cfg, m.path, m.src, tests)
        if out is None:
            self.say("%s - %s: does not build" % (
                "ok" if m.unbuilt_ok else "not ok", m.what),
                not m.unbuilt_ok)
            return
        failed = first_failure(out, self.cfgs[m.cfg], tests, threads)
        if self.stop.is_set():  # its test was killed, not failed
            return
        if failed is not None:
            with self.lock:
                self.killers[m.cfg].add((failed.split()[0], threads))
            self.say("ok - %s: fails %s" % (m.what, failed))
        elif m.why is not None:
            self.say("ok - %s: passes, as expected (%s)" % (m.what, m.why))
        else:
            with self.lock:
                self.survived[m.group] += 1
            self.say("not ok - %s: passes every test" % m.what, True)

    def unchanged(self, k, name):
        cfg = self.cfgs[name]
        killers = sorted(self.killers[name], key=str)
        out = self.build(k, name, "usched.c", self.srcs["usched.c"],
                         [t for t, threads in killers])
        failed = "the build" if out is None else next(
            filter(None, (first_failure(out, cfg, [t], threads)
                          for t, threads in killers)), None)
        if failed is not None:
            self.say("not ok - %s: %s fails on the code unchanged: its "
                     "mutants' kills do not count" % (name, failed), True)

    def pool(self, jobs):
        """Runs each job, (name, function of a worker's number), in JOBS
        threads."""
        todo = queue.Queue()
        for job in jobs:
            todo.put(job)

        def worker(k):
            while not self.stop.is_set():
                try:
                    name, job = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    job(k)
                except KeyboardInterrupt:
                    self.stop.set()
                except Exception as e:  # a job lost must fail the run
                    if not self.stop.is_set():
                        self.say("not ok - %s: %r" % (name, e), True)
        threads = [threading.Thread(target=worker, args=(k,))
                   for k in range(JOBS)]
        for t in threads:
            t.start()
        try:
            for t in threads:
                t.join()
        except KeyboardInterrupt:
            self.stop.set()
            kill_running()
            for t in threads:
                t.join()
            raise
        if self.stop.is_set():  # a build saw the ^C first
            raise KeyboardInterrupt

    def run(self, todo):
        """Runs the mutants todo, then the tests that killed them on the
        code unchanged, with a summary line per group: how many failed
        the run."""
        self.pool([(m.what, lambda k, m=m: self.mutant(k, m))
                   for m in todo])
        self.pool([(n + " unchanged", lambda k, n=n: self.unchanged(k, n))
                   for n in self.cfgs])
        for group, n in collections.Counter(m.group for m in todo).items():
            print("# %s: %d mutants, %d passed the tests unexpectedly" %
                  (group, n, self.survived[group]))
        return self.bad


def c_names(archs):
    """The configurations of archs' C mutants whose tools are here."""
    names = []
    for name, c in C_CONFIGS.items():
        if c["arch"] not in archs:
            continue
        missing = available(setup(name))
        if missing is not None:
            n = sum(c_where(m[1]) == name for m in c_list())
            print("# skipping %d C mutants in %s: no %s" %
                  (n, name, missing))
        elif any(c_where(m[1]) == name for m in c_list()):
            names.append(name)
    return names


def list_c(srcs, archs):
    for path, mid, old, new, what in c_list():
        name = c_where(mid)
        if C_CONFIGS[name]["arch"] not in archs:
            continue
        src = srcs[path]
        line = c_line(src, old) if src.count(old) == 1 else "?"
        print("%s:%s %s (%s): %s%s" % (path, line, mid, name, what,
                                       " [equivalent]" if mid in EQUIVALENT
                                       else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="all",
                    choices=list(ARCHS) + ["all"])
    ap.add_argument("--kind", default="all", choices=["asm", "c", "all"],
                    help="mutants of the assembly, of the C code, or both")
    ap.add_argument("--list", action="store_true",
                    help="print the mutants, build nothing")
    ap.add_argument("--only", metavar="ID", action="append", default=[],
                    help="run this C mutant, and no assembly mutant (may "
                    "be given again)")
    args = ap.parse_args()
    archs = list(ARCHS) if args.arch == "all" else [args.arch]
    srcs = {}
    for path in C_MUTANTS:
        with open(os.path.join(ROOT, path)) as f:
            srcs[path] = f.read()
    src = srcs["usched.c"]
    unknown = set(args.only) - set(m[1] for m in c_list())
    if unknown:
        ap.error("no C mutant %s" % ", ".join(sorted(unknown)))
    if args.only:
        args.kind = "c"
    if args.list:
        if args.kind != "c":
            for arch in archs:
                for kind, idx, ins, new in mutants(src, arch):
                    print("%s:%d %s" % (arch, idx + 1,
                                        describe(kind, ins, new)))
        if args.kind != "asm":
            list_c(srcs, archs)
        return 0
    if args.kind != "asm":
        # before minutes of building: the list must follow the code
        errs = c_errors(srcs)
        for e in errs:
            print("not ok - C %s" % e)
        if errs:
            return 1
    bad = 0
    todo = []
    names = set()
    if args.kind != "c":
        for arch in archs:
            missing = available(setup(arch))
            found = list(asm_jobs(src, arch))
            stale = speed_only_errors(src, arch)
            for e in stale:
                print("not ok - %s" % e)
            bad += len(stale)
            if missing is not None:
                print("# skipping %s: no %s" % (arch, missing))
            elif len(found) < MIN_MUTANTS:
                print("not ok - %s: only %d mutants found in usched.c's "
                      "assembly" % (arch, len(found)))
                bad += 1
            else:
                todo += found
                names.add(arch)
    if args.kind != "asm":
        c_in = c_names(archs)
        todo += c_jobs(srcs, c_in, args.only)
        names.update(c_in)
    with tempfile.TemporaryDirectory() as tmp:
        bad += Run(srcs, sorted(names), tmp).run(todo)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
