#!/usr/bin/env python3
"""make check-mutants: every mutant of the switch's assembly fails a test.

A mutant changes one instruction of an architecture's section of usched.c:
an instruction that stores or loads (a memory operand, or the FP control
register) is dropped, or its offset moved by 8; a conditional branch or move
takes the other condition. Each mutant is built in a copy of the tree and
the dispatcher's tests run on it (under qemu for aarch64). A mutant that
passes them all is a defect of the tests, unless it is listed in SPEED_ONLY:
those change when work is done, not what a thread finds when it resumes.

    tests/mutants.py [--arch x86-64|aarch64|all] [--list]
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The dispatcher's tests; t_sched and the rest test the schedulers.
TESTS = ["t_basic", "t_regs", "t_fpenv", "t_stack", "t_errors", "t_signal",
         "t_misuse", "t_faults", "t_bufs", "t_wake_block", "t_million",
         "t_model", "t_examples"]
TIMEOUT = 120
# Fewer mutants than this: the parser no longer reads the assembly, and a
# run that tried nothing must not pass.
MIN_MUTANTS = 40
QEMU = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]

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
# nothing a thread can see changes, only the time a switch takes.
POINTER = ("the FP state in force, as uarch_resume gets it, is then a "
           "pointer: never equal to a saved state, which is loaded")
RET_ADDR = "the same with the return address"
# (arch, kind, instruction): mutants that change only speed, and why.
SPEED_ONLY = {
    ("x86-64", "drop", "movq 48(%rcx), %rcx"): POINTER,
    ("x86-64", "offset", "movq 48(%rcx), %rcx"): RET_ADDR,
    ("x86-64", "offset", "cmpq 48(%rbx), %r12"):
        "compares the return address with the FP state in force: never "
        "equal, so the saved state is loaded",
    ("aarch64", "drop", "ldr x3, [x3, #160]"): POINTER,
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


def copy_tree(dst):
    def skip(d, names):
        return [n for n in names if n in (".git", "build", "report",
                                          "target", "bin")]
    shutil.copytree(ROOT, dst, ignore=skip)


def build(tree, arch):
    a = ARCHS[arch]
    out = os.path.join(tree, "build", arch)
    targets = [os.path.join(out, "tests", t) for t in TESTS] + \
        [os.path.join(out, "examples", e[:-2])
         for e in os.listdir(os.path.join(tree, "examples"))
         if e.endswith(".c")]
    r = subprocess.run(["make", "-s", "-C", tree, "O=" + out, "CC=" + a["cc"],
                        "CFLAGS=-O2 -g"] + a["make"] + targets,
                       capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items()
                            if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")})
    return out if r.returncode == 0 else None


def passes(argv, env, cwd):
    """Whether argv exits 0 within TIMEOUT seconds: None if it timed out.
    What it leaves running (a test's hung child) is killed."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env, cwd=cwd,
                         start_new_session=True)
    try:
        rc = p.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        rc = None
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
    return None if rc is None else rc == 0


def first_failure(out, arch):
    """The first test that fails on the build in out, or None."""
    a = ARCHS[arch]
    env = dict(os.environ, USCHED_TEST_THREADS="200000")
    if a["exec"]:
        env["USCHED_TEST_EXEC"] = " ".join(a["exec"])
    for t in TESTS:
        r = passes(a["exec"] + [os.path.join(out, "tests", t)], env,
                   os.path.dirname(os.path.dirname(out)))
        if r is None:
            return t + " (timed out)"
        if not r:
            return t
    return None


def available(arch):
    tools = [ARCHS[arch]["cc"]] + ARCHS[arch]["exec"][:1]
    return all(shutil.which(t) for t in tools)


def run_arch(arch, tmp):
    tree = os.path.join(tmp, arch)
    copy_tree(tree)
    path = os.path.join(tree, "usched.c")
    with open(path) as f:
        src = f.read()
    found = len(list(mutants(src, arch)))
    if found < MIN_MUTANTS:
        print("not ok - %s: only %d mutants found in usched.c's assembly"
              % (arch, found))
        return 1
    out = build(tree, arch)
    if out is None or first_failure(out, arch) is not None:
        print("not ok - %s: the tests fail on usched.c unchanged" % arch)
        return 1
    bad = 0
    n = 0
    for kind, idx, ins, new in mutants(src, arch):
        n += 1
        with open(path, "w") as f:
            f.write(apply(src, idx, ins, new))
        what = "%s %s" % (arch, describe(kind, ins, new))
        out = build(tree, arch)
        if out is None:
            print("ok - %s: does not build" % what)
            continue
        failed = first_failure(out, arch)
        why = SPEED_ONLY.get((arch, kind, ins))
        if failed is not None:
            print("ok - %s: fails %s" % (what, failed))
        elif why is not None:
            print("ok - %s: passes, as expected (%s)" % (what, why))
        else:
            print("not ok - %s: passes every test" % what)
            bad += 1
    print("# %s: %d mutants, %d passed the tests unexpectedly" %
          (arch, n, bad))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="all",
                    choices=list(ARCHS) + ["all"])
    ap.add_argument("--list", action="store_true",
                    help="print the mutants, build nothing")
    args = ap.parse_args()
    archs = list(ARCHS) if args.arch == "all" else [args.arch]
    with open(os.path.join(ROOT, "usched.c")) as f:
        src = f.read()
    if args.list:
        for arch in archs:
            for kind, idx, ins, new in mutants(src, arch):
                print("%s:%d %s" % (arch, idx + 1,
                                    describe(kind, ins, new)))
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for arch in archs:
            if not available(arch):
                print("# skipping %s: no %s" % (
                    arch, " or ".join([ARCHS[arch]["cc"]] +
                                      ARCHS[arch]["exec"][:1])))
                continue
            bad += run_arch(arch, tmp)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
