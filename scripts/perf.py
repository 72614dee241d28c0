#!/usr/bin/env python3
"""Print the performance and scale figures of usched against its goals.

Every figure is measured in this one run, peers side by side with usched:
each round runs every program of a comparison once, in turn, and a
program's figure is its best round (--runs rounds), so that a noisy moment
of a shared machine does not favour one side. Goals are printed beside the
figures, with "met" or "MISSED"; the exit status says only whether the
programs ran (a benchmark is not a test).

    python3 scripts/perf.py            # about two minutes on 2 cores
    python3 scripts/perf.py --big      # also 100 million threads: +2 min

With valgrind, it also counts instructions (cachegrind): a message of the
N=8 ring with few threads, by function for usched, and a switch and its
floor, by function.

Needs the programs of `make bench` in bench/bin; a peer that is missing or
fails (some cannot hold a million threads) is reported as such; a usched
program that fails or hangs (RUN_TIMEOUT) ends the run with exit 1.
"""

import argparse
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
import sweep  # noqa: E402  (M as in the full report sweep)

BIN = os.path.join(sweep.ROOT, "bench", "bin")
RUN_TIMEOUT = 1800  # seconds; 10^8 threads take one to two minutes


class Failed(Exception):
    pass


def execute(argv, what=""):
    """Runs argv; returns (stdout, stderr), or raises Failed with `what`
    and the first line of stderr (the reason; usage text follows it), not
    counting valgrind's own."""
    try:
        p = subprocess.run([str(a) for a in argv], capture_output=True,
                           text=True, errors="replace", timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failed("%sno end after %d s" % (what, RUN_TIMEOUT))
    except OSError as e:  # not executable, not a program
        raise Failed("%scannot run %s: %s" % (
            what, os.path.basename(str(argv[0])), e.strerror or e))
    check_exit(p.returncode, p.stderr, what)
    return p.stdout, p.stderr


def check_exit(status, stderr, what=""):
    """Raises Failed for a non-zero exit status, with `what` and the first
    line of stderr that is not valgrind's."""
    if status != 0:
        lines = [x for x in stderr.splitlines()
                 if x.strip() and not x.startswith("==")]
        raise Failed(what + (lines[0][:72] if lines
                             else "exit %d" % status))


# The programs found not built, named again at the end: their figures are
# missing from a run that otherwise looks whole.
MISSING = []


def program(name):
    """BIN/name, or Failed if it was not built."""
    path = os.path.join(BIN, str(name))
    if not os.path.exists(path):
        if str(name) not in MISSING:
            MISSING.append(str(name))
        raise Failed("not built: " + path)
    return path


def command(args):
    """BIN/args[0] with args[1:], as strings."""
    return [program(args[0])] + [str(a) for a in args[1:]]


def run(args):
    """Runs BIN/args[0] with args[1:]; returns (stdout, stderr)."""
    return execute(command(args))


def number(text, name, what="a number", above=-math.inf):
    """text as a finite number above `above`, or Failed naming the program
    that printed it and what was expected."""
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if math.isfinite(x) and x > above:
        return x
    raise Failed("%s printed %s where %s was expected"
                 % (name, "'%s'" % text[:72] if text else "nothing", what))


def seconds(out, name):
    """The last word of a program's output: its seconds."""
    words = out.split()
    return number(words[-1] if words else "", name, "a time", 0)


def best(cmds, runs, ours):
    """Each command's smallest last number on stdout, or its failure; the
    first `ours` commands are usched's: their failure is raised. A command
    may be a function returning the number instead."""
    out = [None] * len(cmds)
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            if isinstance(out[i], Failed):
                continue
            try:
                t = cmd() if callable(cmd) else seconds(run(cmd)[0], cmd[0])
            except Failed as e:
                out[i] = e
                continue
            out[i] = t if out[i] is None else min(out[i], t)
    for x in out[:ours]:
        if isinstance(x, Failed):
            raise x
    return out


def grab(pattern, text):
    """The number pattern's group finds in a usched program's output."""
    m = re.search(pattern, text)
    if m is None:
        raise Failed("no '%s' in its output" % pattern)
    return m.group(1)


def verdict(value, goal, at_least):
    if value is None:
        return "n/a"
    met = value >= goal if at_least else value <= goal
    return "met" if met else "MISSED"


def ratio(a, b):
    """b / a (seconds: how many times faster a is), or None unless both are
    positive numbers."""
    if isinstance(a, float) and isinstance(b, float) and a > 0 and b > 0:
        return b / a
    return None


def show(x, fmt="%.2f"):
    if isinstance(x, Failed):
        return "failed: %s" % x
    return "-" if x is None else fmt % x


def rounds(n, r):
    return sweep.rounds(sweep.PROFILES["full"].messages, n, r)


def mmsgs(n, r, secs):
    if not isinstance(secs, float):
        return secs
    return n * r * rounds(n, r) / secs / 1e6


def section(title):
    print("\n## " + title + "\n")


def machine(args):
    """Which machine the figures come from: a VM's CPU can change."""
    info = sweep.machine_info(args.bin)
    print("Machine: %s, %d CPUs, %s; usched %s; %s" % (
        info["cpu"], info["cores"], info["kernel"], info["usched"],
        info["date"]))


def switch(args):
    section("Switch: %s [-f] [--floor] -n 5000000 0 (-f: the threads share "
            "the FP control state; --floor: the same saves and copies "
            "without usched, the least a switch by copying costs here)"
            % os.path.relpath(os.path.join(BIN, "switch")))
    saved = "%d" % switch_rows(run(["switch", "-n", 1000, 0])[0], 1)[0][0]
    times = best([["switch", "-n", 5000000, 0],
                  ["switch", "-f", "-n", 5000000, 0],
                  ["switch", "--floor", "-n", 5000000, 0],
                  ["switch", "--floor", "-f", "-n", 5000000, 0]],
                 args.runs, 4)
    for ns, floor, how in zip(times[:2], times[2:], ("", " with -f")):
        print("%s bytes saved: %s ns a switch%s   goal <= 12: %s" % (
            saved, show(ns), how,
            verdict(ns if isinstance(ns, float) else None, 12, False)))
        print("    the same copies without usched (--floor): %s ns, the "
              "switch %sx that" % (show(floor), show(ratio(floor, ns))))


# The N=8 ring's peers: name, program, usched's goal against it.
PEERS = (("C++20", "ring-cpp", 0.8), ("Boost", "ring-boost", 1.5),
         ("Go", "ring-go", 10.0))


def rate_cell(r, secs, x, goal=None):
    """A ring N=8's millions of messages/s in secs, with the ratio x if
    there is one, and against goal its verdict."""
    rate = show(mmsgs(8, r, secs), "%.1f")
    if not x:
        return rate
    return "%s = %.2fx%s" % (rate, x, " " + verdict(x, goal, True)
                             if goal else "")


def ring_n8(args):
    section("Ring N=8, P=1: millions of messages/s (best of %d; one run for "
            "R > 10000), usched ll against C++20 (goal 0.8x), Boost.Context "
            "(1.5x), Go (10x)" % args.runs)
    print("(ll -f: the threads share the FP control state, as C++20's, "
          "Go's and Rust's do; ll -flto: the ring and the library built "
          "with -flto, as a program may be; their ratios are against C++20)")
    ours = 3
    print("%9s %8s %10s %16s %16s" % ("R", "M", "usched ll", "ll -f",
                                      "ll -flto")
          + "".join(" %22s" % p[0] for p in PEERS))
    for r in args.rs:
        m = rounds(8, r)
        cmds = [["ring", "--sched", "ll", 8, r, m, 0, 1],
                ["ring", "-f", "--sched", "ll", 8, r, m, 0, 1],
                ["ring-lto", "--sched", "ll", 8, r, m, 0, 1]]
        cmds += [[p[1], 8, r, m, 0, 1] for p in PEERS]
        if r > 100000 and not args.all_peers:
            cmds[ours + 1:] = []  # 16 KiB fibers, 2 KiB goroutines: tens of GB
        t = best(cmds, args.runs if r <= 10000 else 1, ours)
        line = "%9d %8d %10s" % (r, m, show(mmsgs(8, r, t[0]), "%.1f"))
        for i in (1, 2):
            line += " %16s" % rate_cell(r, t[i], ratio(t[i], t[ours]))
        for i, p in enumerate(PEERS):
            if i + ours >= len(t):
                line += " %22s" % "skipped (memory)"
                continue
            line += " %22s" % rate_cell(r, t[i + ours],
                                        ratio(t[0], t[i + ours]), p[2])
        print(line)


# make bench's ring-shift-K: ring with its hot code, and the library's, K
# bytes further on (bench/ring.c's RING_SHIFT); ring is K = 0.
SHIFTS = (0, 16, 32, 48, 64, 80, 96, 112)


def placed(k):
    """The ring whose code lies k bytes on."""
    return "ring-shift-%d" % k if k else "ring"


def placement(args):
    """The small rings' rate moves by a quarter with where their code lies
    (bench/PERF.md): a change is judged on the median placement, not one."""
    section("Code placement: ring N=8, P=1, its hot code moved 0-112 bytes "
            "on (the same code; %s and ring-shift-K): millions of "
            "messages/s at each placement (best of %d), and the median's "
            "ratio to C++20 (goal 0.8x), Boost.Context (1.5x) and Go (10x)"
            % (os.path.relpath(os.path.join(BIN, "ring")), args.runs))
    for r in (2, 100):
        m = rounds(8, r)
        cmds = [[placed(k), "--sched", "ll", 8, r, m, 0, 1] for k in SHIFTS]
        t = best(cmds + [[p[1], 8, r, m, 0, 1] for p in PEERS], args.runs,
                 len(SHIFTS))
        rates = [mmsgs(8, r, x) for x in t[:len(SHIFTS)]]
        mid = statistics.median(rates)
        print("R=%-3d M=%-6d ll %s; min %.1f, median %.1f, max %.1f" % (
            r, m, " ".join("%.1f" % y for y in rates), min(rates), mid,
            max(rates)))
        cells = []
        for p, secs in zip(PEERS, t[len(SHIFTS):]):
            peer = mmsgs(8, r, secs)
            # Of rates, not seconds: b / a is the median's share of peer's.
            x = ratio(peer, mid)
            cells.append("%s %s -> %s %s" % (p[0], show(peer, "%.1f"),
                                             show(x), verdict(x, p[2], True)))
        print("      the median against " + "; ".join(cells))


def valgrind_counts(cmd):
    """Instructions valgrind counts in a run of BIN/cmd: the total, and by
    function (code inlined from another file counts with its function).
    Cachegrind names each instruction after the function its address lies
    in; callgrind follows calls and returns, which a switch of stacks does
    not pair, and charged the resume (jumped to) to the function the
    resumed thread returns into."""
    path = program(cmd[0])
    with tempfile.TemporaryDirectory(prefix="perf-") as tmp:
        out = os.path.join(tmp, "cachegrind.out")
        # Instructions only, whatever VALGRIND_OPTS asks for.
        execute(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                 "--branch-sim=no", "--cachegrind-out-file=" + out, path]
                + list(cmd[1:]), "under cachegrind: ")
        with open(out) as f:
            total = int(grab(r"(?m)^summary: (\d+)", f.read()))
        listing = execute(["cg_annotate", "--auto=no", "--threshold=0", out],
                          "cg_annotate: ")[0]
    funcs = {}
    # "1,234 (5.00%)  file:function"; the file may hold spaces.
    for n, name in re.findall(r"(?m)^\s*([\d,]+) \(\s*[\d.]+%\)\s+.*?:"
                              r"([^\s:]+)$", listing):
        funcs[name] = funcs.get(name, 0) + int(n.replace(",", ""))
    return total, funcs


def per_unit(cmd_of, units_of, counts):
    """Instructions a unit (message, switch): a run of counts[1] less one
    of counts[0], so that start and set-up cancel; and by function."""
    runs = [valgrind_counts(cmd_of(c)) for c in counts]
    units = units_of(counts[1]) - units_of(counts[0])
    funcs = {f: (runs[1][1][f] - runs[0][1].get(f, 0)) / units
             for f in runs[1][1]}
    return (runs[1][0] - runs[0][0]) / units, funcs


def by_function(funcs):
    return ", ".join("%s %.1f" % (f, x) for f, x in sorted(
        funcs.items(), key=lambda kv: -kv[1]) if x >= 0.5)


def instructions(args):
    n, r, ms = 8, 2, (1000, 51000)
    section("Instructions (cachegrind): a message of the ring N=%d R=%d P=1, "
            "and a switch; runs of M (switch: -n) %d less runs of %d"
            % (n, r, ms[1], ms[0]))
    if not args.valgrind:
        print("skipped (--no-valgrind)")
        return
    if not (shutil.which("valgrind") and shutil.which("cg_annotate")):
        print("skipped: valgrind is not installed")
        return

    def ring(cmd):
        return lambda m: cmd + [n, r, m, 0, 1], lambda m: n * r * m, "message"

    def switch(cmd):  # -n K: K switches of each of its two threads
        return lambda k: cmd + ["-n", k, 0], lambda k: 2 * k, "switch"

    # The programs ran natively above: a failure here is valgrind's or
    # the machine's, and is only reported. By function: usched's, and the
    # floor's, whose difference is the dispatcher.
    progs = (("usched ll", ring(["ring", "--sched", "ll"]), True),
             ("ll -f", ring(["ring", "-f", "--sched", "ll"]), False),
             ("ll -flto", ring(["ring-lto", "--sched", "ll"]), False),
             ("C++20", ring(["ring-cpp"]), False),
             ("Boost", ring(["ring-boost"]), False),
             ("switch", switch(["switch"]), True),
             ("floor", switch(["switch", "--floor"]), True))
    for label, (cmd_of, units_of, unit), split in progs:
        try:
            per, funcs = per_unit(cmd_of, units_of, ms)
        except Failed as e:
            print("%-10s failed: %s" % (label, e))
            continue
        print("%-10s %6.1f a %s%s" % (label, per, unit,
                                      ": " + by_function(funcs) if split
                                      else ""))


def ring_n2(args):
    section("Ring N=2, P=1: usched ll against C++20 (goal 0.35x)")
    for r in args.rs[:3]:
        m = rounds(2, r)
        t = best([["ring", "--sched", "ll", 2, r, m, 0, 1],
                  ["ring-cpp", 2, r, m, 0, 1]], args.runs, 1)
        x = ratio(t[0], t[1])
        print("R=%-6d M=%-6d ll %s  C++20 %s  -> %s %s" % (
            r, m, show(mmsgs(2, r, t[0]), "%.1f"),
            show(mmsgs(2, r, t[1]), "%.1f"), show(x), verdict(x, 0.35, True)))


def at_once(cmds, cpus):
    """Runs the commands at the same time, each on its own CPU; the
    largest of their times (seconds, last on stdout)."""
    procs, outs = [], []
    try:
        for c, cpu in zip(cmds, cpus):
            procs.append(subprocess.Popen(
                command(c), text=True, errors="replace",
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                preexec_fn=lambda cpu=cpu: os.sched_setaffinity(0, {cpu})))
        for p in procs:
            outs.append(p.communicate(timeout=RUN_TIMEOUT))
    except subprocess.TimeoutExpired as e:
        raise Failed("%s: no end after %d s" % (
            os.path.basename(e.cmd[0]), RUN_TIMEOUT))
    except OSError as e:
        raise Failed("cannot run %s: %s" % (c[0], e.strerror or e))
    finally:  # none is left running, whatever failed
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (_, err) in zip(procs, outs):
        check_exit(p.returncode, err)
    return max(seconds(out, c[0]) for (out, _), c in zip(outs, cmds))


def ring_p2(args):
    cpus = sorted(os.sched_getaffinity(0))[:2]
    section("Ring N=8, usched ll, P=2 against P=1 (goal 1.7x); and what the "
            "host gives two CPUs: two P=1 rings of R/2 cycles each, as two "
            "processes on two CPUs at once")
    for r in args.rs[:3]:
        m = rounds(8, r)
        cmds = [["ring", "--sched", "ll", 8, r, m, 0, 1],
                ["ring", "--sched", "ll", 8, r, m, 0, 2]]
        if len(cpus) == 2 and r >= 2:
            halves = [["ring", "--sched", "ll", 8, k, m, 0, 1]
                      for k in (r // 2, r - r // 2)]
            cmds.append(lambda halves=halves: at_once(halves, cpus))
        t = best(cmds, args.runs, 2)
        x = ratio(t[1], t[0])
        line = "R=%-6d P=1 %s  P=2 %s  -> %s %s" % (
            r, show(mmsgs(8, r, t[0]), "%.1f"),
            show(mmsgs(8, r, t[1]), "%.1f"), show(x), verdict(x, 1.7, True))
        if len(t) == 3:
            host = ratio(t[2], t[0])
            line += "; two processes %s -> %s" % (
                show(mmsgs(8, r, t[2]), "%.1f"), show(host))
            if x and host:
                line += ", P=2 gets %.0f %% of it" % (100 * x / host)
        else:
            line += "; two processes: n/a (%s)" % (
                "one CPU" if len(cpus) < 2 else "R=1")
        print(line)


def ring_switches(n, r, m, d):
    """Switches of one ring run, and the most stack a thread saved."""
    err = run(["ring", "--sched", "ll", "-v", n, r, m, d, 1])[1]
    switches = int(grab(r"switches: (\d+)", err))
    if switches == 0:
        raise Failed("ring -v %d %d %d %d 1 counted no switches"
                     % (n, r, m, d))
    return switches, int(grab(r"max stack (\d+) B", err))


def switch_rows(out, n):
    """The switch benchmark's n rows below its header: (bytes saved, ns a
    switch) each."""
    rows = [row.split() for row in out.splitlines()[1:]]
    if len(rows) != n or any(len(row) != 2 for row in rows):
        raise Failed("switch: %d row%s of two numbers expected below its "
                     "header, got '%s'" % (n, "s" * (n > 1), " | ".join(
                         out.strip().splitlines())[:72]))
    return [(number(a, "switch"), number(b, "switch")) for a, b in rows]


def switch_slopes(threads, runs, stride=1):
    """ns per extra KiB saved, switch benchmark with D=1000 and 10000."""
    saved = None
    for _ in range(runs):  # the best of each size
        sw = run(["switch", "-t", threads, "-s", stride,
                  "-n", max(1, 2000000 // threads), 0, 1000, 10000])[0]
        now = switch_rows(sw, 3)
        saved = now if saved is None else [
            (a, min(b, c)) for (a, b), (_, c) in zip(saved, now)]
    if not saved[0][0] < saved[1][0] < saved[2][0]:
        raise Failed("switch: a thread saved %d, %d and %d B with D=0, 1000 "
                     "and 10000" % tuple(b for b, _ in saved))
    return [(saved[i][1] - saved[0][1]) / ((saved[i][0] - saved[0][0]) / 1024)
            for i in (1, 2)]


def extra_bytes(args):
    section("Extra stack D: ns per extra KiB saved per switch, ring (ll, "
            "N=8: the median over its %d placements, each against its own "
            "D=0) against the switch benchmark (goal: no more); and against "
            "a switch cycle of as many threads as the ring, whose copies "
            "come from the same caches, in address order and in the ring's"
            % len(SHIFTS))
    slope = switch_slopes(2, args.runs)
    n, ds = 8, (0, 1000, 10000)
    for r in (2, 100):
        m = rounds(n, r)
        # Each placement against its own D=0: ring's alone, at a slow
        # placement, made D look cheap.
        t = best([[placed(k), "--sched", "ll", n, r, m, d, 1]
                  for k in SHIFTS for d in ds], args.runs,
                 len(SHIFTS) * len(ds))
        same = switch_slopes(n * r, args.runs)
        order = switch_slopes(n * r, args.runs, n)
        switches, base = ring_switches(n, r, m, 0)  # the same code in each
        for i, d in ((1, 1000), (2, 10000)):
            ring_kib = (ring_switches(n, r, 2, d)[1] - base) / 1024
            if ring_kib <= 0:  # the padding is not on the stack
                raise Failed("ring: a thread saved no more stack with "
                             "D=%d than with D=0 (%d B)" % (d, base))
            costs = [(t[j + i] - t[j]) * 1e9 / switches / ring_kib
                     for j in range(0, len(t), len(ds))]
            ring_ns = statistics.median(costs)
            # A cost or slope <= 0 (noise: D=1000 ran faster) has no ratio.
            x = ratio(slope[i - 1], ring_ns)
            print("R=%-3d D=%-5d ring %.1f ns/KiB (min %.1f, max %.1f), "
                  "switch %.1f -> %s %s; %d threads %.1f -> %s, ring's "
                  "order %.1f -> %s"
                  % (r, d, ring_ns, min(costs), max(costs), slope[i - 1],
                     show(x), verdict(x, 1.0, False), n * r, same[i - 1],
                     show(ratio(same[i - 1], ring_ns)), order[i - 1],
                     show(ratio(order[i - 1], ring_ns))))


def create(args):
    section("Create, run and destroy (goal <= 50 ns a thread)")
    t = best([["create", "--sched", s, 1000000] for s in ("ll", "rr")],
             args.runs, 2)
    for s, x in zip(("ll", "rr"), t):
        print("%s: %s ns   %s" % (s, show(x, "%.1f"), verdict(
            x if isinstance(x, float) else None, 50, False)))


def memory(args):
    section("Memory: all threads blocked at once (goal <= 200 bytes a "
            "thread at D=0)")
    for r in (500000, 50000000) if args.big else (500000,):
        cmd = ["ring", "--sched", "rr", "-v", 2, r, 3, 0, 1]
        out, err = run(cmd)
        b = number(grab(r"([\d.]+) bytes per thread", err), "ring")
        rss = int(grab(r"peak RSS: (\d+) KiB", err))
        stime = number(grab(r"system ([\d.]+) s", err), "ring")
        print("%s: %d threads, %g s (system time %.1f s), peak RSS %.1f "
              "GiB, %.1f bytes a thread %s" % (
                  " ".join(map(str, cmd)), 2 * r, seconds(out, "ring"), stime,
                  rss / 2**20, b, verdict(b, 200, False)))


def main():
    global BIN
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=sweep.int_at_least(1, sweep.MAX_RUNS),
                    default=3,
                    help="rounds of each comparison (default 3)")
    # N=8 rings: as many threads as usched's ring takes, at most
    ap.add_argument("--rs", type=sweep.int_list(
                        1, sweep.most_threads("ring") // 8),
                    default="2,100,10000,1000000",
                    help="R values of the N=8 ring (the first three for "
                    "the others)")
    ap.add_argument("--all-peers", action="store_true",
                    help="run Boost and Go for R > 100000 too")
    ap.add_argument("--big", action="store_true",
                    help="the memory figure with 100 million threads")
    ap.add_argument("--no-valgrind", dest="valgrind", action="store_false",
                    help="skip the instruction counts")
    ap.add_argument("--bin", default=BIN,
                    help="where the programs are (default bench/bin)")
    args = ap.parse_args()
    BIN = args.bin
    if sweep.stdout_closed("perf"):
        return 1
    # As Ctrl-C: the program running is killed on the way out.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, sweep.interrupt)
    try:
        for part in (machine, switch, ring_n8, placement, instructions,
                     ring_n2, ring_p2, extra_bytes, create, memory):
            part(args)
        sys.stdout.flush()
        if MISSING:
            print("perf: not built, so their figures are missing: %s "
                  "(make bench builds each one whose toolchain is there)"
                  % ", ".join(MISSING), file=sys.stderr)
    except KeyboardInterrupt:
        print("\nperf: interrupted", file=sys.stderr)
        return 130
    except Failed as e:
        print("perf: a usched benchmark failed: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        # Running a program fails as Failed, and a file's error names it:
        # one without a name comes from writing stdout.
        if e.filename is not None:
            print("perf: %s" % e, file=sys.stderr)
            return 1
        sweep.quiet_stdout()
        if not isinstance(e, BrokenPipeError):  # full, not left
            print("perf: cannot write the figures: %s" % (e.strerror or e),
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
