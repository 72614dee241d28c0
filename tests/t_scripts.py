#!/usr/bin/env python3
"""TAP tests of scripts/sweep.py, graph.py and perf.py (run by prove).

Needs hyperfine, matplotlib and ldd: without them the checks that use them
fail.
"""

import hashlib
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # it imports the scripts: no __pycache__
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP = os.path.join(ROOT, "scripts", "sweep.py")
GRAPH = os.path.join(ROOT, "scripts", "graph.py")
PERF = os.path.join(ROOT, "scripts", "perf.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))  # to import them
from sweep import cpu_model  # noqa: E402  (sweep() below is a helper)
import graph  # noqa: E402
BINARIES = ("ring", "ring-pthread", "ring-go", "ring-async-std",
            "ring-tokio", "ring-cpp", "ring-cpp-pool", "ring-boost")
NCPU = len(os.sched_getaffinity(0))

count = 0
failures = 0


def check(ok, name, diag=""):
    """Print one TAP result line (and diagnostics when it failed)."""
    global count, failures
    count += 1
    if not ok:
        failures += 1
    print(f"{'ok' if ok else 'not ok'} {count} - {name}")
    if not ok and diag:
        for line in str(diag).splitlines()[:30]:
            print(f"# {line}")
    sys.stdout.flush()
    return ok


def run(script, *args, env=None):
    return subprocess.run([sys.executable, script, *args],
                          capture_output=True, text=True, timeout=300,
                          env=env)


def fake_bin(dirpath, name, body):
    """A fake ring binary: a shell script logging its arguments."""
    path = os.path.join(dirpath, name)
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\necho "$@" >> "{path}.calls"\n{body}\n')
    os.chmod(path, 0o755)
    return path


def read_text(path):
    with open(path) as f:
        return f.read()


def digest(path):
    """The file's SHA-256, in hex."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def calls(path):
    try:
        with open(path + ".calls") as f:
            return f.read().splitlines()
    except OSError:
        return []


# ---- graph.py on fixed results -------------------------------------------

def point(label, n, r, m, status="ok", seconds=(), reason=None):
    return {"label": label, "binary": "x", "n": n, "r": r, "m": m, "d": 0,
            "p": 1, "status": status, "reason": reason,
            "seconds": list(seconds), "wall": list(seconds)}


FIXED = [
    point("U-rr", 2, 4, 1000, seconds=[0.004, 0.004, 0.004]),   # 2.00
    dict(point("U-rr", 2, 8, 1000, seconds=[0.004, 0.002]),     # 5.33
         usched="v1"),
    point("POSIX", 2, 4, 1000, "failed", reason="exit status 1: boom"),
    point("C++1T", 2, 8, 500, seconds=[0.01]),                   # 0.80
    point("GO", 8, 2, 500, seconds=[0.001]),                     # 8.00
    point("GO", 8, 100, 125, seconds=[0.04]),                    # 2.50
    point("BOOST", 8, 2, 100, seconds=[0.0016]),                 # 1.00
]
MACHINE = {"cpu": "Test CPU 9000", "cores": 64, "cpus_used": 2,
           "kernel": "Linux 9.9.9-test", "tools": {"gcc": "gcc 99.1"},
           "usched": "abc123", "date": "2001-02-03T04:05:06+00:00"}


def md_tables(text):
    """{N: {label: {threads: cell}}} from report.md's tables."""
    tables, n, cols = {}, None, None
    for line in text.splitlines():
        m = re.match(r"## N = (\d+)", line)
        if m:
            n, cols = int(m.group(1)), None
            tables[n] = {}
        elif n is not None and line.startswith("| implementation"):
            cols = [int(c) for c in line.strip("|").split("|")[1:]]
        elif cols and line.startswith("|") and not line.startswith("|:"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            tables[n][cells[0]] = dict(zip(cols, cells[1:]))
        elif not line.startswith("|"):
            cols = None if line.strip() else cols
    return tables


def test_graph(tmp):
    res, out = os.path.join(tmp, "results"), os.path.join(tmp, "out")
    os.makedirs(res)
    for p in FIXED:
        name = f"{p['label']}_N{p['n']}_R{p['r']}.json"
        with open(os.path.join(res, name), "w") as f:
            json.dump(p, f)
    with open(os.path.join(res, "machine.json"), "w") as f:
        json.dump(MACHINE, f)
    p = run(GRAPH, "--results", res, "--out", out)
    if not check(p.returncode == 0, "graph.py runs on fixed results",
                 p.stdout + p.stderr):
        return
    with open(os.path.join(out, "report.md")) as f:
        md = f.read()
    t = md_tables(md)
    want = {2: {"U-rr": {8: "2.00", 16: "5.33"},
                "POSIX": {8: "fail", 16: ""},
                "C++1T": {8: "", 16: "0.80"}},
            8: {"GO": {16: "8.00", 800: "2.50"},
                "BOOST": {16: "1.00", 800: ""}}}
    check(t == want, "table cells are N*R*M/mean(seconds)/1e6, fail, empty",
          f"got {t}")
    check(list(t.get(2, {})) == ["U-rr", "POSIX", "C++1T"],
          "rows follow sweep.py's order", f"got {list(t.get(2, {}))}")
    check(all(s in md for s in ("Test CPU 9000", "64 cores",
                                "Linux 9.9.9-test", "gcc 99.1",
                                "2001-02-03")),
          "header shows the recorded machine", md[:600])
    check("(c2.png)" in md and "(c8.svg)" in md and "boom" in md,
          "report links the images and lists failures")
    legend = [x for x in md.split("## N = ")[0].splitlines()
              if re.fullmatch(r"\| [A-Z].*\|.*\|.*\|.*\|", x)]
    check(legend == ["| U-rr | usched rr, all CPUs | 0 | 1 |",
                     "| POSIX | one pthread per ring member, on 1 CPU | 0 "
                     "| 1 |",
                     "| GO | goroutines, GOMAXPROCS=all CPUs | 0 | 1 |",
                     "| C++1T | C++20 coroutines, 1 thread | 0 | 1 |",
                     "| BOOST | Boost.Context fibers, 1 thread | 0 | 1 |"],
          "report.md says what each label is, with D and P as run, in "
          "sweep.py's order", "\n".join(legend))
    absent = [x for x in graph.sweep.LABELS
              if x not in ("U-rr", "POSIX", "GO", "C++1T", "BOOST")]
    check(f"No points of {', '.join(absent)}: not built, or not chosen, "
          "when the sweep ran." in md and len(absent) == 11,
          "report.md names the implementations it has no point of",
          md[:1500])
    check("| usched | unknown (6 points), v1 (1 point) |" in md
          and "the points come from 2 different usched commits" in md
          and "warning: the points come from 2 usched commits: unknown "
          "(6 points), v1 (1 point)" in p.stderr,
          "points of several commits: listed in the header, with a "
          "warning there and on stderr", md[:800] + p.stderr)
    mixed = ("N=2 R=8: M 500 (1 point), 1000 (1 point); "
             "N=8 R=2: M 100 (1 point), 500 (1 point).")
    warning = [x for x in md.splitlines() if "different M" in x]
    check(len(warning) == 1 and warning[0].endswith(": " + mixed)
          and "different M in one column: N=2 R=8: M 500 (1 point), 1000 "
          "(1 point)\n" in p.stderr,
          "a column whose implementations ran different M: a warning in "
          "the header and on stderr", md[:1200] + p.stderr)
    with open(os.path.join(out, "summary.csv")) as f:
        rows = f.read().splitlines()
    check("U-rr,2,8,16,1000,0,1,ok,5.3333,4.0000,8.0000,2,,v1,," in rows,
          "summary.csv has mean, slowest and fastest run", "\n".join(rows))
    for n in (2, 8):
        png, svg = (os.path.join(out, f"c{n}.{e}") for e in ("png", "svg"))
        with open(png, "rb") as f:
            magic = f.read(8)
        check(magic == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 1000,
              f"c{n}.png is a non-empty PNG")
        with open(svg, errors="replace") as f:
            text = f.read()
        check("<svg" in text and os.path.getsize(svg) > 1000,
              f"c{n}.svg is a non-empty SVG")
    check("not all measured on" not in md + p.stderr,
          "points that record no CPU: no warning about CPUs", md[:800])
    p = run(GRAPH, "--results", os.path.join(tmp, "none"), "--out", out)
    check(p.returncode == 1 and "no results" in p.stderr,
          "graph.py without results exits 1", p.stderr)


def graph_report(res, out):
    """graph.py on res into out: its process, and report.md's text (or why
    it cannot be read)."""
    p = run(GRAPH, "--results", res, "--out", out)
    try:
        with open(os.path.join(out, "report.md")) as f:
            return p, f.read()
    except OSError as e:
        return p, str(e)


def test_graph_cpus(tmp):
    """Points measured on CPUs or kernels other than machine.json's (a
    sweep resumed after the VM's CPU changed, a run of --only after a
    kernel upgrade) are said to be, in the header, on stderr and in
    summary.csv."""
    import csv
    for key, name in (("cpu", "CPU"), ("kernel", "kernel")):
        mine, other = MACHINE[key], f"Other {name}"
        for i, (used, warned) in enumerate((
                ((mine, mine, mine), None),
                ((mine, other, mine), f"{mine} (2 points), {other} "
                 "(1 point)"),
                ((other,) * 3, f"{other} (3 points)"),
                ((mine, None, mine), f"{mine} (2 points), unknown "
                 "(1 point)"))):
            res, out = (os.path.join(tmp, f"{d}{key}{i}")
                        for d in ("results", "out"))
            write_points(res, [dict(point("GO", 8, r, 100, seconds=[0.001]),
                                    **({key: c} if c else {}))
                               for r, c in zip((2, 20, 200), used)])
            with open(os.path.join(res, "machine.json"), "w") as f:
                json.dump(MACHINE, f)
            p, md = graph_report(res, out)
            try:
                with open(os.path.join(out, "summary.csv"),
                          newline="") as f:
                    in_csv = [row[key] for row in csv.DictReader(f)]
            except (OSError, KeyError):
                in_csv = []
            said = [x for x in md.splitlines() if "not all measured" in x]
            if warned:
                check(p.returncode == 0 and len(said) == 1
                      and said[0].endswith(
                          f"{name} above**: {warned} (summary.csv's {key} "
                          "column gives each point's).")
                      and "graph.py: warning: the points were not all "
                      f"measured on {mine}: {warned}\n" in p.stderr,
                      f"{name}s {used}: a warning in the header and on "
                      "stderr, with each one's points", md[:1200] + p.stderr)
            else:
                check(p.returncode == 0 and not said
                      and "warning" not in p.stderr,
                      f"every point on machine.json's {name}: no warning",
                      md[:1200] + p.stderr)
            check(in_csv == [c or "" for c in used],
                  f"{name}s {used}: summary.csv's {key} column", in_csv)


def test_graph_stale(tmp):
    """A run into a directory removes the plots of an N that the last run
    there drew and the results no longer have, and nothing else."""
    res, out = os.path.join(tmp, "results"), os.path.join(tmp, "out")
    with open(os.path.join(tmp, "m.json"), "w") as f:
        json.dump(MACHINE, f)

    def sweep_of(ns):
        shutil.rmtree(res, ignore_errors=True)
        write_points(res, [point("GO", n, 2, 100, seconds=[0.001])
                           for n in ns])
        shutil.copy(os.path.join(tmp, "m.json"),
                    os.path.join(res, "machine.json"))
        return graph_report(res, out)

    def plots():
        return sorted(x for x in os.listdir(out) if x.endswith((".png",
                                                                ".svg")))

    p, _ = sweep_of((2, 8, 16))
    for mine in ("c4.png", "c8.txt"):  # written by someone else
        with open(os.path.join(out, mine), "w") as f:
            f.write("mine")
    p, md = sweep_of((2, 16))
    gone = [os.path.join(out, f"c8.{e}") for e in ("png", "svg")]
    check(p.returncode == 0 and plots() == ["c16.png", "c16.svg", "c2.png",
                                            "c2.svg", "c4.png"]
          and "c8" not in md and os.path.exists(os.path.join(out, "c8.txt")),
          "the plots of an N the results no longer have are removed; a "
          "plot of an N the last run did not draw, and other files, stay",
          f"{plots()} {p.stderr}")
    check(f"removed, of N no longer in the results: {' '.join(gone)}\n"
          in p.stdout, "the removed plots are listed", p.stdout)
    p, _ = sweep_of((2, 16))
    check(p.returncode == 0 and "removed" not in p.stdout
          and plots() == ["c16.png", "c16.svg", "c2.png", "c2.svg",
                          "c4.png"],
          "the same results again: nothing removed", p.stdout + p.stderr)
    with open(os.path.join(out, "summary.csv"), "w") as f:
        f.write("label,n\nGO,\nGO,2\nGO,x\nGO,-1\nGO\n")
    p, _ = sweep_of((16,))
    check(p.returncode == 0 and plots() == ["c16.png", "c16.svg", "c4.png"],
          "a summary.csv edited by hand: its N that are numbers count",
          f"{plots()} {p.stderr}")
    os.remove(os.path.join(out, "summary.csv"))
    os.mkdir(os.path.join(out, "summary.csv"))
    p, _ = sweep_of((2,))
    check(p.returncode == 1 and "cannot write" in p.stderr
          and "c16.png" in plots(),
          "summary.csv unreadable (a directory): no plot removed, and the "
          "write fails as before", f"{plots()} {p.stderr}")


def outputs(out):
    """{name: bytes} of every file in out."""
    files = {}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name), "rb") as f:
            files[name] = f.read()
    return files


# Runs graph.py (argv[2:]) with matplotlib's savefig writing the start of
# c<N>.svg, N = argv[1], then killed: a run stopped mid-write.
KILL_PROBE = r"""
import os, runpy, signal, sys
from matplotlib.figure import Figure
n, script = sys.argv[1], sys.argv[2]
savefig = Figure.savefig
def probe(fig, fname, *args, **kwargs):
    if (f"N = {n} " in fig.axes[0].get_title() and "svg" in (
            kwargs.get("format"), str(fname)[-3:])):
        if hasattr(fname, "write"):
            fname.write(b"<svg")
            fname.flush()
        else:
            with open(fname, "wb") as f:
                f.write(b"<svg")
        os.kill(os.getpid(), signal.SIGKILL)
    return savefig(fig, fname, *args, **kwargs)
Figure.savefig = probe
sys.argv = sys.argv[2:]
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
"""


def test_graph_torn(tmp):
    """A write that fails (a full disk: here a file size limit) or a run
    killed midway leaves each output whole, the old one or the new one,
    and a failure no temporary file; a failure is one line, exit 1."""
    import resource
    res, out = os.path.join(tmp, "results"), os.path.join(tmp, "out")
    write_points(res, [point("GO", n, 2, 100, seconds=[0.001])
                       for n in (2, 8)])
    with open(os.path.join(res, "machine.json"), "w") as f:
        json.dump(MACHINE, f)
    p = run(GRAPH, "--results", res, "--out", out)
    before = outputs(out)
    mask = os.umask(0o022)
    os.umask(mask)
    modes = {oct(os.stat(os.path.join(out, k)).st_mode & 0o777)
             for k in before}
    check(p.returncode == 0 and p.stderr == "" and "c2.png" in before
          and modes == {oct(0o666 & ~mask)},
          "graph.py writes the plots, with the mode of a new file",
          f"{p.stderr} {modes}")
    write_points(res, [point("GO", n, 2, 100, seconds=[0.002])
                       for n in (2, 8)])  # other plots
    png_end = b"IEND\xaeB`\x82"
    for limit, fails in ((1000, "png"), (len(before["c2.png"]) + 1000,
                                         "svg")):
        p = subprocess.run(
            [sys.executable, GRAPH, "--results", res, "--out", out],
            capture_output=True, text=True, timeout=300,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE,
                                                  (limit, limit)))
        after = outputs(out)
        changed = [k for k in before if after.get(k) != before[k]]
        check(p.returncode == 1 and p.stderr == f"graph.py: cannot write "
              f"{out}/c2.{fails}: File too large\n"
              and set(after) == set(before)
              and changed in ([], ["c2.png"] * (fails == "svg"))
              and after["c2.png"].endswith(png_end),
              f"files of at most {limit} bytes: c2.{fails} fails: exit 1, "
              "one line naming it, no temporary file, every plot whole, "
              "the old one but those written before",
              f"{p.stderr} files {sorted(after)}, changed {changed}")
    p = subprocess.run([sys.executable, "-c", KILL_PROBE, "8", GRAPH,
                        "--results", res, "--out", out],
                       capture_output=True, text=True, timeout=300)
    after = {k: v for k, v in outputs(out).items() if k in before}
    changed = [k for k in before if after.get(k) != before[k]]
    check(p.returncode == -signal.SIGKILL and after["c8.svg"] ==
          before["c8.svg"] and changed == ["c2.png", "c2.svg", "c8.png"],
          "killed while it writes c8.svg: c8.svg is the old one, whole; "
          "the plots written before it the new ones",
          f"{p.returncode} {p.stderr} changed {changed} c8.svg starts "
          f"{after['c8.svg'][:20]}")


def test_replacing_synced(tmp):
    """A file written through sweep.replacing (every point, every output
    of graph.py) is on disk, whole, before it takes its name, and the
    rename after it: a crash cannot leave it empty.  (A crash cannot be
    had here: os.fsync and os.replace are watched.)"""
    path = os.path.join(tmp, "p.json")
    seen = []
    fsync, replace = os.fsync, os.replace

    def watch_fsync(fd):
        seen.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"),
                     os.fstat(fd).st_size))
        fsync(fd)

    def watch_replace(src, dst):
        seen.append(("replace", src, dst))
        replace(src, dst)
    os.fsync, os.replace = watch_fsync, watch_replace
    try:
        graph.sweep.write_json(path, {"n": list(range(3000))})
    finally:
        os.fsync, os.replace = fsync, replace
    size = os.path.getsize(path)
    tmpfile = seen[1][1] if len(seen) > 1 else None
    check([e[0] for e in seen] == ["fsync", "replace", "fsync"]
          and seen[0][1:] == (tmpfile, size)
          and seen[1][2] == path and seen[2][1] == tmp
          and os.path.dirname(tmpfile) == tmp and size > 10000,
          "replacing() syncs the whole temporary file, renames it into "
          "place, then syncs the directory", f"{seen} {size}")


def test_graph_ticks(tmp):
    """The thread axis has its ticks at the points measured, and both axes
    show plain numbers (matplotlib's own would be 8x10^0, 9x10^0, 10^1)."""
    import graph
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shown = [graph.short_number(x) for x in
             (0.5, 16, 800, 1000, 1500, 80000, 200000, 8000000)]
    check(shown == ["0.5", "16", "800", "1k", "1.5k", "80k", "200k", "8M"],
          "numbers as the axes show them", shown)
    points = [dict(p, threads=p["n"] * p["r"],
                   messages=p["n"] * p["r"] * p["m"])
              for p in FIXED if p["n"] == 2]
    fig, ax = plt.subplots()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(0.7, 9)
    graph.plain_ticks(ax, points, False)
    fig.canvas.draw()
    xs = [t.get_text() for t in ax.get_xticklabels()]
    ys = [t.get_text() for t in ax.get_yticklabels() + ax.get_yticklabels(
        minor=True) if t.get_text()]
    plt.close(fig)
    check(xs == ["8", "16"], "ticks at the threads of the successful points "
          "(8 and 16; the failed one has 8 too), as plain numbers", xs)
    check("1" in ys and "2" in ys and not any("^" in y or "e" in y
                                              for y in ys),
          "the throughput axis shows plain numbers", ys)


def write_points(res, points):
    os.makedirs(res, exist_ok=True)
    for p in points:
        with open(os.path.join(res, f"{p['label']}_N{p['n']}_R{p['r']}"
                               ".json"), "w") as f:
            json.dump(p, f)


BAD_POINTS = [  # (file text, what the error must name)
    (dict(FIXED[0], n="2"), "field 'n'"),
    (dict(FIXED[0], seconds="abc"), "field 'seconds'"),
    (dict(FIXED[0], seconds=[0.1, -1]), "field 'seconds'"),
    (dict(FIXED[0], status="ok", seconds=[]), "field 'seconds'"),
    (dict(FIXED[0], status=None), "field 'status'"),
    (dict(FIXED[0], usched={}), "field 'usched'"),
    (dict(FIXED[0], cpu=9000), "field 'cpu'"),
    (dict(FIXED[0], kernel=["Linux"]), "field 'kernel'"),
    (dict(FIXED[0], libraries=["/lib/libc.so.6"]), "field 'libraries'"),
    (dict(FIXED[0], libraries={"/lib/libc.so.6": "abc"}),
     "field 'libraries'"),
    (dict(FIXED[0], runs="3"), "field 'runs'"),
    (dict(FIXED[0], warmup=-1), "field 'warmup'"),
    (dict(FIXED[0], label="$\\frac$"), "field 'label'"),
    (dict(FIXED[0], label="_hidden"), "field 'label'"),
    (dict(FIXED[0], label="a b"), "field 'label'"),
    (dict(FIXED[0], n=10**400), "field 'n'"),
    (dict(FIXED[0], r=10**200), "field 'r'"),
    (dict(FIXED[0], m=2**41), "field 'm'"),
    (dict(FIXED[0], n=2**20, r=2**13),
     "fields 'n' and 'r': N*R is more than 4294967296 threads"),
    (dict(FIXED[0], seconds=[10**400]), "field 'seconds'"),
    (dict(FIXED[0], seconds=[5e-324]), "field 'seconds'"),
    ("[" * 200000, "cannot read it: nested too deep"),
    ({"n": 2, "r": 8, "m": 1000, "status": "ok", "seconds": [1]},
     "field 'label'"),
    ([1, 2], "not a JSON object"),
    ('{"label": "U-rr", "n": 2', "cannot read it"),
    (dict(FIXED[0], seconds=[1.0]), "the same point (U-rr, N=2, R=4) as "),
]


def test_graph_bad(tmp):
    """Bad input: a one-line error naming the file and field, exit 1."""
    out = os.path.join(tmp, "out")
    for i, (bad, what) in enumerate(BAD_POINTS):
        res = os.path.join(tmp, f"bad{i}")
        write_points(res, FIXED)
        with open(os.path.join(res, "bad.json"), "w") as f:
            f.write(bad if isinstance(bad, str) else json.dumps(bad))
        p = run(GRAPH, "--results", res, "--out", out)
        check(p.returncode == 1 and p.stderr.count("\n") == 1
              and f"{res}/bad.json: {what}" in p.stderr,
              f"bad point ({what}): one line naming file and field, exit 1",
              f"status {p.returncode}: {p.stderr}")
    for i, (bad, what) in enumerate((("[]", "want a JSON object"),
                                     ('{"tools": ["gcc"]}', "with 'tools'"),
                                     ("{", "cannot read it"),
                                     ("[" * 200000, "nested too deep"))):
        res = os.path.join(tmp, f"badm{i}")
        write_points(res, FIXED)
        with open(os.path.join(res, "machine.json"), "w") as f:
            f.write(bad)
        p = run(GRAPH, "--results", res, "--out", os.path.join(res, "o"))
        check(p.returncode == 1 and p.stderr.count("\n") == 1
              and f"{res}/machine.json: " in p.stderr and what in p.stderr
              and not os.path.exists(os.path.join(res, "o")),
              f"bad machine.json ({bad[:20]}): one line naming it, exit 1, "
              "nothing written", f"status {p.returncode}: {p.stderr}")
    res, out = os.path.join(tmp, "good"), os.path.join(tmp, "file")
    write_points(res, FIXED)
    with open(out, "w"):
        pass
    p = run(GRAPH, "--results", res, "--out", out)
    check(p.returncode == 1 and p.stderr == f"graph.py: --out {out} is not "
          "a directory\n", "--out naming a file: one line, exit 1",
          f"status {p.returncode}: {p.stderr}")
    res = os.path.join(tmp, "good")
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, GRAPH, "--results", res, "--out",
                            os.path.join(tmp, "out3")], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=300)
    check(p.returncode == 1 and p.stderr.endswith(
          "\ngraph.py: cannot write to stdout: No space left on device\n")
          and "Traceback" not in p.stderr
          and os.path.exists(os.path.join(tmp, "out3", "report.md")),
          "stdout full: the report is written, its list is not: one line, "
          "exit 1", p.stderr)
    res = os.path.join(tmp, "failed")
    write_points(res, [p for p in FIXED if p["status"] != "ok"])
    p = run(GRAPH, "--results", res, "--out", os.path.join(tmp, "out2"))
    check(p.returncode == 1 and p.stderr == "graph.py: no successful points "
          f"in {res} (1 failed)\n" and not os.path.exists(
              os.path.join(tmp, "out2")),
          "no successful point: one line, exit 1, nothing written",
          f"status {p.returncode}: {p.stderr}")


# Runs graph.py (argv[2:]) with matplotlib's savefig wrapped: for each PNG
# it appends to argv[1] a JSON line per legend entry: the figure's title,
# the entry's text, colour and marker, its line's x and y values, its error
# bars' (low, high) and the y axis' scale.
LEGEND_PROBE = r"""
import json, os, runpy, sys
from matplotlib.figure import Figure
log, script = sys.argv[1], sys.argv[2]
savefig = Figure.savefig
def probe(fig, path, *args, **kwargs):
    if kwargs.get("format", str(path)[-3:]) == "png":
        ax = fig.axes[0]
        with open(log, "a") as f:
            for h, text in zip(*ax.get_legend_handles_labels()):
                line = h[0] if isinstance(h, tuple) else h  # errorbar
                bars = h[2][0].get_segments() if isinstance(h, tuple) else []
                f.write(json.dumps([ax.get_title(), text, line.get_color(),
                                    line.get_marker(),
                                    [float(x) for x in line.get_xdata()],
                                    [float(y) for y in line.get_ydata()],
                                    [(float(b[0][1]), float(b[1][1]))
                                     for b in bars if len(b) == 2],
                                    ax.get_yscale()])
                        + "\n")
    return savefig(fig, path, *args, **kwargs)
Figure.savefig = probe
sys.argv = sys.argv[2:]
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
"""


def legends(tmp, res, *args):
    """{N: [(legend text, colour, marker)]} of graph.py's plots, and
    {(N, legend text): {"x", "y", "bars", "yscale"} of its line}."""
    log = os.path.join(tmp, "legends")
    p = subprocess.run([sys.executable, "-c", LEGEND_PROBE, log, GRAPH,
                        "--results", res, "--out", os.path.join(tmp, "o"),
                        *args], capture_output=True, text=True, timeout=300)
    out, lines = {}, {}
    with open(log) as f:
        for line in f:
            title, text, color, marker, *drawn = json.loads(line)
            n = int(re.search(r"N = (\d+)", title).group(1))
            out.setdefault(n, []).append((text, json.dumps(color), marker))
            lines[n, text] = dict(zip(("x", "y", "bars", "yscale"), drawn))
    return p, out, lines


def test_graph_legends(tmp):
    """One style per implementation in every figure; failures noted."""
    res = os.path.join(tmp, "results")
    write_points(res, [
        point("U-rr", 2, 4, 1000, seconds=[0.004]),
        point("GO", 2, 4, 1000, seconds=[0.004]),
        point("GO", 8, 2, 500, seconds=[0.001]),
        point("GO", 8, 4, 500, "failed", reason="boom"),
        point("GO", 8, 8, 500, seconds=[0.004]),
        point("BOOST", 8, 2, 500, "failed", reason="boom"),
        point("BOOST", 8, 4, 500, "failed", reason="boom"),
        point("POSIX", 4, 2, 500, "failed", reason="boom"),
    ])
    p, leg, lines = legends(tmp, res)
    check(p.returncode == 0 and [x[0] for x in leg.get(2, [])]
          == ["U-rr", "GO"], "a legend without failures: the labels",
          f"{p.stderr}\n{leg}")
    check([x[0] for x in leg.get(8, [])] == ["GO (1 failed)",
                                             "BOOST (2 failed)"],
          "the legend counts an implementation's failed points at that N, "
          "even when none succeeded", leg)
    check([x[0] for x in leg.get(4, [])] == ["POSIX (1 failed)"]
          and p.stderr == "", "a plot of failures only: its legend, no "
          "warning", f"{p.stderr}\n{leg}")
    go8 = lines.get((8, "GO (1 failed)"), {}).get("y", [])
    check(len(go8) == 3 and math.isnan(go8[1]) and go8[0] == 8.0
          and go8[2] == 8.0, "a failed point between two breaks the line, "
          "which does not bridge it", go8)
    go = {n: [x[1:] for x in leg.get(n, []) if x[0].startswith("GO")]
          for n in (2, 8)}
    check(len(go[2]) == 1 and go[2] == go[8],
          "an implementation has the same colour and marker in every plot",
          go)
    st, labels = graph.styles([]), graph.sweep.LABELS
    marks = {st[label]["marker"] for label in labels}
    colours = {st[label]["color"] for label in labels}
    check(len(marks) == len(colours) == len(labels),
          "each of sweep.py's implementations has a marker and a colour of "
          "its own", st)


def test_graph_colours(tmp):
    """Labels not in sweep.py's table (an older sweep's, say) take colours
    no other label of the plot has, the same each time."""
    res = os.path.join(tmp, "results")
    unknown = [f"Z-{i}" for i in range(8)]
    write_points(res, [point(lb, 2, 4, 1000, seconds=[0.004])
                       for lb in graph.sweep.LABELS + tuple(unknown)]
                 + [point(lb, 8, 4, 1000, seconds=[0.004])
                    for lb in unknown])
    p, leg, _ = legends(tmp, res)
    for n, want in ((2, 24), (8, 8)):
        colours = [x[1] for x in leg.get(n, [])]
        check(p.returncode == 0 and len(colours) == want
              and len(set(colours)) == want,
              f"{want - 16 * (n == 2)} unknown labels"
              + " beside sweep.py's 16" * (n == 2)
              + f": {want} lines of {want} colours", f"{p.stderr} {colours}")
    many = [{"label": f"Z-{i:02}"} for i in range(40)]
    st = graph.styles(many)
    pairs = {(st[lb]["color"], str(st[lb]["linestyle"])) for lb in st}
    check(len(pairs) == len(st) == 56 and graph.styles(many[::-1]) == st,
          "56 labels: each its own colour and line style, whatever the "
          "points' order", st)


def test_graph_axes(tmp):
    """x: threads N*R; y: messages/s of the mean run, bars from the slowest
    run to the fastest; log y unless --linear."""
    res = os.path.join(tmp, "results")
    write_points(res, [
        point("U-ll", 2, 4, 1000, seconds=[0.004, 0.002]),  # 8000 messages
        point("U-ll", 2, 8, 1000, seconds=[0.004]),
    ])
    for args, scale in (((), "log"), (("--linear",), "linear")):
        p, _, lines = legends(tmp, res, *args)
        ll = lines.get((2, "U-ll"), {})
        y, bars = ll.get("y", []), ll.get("bars", [])
        check(p.returncode == 0 and ll.get("x") == [8.0, 16.0]
              and len(y) == 2 and math.isclose(y[0], 8 / 3)
              and math.isclose(y[1], 4) and len(bars) == 2
              and all(map(math.isclose, bars[0] + bars[1], (2, 4, 4, 4)))
              and ll.get("yscale") == scale,
              f"{' '.join(args) or 'default'}: x threads, y the mean run's "
              f"million messages/s, bars slowest to fastest, {scale} y",
              f"{p.stderr}\n{ll}")


def test_graph_runs(tmp):
    """Points measured with other --runs or --warmup: a warning with each
    kind's points; none when all were measured alike."""
    for i, (how, warned) in enumerate((
            (((3, 1), (3, 1), (3, 1)), None),
            (((3, 1), (5, 1), (3, 0)), "3 runs after 1 warm-up (1 point), "
             "5 runs after 1 warm-up (1 point), 3 runs after 0 warm-up "
             "(1 point)"),
            (((3, 1), None, (3, 1)), "3 runs after 1 warm-up (2 points), "
             "unknown (1 point)"))):
        res, out = (os.path.join(tmp, f"{d}{i}") for d in ("results", "out"))
        write_points(res, [dict(point("GO", 8, r, 100, seconds=[0.001]),
                                **({"runs": h[0], "warmup": h[1]} if h
                                   else {}))
                           for r, h in zip((2, 20, 200), how)])
        p, md = graph_report(res, out)
        said = [x for x in md.splitlines() if "same runs" in x]
        if warned:
            check(p.returncode == 0 and said == [
                  f"**Warning: the points were not all measured with the "
                  f"same runs**: {warned}."] and "graph.py: warning: the "
                  f"points were not all measured with the same runs: "
                  f"{warned}\n" in p.stderr,
                  f"runs {how}: a warning in the header and on stderr",
                  md[:1200] + p.stderr)
        else:
            check(p.returncode == 0 and not said and not p.stderr,
                  "points measured alike: no warning", md[:1200] + p.stderr)


def test_graph_libraries(tmp):
    """Points that record one shared library with different SHA-256 (the
    C library upgraded during a resumed sweep): a warning naming it, with
    each SHA-256's points; none when they agree or record none (... for
    no field)."""
    libc, ld = "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux.so.2"
    a, b, c = ("a" * 64, "b" * 64, "c" * 64)
    go = ("GO",) * 3  # a program's points (R = 2, 20, 200)
    for i, (what, labels, libs, warned) in enumerate((
            ("the same ones", go, ({libc: a, ld: c},) * 3, []),
            ("none recorded, unknown, one", go, (..., None, {libc: a}), []),
            ("one, not found, none", go, ({libc: a}, {libc: None}, {}), []),
            ("the C library of one point another", go,
             ({libc: a, ld: c}, {libc: b, ld: c}, {libc: a, ld: c}),
             [f"{libc}: SHA-256 {a[:12]} (2 points), {b[:12]} (1 point)"]),
            ("three programs, two libraries each in two versions",
             ("GO", "POSIX", "BOOST"), ({libc: b}, {libc: a, ld: c},
                                       {ld: a}),
             [f"{libc}: SHA-256 {a[:12]} (1 point), {b[:12]} (1 point)",
              f"{ld}: SHA-256 {a[:12]} (1 point), {c[:12]} (1 point)"]))):
        res, out = (os.path.join(tmp, f"{d}{i}") for d in ("results", "out"))
        write_points(res, [dict(point(label, 8, r, 100, seconds=[0.001]),
                                **({} if lib is ... else {"libraries": lib}))
                           for label, r, lib in zip(labels, (2, 20, 200),
                                                    libs)])
        p, md = graph_report(res, out)
        said = [x for x in md.splitlines() if "shared librar" in x]
        if warned:
            check(p.returncode == 0 and said == [
                  "**Warning: the points were not all measured with the "
                  "same shared libraries**: " + "; ".join(warned)
                  + " (each point's file records its libraries)."]
                  and p.stderr == "".join(
                      "graph.py: warning: the points were not all measured "
                      f"with the same shared library {x}\n" for x in warned),
                  f"libraries: {what}: a warning in the header and one line "
                  "on stderr for each library", md[:1200] + p.stderr)
        else:
            check(p.returncode == 0 and not said and not p.stderr,
                  f"libraries: {what}: no warning", md[:1200] + p.stderr)


def test_graph_failures(tmp):
    """The failed points' reasons come in the tables' order: N, then the
    implementations' order, then R as a number."""
    res, out = os.path.join(tmp, "results"), os.path.join(tmp, "out")
    write_points(res, [point("U-ll", 2, 2, 100, seconds=[0.001])] + [
        point(lb, n, r, 100, "failed", reason=f"{lb} {n} {r}")
        for lb, n, r in (("GO", 8, 100), ("GO", 2, 100), ("GO", 2, 2),
                         ("U-rr", 2, 10000), ("U-rr", 2, 50),
                         ("ZZ-new", 2, 4), ("BOOST", 2, 2))])
    p, md = graph_report(res, out)
    got = [x.rsplit(": ", 1)[1] for x in
           md.split("## Failed points\n\n", 1)[-1].splitlines() if x]
    check(p.returncode == 0 and got == [
        "U-rr 2 50", "U-rr 2 10000", "GO 2 2", "GO 2 100", "BOOST 2 2",
        "ZZ-new 2 4", "GO 8 100"], "failed points: by N, then sweep.py's "
          "order of implementations (unknown ones last), then R", got)


# ---- sweep.py --dry-run -----------------------------------------------------

# label: (binary and flags, D, P) as sweep.py's IMPLS must have them
EXPECTED = {
    "U-rr-1T": ("ring --sched rr", 0, 1), "U-rr": ("ring --sched rr", 0, NCPU),
    "U-ll-1T": ("ring --sched ll", 0, 1), "U-ll": ("ring --sched ll", 0, NCPU),
    "U-ll-1K": ("ring --sched ll", 1000, NCPU),
    "U-ll-10K": ("ring --sched ll", 10000, NCPU),
    "POSIX": ("ring-pthread", 0, 1), "POSIX-MT": ("ring-pthread", 0, NCPU),
    "GO1T": ("ring-go", 0, 1),
    "GO": ("ring-go", 0, NCPU), "RUST-async-std": ("ring-async-std", 0, 1),
    "RUST-tokio": ("ring-tokio", 0, 1),
    "RUST-tokio-MT": ("ring-tokio", 0, NCPU),
    "C++1T": ("ring-cpp", 0, 1), "C++": ("ring-cpp-pool", 0, NCPU),
    "BOOST": ("ring-boost", 0, 1),
}
GRIDS = {"quick": ((2, 8), (2, 100, 10000), 800000),
         "full": ((2, 8), (2, 4, 8, 50, 100, 500, 1000, 5000, 10000, 50000,
                           100000, 500000, 1000000), 8000000)}


def dry_points(stdout):
    lines = stdout.strip().splitlines()
    return [ln.split("\t") for ln in lines[1:]]


def point_errors(rows, bindir, messages):
    """What is wrong with the listed points, as text lines."""
    errs = []
    for label, n, r, m, d, p, cmd in rows:
        n, r, m, d, p = map(int, (n, r, m, d, p))
        prog, dd, pp = EXPECTED.get(label, ("?", -1, -1))
        if m != messages // n // r + 100:
            errs.append(f"{label} N={n} R={r}: M={m}")
        if (d, p) != (dd, pp):
            errs.append(f"{label}: D={d} P={p}, want D={dd} P={pp}")
        if cmd != f"{bindir}/{prog} {n} {r} {m} {d} {p}":
            errs.append(f"{label}: command {cmd}")
    return errs


def closed_pipe(*args):
    """sweep.py with args, its reader leaving at once, as head(1) does
    after its lines: its exit status and stderr."""
    p = subprocess.Popen([sys.executable, SWEEP, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=300)
    p.stderr.close()
    return p.returncode, err


def test_dry_run(tmp):
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    fakes = [fake_bin(bindir, b, "echo 0.001") for b in BINARIES]
    res = os.path.join(tmp, "results")
    for prof, (ns, rs, messages) in GRIDS.items():
        p = run(SWEEP, "--dry-run", "--profile", prof, "--bin", bindir,
                "--results", res)
        rows = dry_points(p.stdout)
        check(p.returncode == 0 and p.stdout.startswith("label\tN\tR\tM"),
              f"{prof} dry run lists points", p.stderr)
        check(len(rows) == len(EXPECTED) * len(ns) * len(rs)
              and {r[0] for r in rows} == set(EXPECTED)
              and {(int(r[1]), int(r[2])) for r in rows}
              == {(n, r) for n in ns for r in rs},
              f"{prof}: every implementation at every N and R",
              f"{len(rows)} rows")
        errs = point_errors(rows, bindir, messages)
        check(not errs, f"{prof}: M formula, D, P and commands",
              "\n".join(errs))
    check(not any(calls(f) for f in fakes) and not os.path.exists(res),
          "dry run runs nothing and writes nothing")
    only = os.path.join(tmp, "only")
    os.makedirs(only)
    fake_bin(only, "ring-cpp", "echo 0.001")
    p = run(SWEEP, "--dry-run", "--bin", only, "--results", res)
    rows = dry_points(p.stdout)
    skips = [ln for ln in p.stderr.splitlines() if ln.startswith("skip ")]
    check(p.returncode == 0 and {r[0] for r in rows} == {"C++1T"}
          and len(skips) == len(EXPECTED) - 1,
          "missing binaries skip their implementations, one line each",
          p.stdout + p.stderr)
    p = run(SWEEP, "--dry-run", "--bin", bindir, "--only", "GO,BOOST",
            "--results", res)
    check({r[0] for r in dry_points(p.stdout)} == {"GO", "BOOST"},
          "--only restricts the implementations", p.stdout)
    # The most threads each program takes: 2^32-1 = 3*1431655765, and
    # 2^31-1 for usched's ring, a prime: 2*1073741823 is the most of N=2.
    for only, n, r in (("GO", 3, 1431655765), ("U-ll", 2, 1073741823)):
        p = run(SWEEP, "--dry-run", "--bin", bindir, "--only", only,
                "--ns", str(n), "--rs", str(r), "--results", res)
        check(p.returncode == 0 and len(dry_points(p.stdout)) == 1,
              f"{only} at N*R = {n}*{r}, the most it takes: a point",
              p.stdout + p.stderr)
    for only, r, said in (
            ("GO", "2147483648", "GO takes (ring-go: 4294967295"),
            ("GO,U-ll,U-rr", "1073741824",
             "U-rr and 1 more take (ring: 2147483647")):
        for args in (("--dry-run",), ("--check",), ()):
            p = run(SWEEP, *args, "--bin", bindir, "--only", only, "--ns",
                    "2", "--rs", r, "--results", res)
            check(p.returncode == 2 and p.stdout == ""
                  and p.stderr.splitlines()[-1] == "sweep.py: error: N*R = "
                  f"2*{r} is more than {said} threads at most)"
                  and not any(calls(f) for f in fakes)
                  and not os.path.exists(res),
                  f"{' '.join(args) or 'a sweep'} --only {only} with N*R = "
                  f"2*{r}, more than it takes: refused, naming it, exit 2",
                  p.stdout + p.stderr)
    rc, err = closed_pipe("--dry-run", "--profile", "full", "--bin", bindir,
                          "--results", res)
    check(rc == 1 and "Traceback" not in err
          and "BrokenPipe" not in err and "points to run" in err,
          "dry run into a closed pipe: exit 1, no traceback", err)


# ---- sweep.py for real, with fake binaries ---------------------------------

def load(res, name):
    try:
        with open(os.path.join(res, name + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def sweep(bindir, res, *args, env=None):
    return run(SWEEP, "--bin", bindir, "--results", res, "--runs", "2",
               "--ns", "2", *args, env=env)


def test_sweep(tmp):
    bindir, res = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
    os.makedirs(bindir)
    # The programs' own tree, not the scripts': a commit of its own.
    git = ["git", "-C", bindir, "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "x"],
                 ["rev-parse", "--short", "HEAD"]):
        head = subprocess.run(git + args, capture_output=True, text=True,
                              check=True).stdout.strip()
    posix = fake_bin(bindir, "ring-pthread", "echo 0.004")
    p = sweep(bindir, res, "--rs", "4", "--only", "POSIX")
    pt = load(res, "POSIX_N2_R4")
    check(p.returncode == 0 and pt is not None and pt["status"] == "ok",
          "one-point sweep records an ok point", p.stdout + p.stderr)
    if pt is None:
        return
    check(pt["seconds"] == [0.004, 0.004] and len(pt["wall"]) == 2
          and pt["m"] == 800000 // 2 // 4 + 100 and pt["messages"]
          == 2 * 4 * pt["m"], "point keeps the printed seconds, wall, M",
          json.dumps(pt))
    check(calls(posix) == ["2 4 100100 0 1"] * 3,
          "warm-up plus runs, with the right arguments", calls(posix))
    check(re.search(r"\[1/1\] POSIX N=2 R=4 .* elapsed .*remaining", p.stdout),
          "progress line with elapsed and remaining", p.stdout)
    p = sweep(bindir, res, "--rs", "4", "--only", "POSIX")
    check(p.returncode == 0 and len(calls(posix)) == 3
          and "0 points to run, 1 already done" in p.stdout,
          "a second run resumes: nothing new", p.stdout + p.stderr)
    check(pt.get("usched") == head and pt.get("binary_sha256") == digest(posix)
          and pt.get("cpu") == cpu_model() and pt.get("libraries") == {},
          "the point records the commit of the tree --bin is in, the "
          "binary's SHA-256, the CPU, and no shared library (a script)",
          json.dumps(pt))
    machine = load(res, "machine") or {}
    check(machine.get("usched") == head, "so does machine.json",
          json.dumps(machine))
    for args, why in ((("--runs", "3"), "more runs"),
                      (("--runs", "3", "--warmup", "0"), "another warm-up"),
                      (("--runs", "3", "--warmup", "0"), None)):
        p = sweep(bindir, res, "--rs", "4", "--only", "POSIX", *args)
        pt = load(res, "POSIX_N2_R4") or {}
        if why:
            check("1 points to run, 0 already done" in p.stdout
                  and pt.get("runs") == 3 and len(pt.get("seconds")) == 3,
                  f"{why}: the point is measured again", p.stdout + p.stderr)
        else:
            check("0 points to run, 1 already done" in p.stdout,
                  "the same settings again: nothing new", p.stdout)
    # A point saved with other flags (an older IMPLS, say) is not reused.
    path = os.path.join(res, "POSIX_N2_R4.json")
    with open(path) as f:
        old = json.load(f)
    with open(path, "w") as f:
        json.dump(dict(old, command=old["command"][:1] + ["-x"]
                       + old["command"][1:]), f)
    p = sweep(bindir, res, "--rs", "4", "--only", "POSIX", "--runs", "3",
              "--warmup", "0")
    check("1 points to run, 0 already done" in p.stdout,
          "a point measured with other arguments is measured again",
          p.stdout + p.stderr)
    fake_bin(bindir, "ring-pthread", "echo 0.005")
    p = sweep(bindir, res, "--rs", "4", "--only", "POSIX")
    check("1 points to run, 0 already done" in p.stdout
          and (load(res, "POSIX_N2_R4") or {}).get("seconds")
          == [0.005, 0.005], "a changed binary: the point is measured again",
          p.stdout + p.stderr)

    fake_bin(bindir, "ring-cpp", 'echo "no luck" >&2; exit 1')
    fake_bin(bindir, "ring-boost", "kill -SEGV $$")
    fake_bin(bindir, "ring-go", "echo 0.004; echo 0.005")
    fake_bin(bindir, "ring-cpp-pool", "sleep 30")
    p = sweep(bindir, res, "--rs", "4,8", "--timeout", "2", "--only",
              "C++1T,BOOST,POSIX,GO1T,C++")
    check(p.returncode == 0 and "8 failed" in p.stdout,
          "failures are recorded and the sweep goes on", p.stdout + p.stderr)
    reasons = {k: (load(res, k) or {}).get("reason") or "" for k in
               ("C++1T_N2_R4", "BOOST_N2_R8", "GO1T_N2_R4", "C++_N2_R8")}
    check("exit status 1" in reasons["C++1T_N2_R4"]
          and "no luck" in reasons["C++1T_N2_R4"],
          "non-zero exit: status and stderr kept", reasons)
    check("SIGSEGV" in reasons["BOOST_N2_R8"], "crash: signal named",
          reasons)
    check("bad output" in reasons["GO1T_N2_R4"], "bad output is a failure",
          reasons)
    check("timeout" in reasons["C++_N2_R8"], "timeout is a failure", reasons)
    check((load(res, "POSIX_N2_R8") or {}).get("status") == "ok",
          "points after failures still run")
    # Real-time signals (32-64 but SIGRTMIN and SIGRTMAX) have no name.
    fake_bin(bindir, "ring-boost", "kill -35 $$")
    p = sweep(bindir, res, "--rs", "32", "--only", "BOOST,POSIX")
    check(p.returncode == 0 and "(killed by signal 35)" in (
        (load(res, "BOOST_N2_R32") or {}).get("reason") or "")
          and (load(res, "POSIX_N2_R32") or {}).get("status") == "ok",
          "killed by a signal of no name: the point fails, the signal "
          "named by number, and the sweep goes on", p.stdout + p.stderr)
    p = sweep(bindir, res, "--rs", "4,8", "--only", "C++1T")
    check("0 points to run, 2 already done" in p.stdout,
          "failed points count as done", p.stdout)
    p = sweep(bindir, res, "--rs", "4,8", "--only", "C++1T", "--retry-failed")
    check("2 points to run, 0 already done" in p.stdout,
          "--retry-failed runs them again", p.stdout + p.stderr)
    fake_bin(bindir, "ring-cpp", "echo 0.002")
    p = sweep(bindir, res, "--rs", "4,8", "--only", "C++1T")
    check((load(res, "C++1T_N2_R4") or {}).get("status") == "ok",
          "failed points of a changed binary run again", p.stdout + p.stderr)
    p = sweep(bindir, res, "--rs", "16", "--only", "C++1T",
              "--mem-reserve", str(1 << 40))
    check("out of memory" in ((load(res, "C++1T_N2_R16") or {})
                              .get("reason") or ""),
          "memory below --mem-reserve fails the point", p.stdout + p.stderr)


def test_sweep_rebuilt(tmp):
    """A program rebuilt during a sweep (make test runs make bench), at
    another commit: each point records the binary and commit it ran."""
    bindir, res = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
    os.makedirs(bindir)
    git = ["git", "-C", bindir, "-c", "user.name=t", "-c", "user.email=t@t"]

    def head():
        return subprocess.run(git + ["rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(git + args, check=True)
    first = head()
    # Its first run replaces it with another, at a new commit, as a
    # make bench after a git pull would.
    posix = fake_bin(bindir, "ring-pthread",
                     'echo 0.004; [ -e "$0.v2" ] || { touch "$0.v2"; '
                     '{ cat "$0"; echo "# v2"; } >"$0.new"; '
                     'chmod +x "$0.new"; mv "$0.new" "$0"; '
                     + " ".join(map(shlex.quote, git)) +
                     ' commit -q --allow-empty -m y; }')
    old = digest(posix)
    p = sweep(bindir, res, "--only", "POSIX", "--rs", "4,8", "--runs", "1",
              "--warmup", "0")
    new = digest(posix)
    got = [tuple((load(res, f"POSIX_N2_R{r}") or {}).get(k)
                 for k in ("binary_sha256", "usched")) for r in (4, 8)]
    check(p.returncode == 0 and got == [(old, first), (new, head())]
          and old != new and first != head(),
          "a program rebuilt during the sweep: each point records the "
          "binary and the commit it ran", f"{got} {old} {new} {p.stderr}")


def test_sweep_moved(tmp):
    """A saved point measured on another CPU or kernel (a VM moved, a
    kernel upgraded, results copied from another machine) is measured
    again on a resume, which says so; one of this machine is kept."""
    bindir, res = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
    os.makedirs(bindir)
    posix = fake_bin(bindir, "ring-pthread", "echo 0.004")
    p = sweep(bindir, res, "--rs", "4,8", "--only", "POSIX")
    here = {k: (load(res, "POSIX_N2_R4") or {}).get(k)
            for k in ("cpu", "kernel")}
    check(p.returncode == 0 and here == {
          "cpu": cpu_model(),
          "kernel": f"{platform.system()} {platform.release()}"},
          "a point records the CPU and kernel it was measured on", here)
    path = os.path.join(res, "POSIX_N2_R4.json")
    for key, old, said in (
            ("cpu", "Other CPU", f"CPU Other CPU, now {here['cpu']}"),
            ("kernel", "Linux 0.1", f"kernel Linux 0.1, now "
             f"{here['kernel']}"),
            ("kernel", None, f"kernel not recorded, now {here['kernel']}")):
        pt = load(res, "POSIX_N2_R4")
        with open(path, "w") as f:
            json.dump({k: v for k, v in dict(pt, **{key: old}).items()
                       if v is not None}, f)
        ran = len(calls(posix))
        p = sweep(bindir, res, "--rs", "4,8", "--only", "POSIX")
        pt = load(res, "POSIX_N2_R4") or {}
        check(p.returncode == 0 and "1 points to run, 1 already done"
              in p.stdout and len(calls(posix)) == ran + 3
              and p.stderr == "sweep.py: 1 saved point was measured on "
              "another machine or with other libraries (POSIX_N2_R4: "
              f"{said}): measuring it again\n" and pt.get(key) == here[key],
              f"a point saved with {key} {old}: measured again, saying so",
              p.stdout + p.stderr)
    for r in (4, 8):
        pt = load(res, f"POSIX_N2_R{r}")
        with open(os.path.join(res, f"POSIX_N2_R{r}.json"), "w") as f:
            json.dump(dict(pt, cpu="Other CPU"), f)
    p = sweep(bindir, res, "--rs", "4,8", "--only", "POSIX", "--dry-run")
    check(p.returncode == 0 and len(dry_points(p.stdout)) == 2
          and p.stderr.startswith("sweep.py: 2 saved points were measured "
                                  "on another machine or with other "
                                  "libraries (POSIX_N2_R4: CPU Other CPU, "
                                  "now ")
          and p.stderr.count("\n") == 2 and ", ...): measuring them "
          "again\n2 points to run" in p.stderr,
          "two such points, in a dry run: listed, and said in one line",
          p.stdout + p.stderr)


def test_sweep_libraries(tmp):
    """A saved point whose program now loads other shared libraries (an
    upgrade of the C library, say), or that records none, is measured
    again on a resume, which says so; ldd missing or failing loses
    nothing."""
    bindir, res = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
    libs, tools = os.path.join(tmp, "lib"), os.path.join(tmp, "tools")
    for d in (bindir, libs, tools):
        os.makedirs(d)
    for name in ("libfake.so.1", "ld-fake.so.2"):
        with open(os.path.join(libs, name), "w") as f:
            f.write(name)
    posix = fake_bin(bindir, "ring-pthread", "echo 0.004")
    # ldd, faked: what glibc's prints for a program of two libraries, one
    # not found.
    fake_bin(tools, "ldd", "cat <<EOF\n"
             "\tlinux-vdso.so.1 (0x00007ffd5e1f2000)\n"
             f"\tlibfake.so.1 => {libs}/libfake.so.1 (0x00007f5e1f200000)\n"
             "\tlibgone.so.3 => not found\n"
             f"\t{libs}/ld-fake.so.2 (0x00007f5e1f400000)\nEOF")
    env = dict(os.environ, PATH=tools + os.pathsep + os.environ["PATH"])
    fake, ld = (os.path.join(libs, x) for x in ("libfake.so.1",
                                                "ld-fake.so.2"))
    p = sweep(bindir, res, "--rs", "4,8", "--only", "POSIX", env=env)
    pt = load(res, "POSIX_N2_R4") or {}
    check(p.returncode == 0 and pt.get("libraries") == {
          fake: digest(fake), "libgone.so.3": None, ld: digest(ld)}
          and calls(os.path.join(tools, "ldd")) == [posix] * 2,
          "a point records each shared library its program loads, as ldd "
          "finds it, and its SHA-256", p.stderr + json.dumps(pt))
    p = sweep(bindir, res, "--rs", "4,8", "--only", "POSIX", env=env)
    check(p.returncode == 0 and "0 points to run, 2 already done" in p.stdout
          and p.stderr == "", "the same libraries: nothing new",
          p.stdout + p.stderr)
    old = digest(fake)
    with open(fake, "w") as f:
        f.write("libfake.so.1, upgraded")
    ran = len(calls(posix))
    p = sweep(bindir, res, "--rs", "4,8", "--only", "POSIX", env=env)
    check(p.returncode == 0 and "2 points to run, 0 already done" in p.stdout
          and len(calls(posix)) == ran + 6
          and p.stderr == "sweep.py: 2 saved points were measured on "
          "another machine or with other libraries (POSIX_N2_R4: shared "
          f"library {fake} SHA-256 {old[:12]}, now SHA-256 "
          f"{digest(fake)[:12]}, ...): measuring them again\n"
          and all((load(res, f"POSIX_N2_R{r}") or {}).get("libraries", {})
                  .get(fake) == digest(fake) for r in (4, 8)),
          "a library changed: its points are measured again, saying so "
          "in one line", p.stdout + p.stderr)
    path = os.path.join(res, "POSIX_N2_R4.json")
    pt = load(res, "POSIX_N2_R4")
    with open(path, "w") as f:
        json.dump({k: v for k, v in pt.items() if k != "libraries"}, f)
    p = sweep(bindir, res, "--rs", "4,8", "--only", "POSIX", env=env)
    check(p.returncode == 0 and "1 points to run, 1 already done" in p.stdout
          and p.stderr == "sweep.py: 1 saved point was measured on another "
          "machine or with other libraries (POSIX_N2_R4: shared libraries "
          "not recorded, now libfake.so.1, libgone.so.3, ld-fake.so.2): "
          "measuring it again\n" and "libraries" in (load(res, "POSIX_N2_R4")
                                                    or {}),
          "a point that records no libraries (of an older sweep): measured "
          "again, saying so", p.stdout + p.stderr)
    # An ldd that cannot tell: the libraries are unknown, not none.
    fake_bin(tools, "ldd", 'echo "ldd: cannot run $1" >&2; exit 1')
    for runs, why in ((2, "shared libraries libfake.so.1, libgone.so.3, "
                       "ld-fake.so.2, now unknown (ldd could not tell)"),
                      (0, None)):
        p = sweep(bindir, res, "--rs", "4,8", "--only", "POSIX", env=env)
        check(p.returncode == 0 and f"{runs} points to run" in p.stdout
              and p.stderr == ("" if why is None else "sweep.py: 2 saved "
                               "points were measured on another machine or "
                               "with other libraries (POSIX_N2_R4: "
                               f"{why}, ...): measuring them again\n")
              and (load(res, "POSIX_N2_R8") or {}).get("libraries", 0)
              is None, f"ldd fails{' again' * (why is None)}: "
              + ("measured again, saying so" if why else "nothing new, "
                 "nothing said"), p.stdout + p.stderr)
    # The real ldd, and none.
    sh = graph.sweep.libraries("/bin/sh") or {}
    libc = [x for x in sh if os.path.basename(x).startswith("libc.so")]
    check(len(libc) == 1 and sh[libc[0]] == digest(libc[0]),
          "ldd's libraries of /bin/sh: its C library, with its SHA-256",
          sh)
    path = os.environ["PATH"]
    try:
        os.environ["PATH"] = tools  # its fake ldd gone
        os.remove(os.path.join(tools, "ldd"))
        graph.sweep.libraries.cache_clear()
        got = graph.sweep.libraries("/bin/sh")
    finally:
        os.environ["PATH"] = path
        graph.sweep.libraries.cache_clear()
    check(got is None, "without ldd: the libraries are unknown", got)


def test_sweep_warmup(tmp):
    """The warm-up runs' printed seconds are not among the point's."""
    bindir, res = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
    os.makedirs(bindir)
    posix = fake_bin(bindir, "ring-pthread",
                     'echo "0.00$(wc -l < "$0.calls")"')
    p = sweep(bindir, res, "--rs", "4", "--only", "POSIX", "--warmup", "2")
    pt = load(res, "POSIX_N2_R4") or {}
    check(p.returncode == 0 and len(calls(posix)) == 4
          and pt.get("seconds") == [0.003, 0.004],
          "two warm-up runs (0.001, 0.002 s) and two timed: the point "
          "keeps the timed runs' seconds", p.stdout + p.stderr
          + json.dumps(pt))


def test_sweep_closed_pipe(tmp):
    """A sweep whose reader leaves says so, not that it cannot write."""
    bindir, res = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
    os.makedirs(bindir)
    fake_bin(bindir, "ring-pthread", "echo 0.004")
    rc, err = closed_pipe("--bin", bindir, "--results", res, "--only",
                          "POSIX", "--rs", "4,8", "--runs", "1", "--warmup",
                          "0")
    check(rc == 1 and "Traceback" not in err
          and "cannot write" not in err and "output closed" in err,
          "a sweep into a closed pipe: exit 1, 'output closed'", err)
    args = [sys.executable, SWEEP, "--bin", bindir, "--results", res,
            "--only", "POSIX", "--rs", "16", "--runs", "1", "--warmup", "0"]
    with open("/dev/full", "w") as full:
        p = subprocess.run(args, stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=300)
    check(p.returncode == 1 and "Traceback" not in p.stderr
          and "sweep.py: cannot write to stdout: No space left on device; "
          "finished points are in " in p.stderr,
          "a sweep whose stdout is full: exit 1, blaming stdout, not the "
          "results", p.stderr)
    for what, want in (("closed", "stdout is closed"),
                       ("full", "cannot write the list: No space left on "
                        "device")):
        with open("/dev/full", "w") as full:
            p = subprocess.run(
                args[:2] + ["--dry-run"] + args[2:], stdout=full,
                stderr=subprocess.PIPE, text=True, timeout=300,
                preexec_fn=(lambda: os.close(1)) if what == "closed"
                else None)
        check(p.returncode == 1 and p.stderr == f"sweep.py: {want}\n",
              f"--dry-run with stdout {what}: one line, exit 1", p.stderr)


def test_sweep_bad_input(tmp):
    """A program that prints inf, and a saved point nested past Python's
    recursion limit: a failed point, and a point to run again."""
    bindir, res = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
    os.makedirs(bindir)
    fake_bin(bindir, "ring-pthread", "echo inf")
    p = sweep(bindir, res, "--rs", "4", "--only", "POSIX")
    pt = load(res, "POSIX_N2_R4") or {}
    check(p.returncode == 0 and pt.get("status") == "failed"
          and "a time outside 1e-09 to 1e+09 s" in pt.get("reason", ""),
          "a program that prints inf: the point fails, with why",
          json.dumps(pt) + p.stderr)
    fake_bin(bindir, "ring-pthread", "echo 0.004")
    with open(os.path.join(res, "POSIX_N2_R4.json"), "w") as f:
        f.write("[" * 200000)
    p = sweep(bindir, res, "--rs", "4", "--only", "POSIX")
    check(p.returncode == 0 and "Traceback" not in p.stderr
          and "1 points to run, 0 already done" in p.stdout
          and (load(res, "POSIX_N2_R4") or {}).get("status") == "ok",
          "a saved point nested too deep to read: measured again",
          p.stdout + p.stderr)
    import resource
    files = sorted(os.listdir(res))
    with open(os.path.join(res, "machine.json")) as f:
        machine = f.read()
    p = subprocess.run(
        [sys.executable, SWEEP, "--bin", bindir, "--results", res, "--runs",
         "2", "--ns", "2", "--rs", "8", "--only", "POSIX"],
        capture_output=True, text=True, timeout=300,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE,
                                              (100, 100)))
    check(p.returncode == 1 and p.stderr == "sweep.py: cannot write the "
          f"results: {res}/machine.json: File too large\n"
          and sorted(os.listdir(res)) == files
          and machine == read_text(os.path.join(res, "machine.json")),
          "results that cannot be written (files of at most 100 bytes): "
          "one line naming the file, exit 1, the old one whole, no "
          "temporary file", f"{p.stderr} {sorted(os.listdir(res))}")


def stop_at_run(cmd, pidfile, sig):
    """Runs cmd until the fake program writes its pid, sends it sig;
    (exit status, stderr, whether the program outlived it)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        if os.path.exists(pidfile):
            break
        time.sleep(0.1)
    time.sleep(0.2)
    proc.send_signal(sig)
    err = proc.communicate(timeout=30)[1]
    time.sleep(0.2)
    left = alive(pidfile)
    if left:  # not to leave it to the next test
        with open(pidfile) as f:
            os.kill(int(f.read()), signal.SIGKILL)
    return proc.returncode, err, left


def test_interrupt(tmp):
    """hyperfine runs in a session of its own: a hang-up (the terminal or
    ssh session gone) must stop it as SIGTERM does."""
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        name, res = sig.name, os.path.join(tmp, "results" + sig.name)
        pidfile = os.path.join(tmp, "pid" + name)
        fake_bin(bindir, "ring-cpp", f'echo $$ > "{pidfile}"; sleep 60')
        rc, err, left = stop_at_run(
            [sys.executable, SWEEP, "--bin", bindir, "--results", res,
             "--ns", "2", "--rs", "4", "--only", "C++1T"], pidfile, sig)
        check(rc == 130 and "interrupted" in err
              and load(res, "C++1T_N2_R4") is None,
              f"{name} stops the sweep without recording the point", err)
        check(not left, "and kills the running benchmark")


def test_perf_interrupt(tmp):
    """perf.py stopped (timeout(1), a hang-up, Ctrl-C) leaves nothing
    running (with --big, a 17.5 GiB ring) and prints no traceback."""
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        pidfile = os.path.join(tmp, "pid" + sig.name)
        fake_bin(bindir, "switch", f'echo $$ > "{pidfile}"; exec sleep 60')
        rc, err, left = stop_at_run([sys.executable, PERF, "--bin", bindir,
                                     "--no-valgrind"], pidfile, sig)
        check(rc == 130 and "perf: interrupted" in err
              and "Traceback" not in err and not left,
              f"perf.py: {sig.name} stops it with the program it ran, "
              "exit 130", f"exit {rc}, outlived: {left}\n{err}")


def test_profiles(tmp):
    """A quick sweep into a directory of full-profile points (hours of
    work) stops before it replaces any, unless told to; each profile has
    its own directory by default."""
    bindir, res = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
    os.makedirs(bindir)
    fake_bin(bindir, "ring-cpp", "echo 0.004")
    base = ["--bin", bindir, "--results", res, "--ns", "2", "--rs", "2",
            "--only", "C++1T"]
    run(SWEEP, *base, "--profile", "full")
    full = load(res, "C++1T_N2_R2")
    p = run(SWEEP, *base)
    check(full is not None and p.returncode == 2
          and load(res, "C++1T_N2_R2") == full
          and f"{res} holds successful points measured with another M"
          in p.stderr and f"(1, such as C++1T_N2_R2: M={full['m']}, now "
          "200100)" in p.stderr and "--replace" in p.stderr,
          "a quick sweep over a full one's points stops, naming one, and "
          "keeps them", p.stderr)
    # --check, as make report runs it before it builds the programs.
    gone = base[:1] + [os.path.join(tmp, "none")] + base[2:]
    for args, rc, why in ((base, 2, "programs built"),
                          (gone, 2, "no program built")):
        p = run(SWEEP, *args, "--check")
        check(p.returncode == rc and p.stdout == "" and p.stderr.count(
              "\n") == 1 and "measured with another M" in p.stderr
              and load(res, "C++1T_N2_R2") == full,
              f"--check, {why}: the same stop, nothing run", p.stderr)
    for args, why in ((gone + ["--results", os.path.join(tmp, "new")],
                       "no program built, no results"),
                      (gone + ["--profile", "full"], "the same M")):
        p = run(SWEEP, *args, "--check")
        check(p.returncode == 0 and p.stdout == p.stderr == ""
              and load(res, "C++1T_N2_R2") == full,
              f"--check, {why}: exit 0, nothing said", p.stderr)
    p = run(SWEEP, *base, "--replace")
    now = load(res, "C++1T_N2_R2")
    check(p.returncode == 0 and now is not None and now["m"] == 200100,
          "--replace measures them again", p.stderr)
    sw = __import__("sweep")
    check([sw.parse_args(a).results for a in ([], ["--profile", "full"])]
          == [os.path.join(ROOT, "report", "results-" + x)
              for x in ("quick", "full")],
          "sweep.py's default results directory is report/results-PROFILE")


def test_sweep_bounds(tmp):
    """A time graph.py would refuse fails the point: else one odd number
    stops the report, and the sweep, taking it as done, keeps it."""
    bindir, res = os.path.join(tmp, "bin"), os.path.join(tmp, "results")
    os.makedirs(bindir)
    for t in ("1e-12", "2e9"):
        fake_bin(bindir, "ring-cpp", f"echo {t}")
        run(SWEEP, "--bin", bindir, "--results", res, "--ns", "2", "--rs",
            "2", "--only", "C++1T", "--runs", "2", "--retry-failed")
        pt = load(res, "C++1T_N2_R2")
        check(pt is not None and pt["status"] == "failed"
              and "a time outside 1e-09 to 1e+09 s" in pt["reason"],
              f"a time of {t} s fails the point", json.dumps(pt)[:300])


def alive(pidfile):
    """Whether the process whose pid the file holds runs (zombies don't)."""
    try:
        with open(pidfile) as f:
            pid = int(f.read())
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError, IndexError):
        return False


def test_matplotlib_sh(tmp):
    """matplotlib.sh, where only a venv can have matplotlib (not root, the
    python3 on PATH without it, pip refusing), prints a python3 that runs
    from any directory: an absolute path, in a tree whose path has a
    space."""
    tree, tools = os.path.join(tmp, "a tree"), os.path.join(tmp, "tools")
    os.makedirs(os.path.join(tree, "scripts"))
    os.makedirs(tools)
    script = os.path.join(tree, "scripts", "matplotlib.sh")
    shutil.copy(os.path.join(ROOT, "scripts", "matplotlib.sh"), script)
    for name, body in (
            ("id", "echo 1000"),
            # venv's python3 has matplotlib and installs it
            ("python3", 'case "$*" in "-m venv build/venv") mkdir -p '
             'build/venv/bin && printf "#!/bin/sh\n" >build/venv/bin/'
             'python3 && chmod +x build/venv/bin/python3;; *) exit 1;; '
             'esac')):
        with open(os.path.join(tools, name), "w") as f:
            f.write(f"#!/bin/sh\n{body}\n")
        os.chmod(os.path.join(tools, name), 0o755)
    p = subprocess.run([script], capture_output=True, text=True, cwd=tmp,
                       timeout=60, env=dict(os.environ, PATH=tools
                                            + os.pathsep + "/usr/bin:/bin"))
    want = os.path.join(tree, "build", "venv", "bin", "python3")
    check(p.returncode == 0 and p.stdout == want + "\n"
          and os.access(want, os.X_OK),
          "matplotlib.sh run from elsewhere prints its venv's python3 as "
          "an absolute path", f"exit {p.returncode}: {p.stdout}{p.stderr}")


# ---- bad command lines -----------------------------------------------------

BAD = [
    (SWEEP, "--timeout", "-1"), (SWEEP, "--timeout", "0"),
    (SWEEP, "--timeout", "soon"), (SWEEP, "--profile", "huge"),
    (SWEEP, "--only", "NOPE"), (SWEEP, "--only", ""), (SWEEP, "--runs", "0"),
    (SWEEP, "--warmup", "-1"), (SWEEP, "--runs", "99999999999999999999"),
    (SWEEP, "--warmup", "1000001"), (SWEEP, "--ns", "1"),
    (SWEEP, "--rs", "2,x"),
    (SWEEP, "--bogus"), (SWEEP, "extra"), (GRAPH, "--bogus"), (GRAPH, "x"),
    # graph.py would refuse such points: the sweep does not measure them.
    (SWEEP, "--rs", "4294967297"), (SWEEP, "--ns", "65536", "--rs", "65537"),
    (PERF, "--runs", "0"), (PERF, "--runs", "1000001"), (PERF, "--rs", "2,x"),
    (PERF, "--rs", "0"), (PERF, "--rs", "2,536870913"),
]


CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC
stepping\t: 1

processor\t: 1
cpu family\t: 99
model name\t: Other CPU
"""
ARM_CPUINFO = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c
CPU revision\t: 1
"""
# sysfs cache directories of one CPU: (level, type, size)
CACHES = {"index0": ("1", "Data", "32K"),
          "index1": ("1", "Instruction", "32K"),
          "index2": ("2", "Unified", "512K"),
          "index3": ("3", "Unified", "32768K"),
          "uevent": None}  # a file beside them, as in sysfs


def test_cpu_model(tmp):
    """The CPU line names family, model, stepping and the caches, taken
    from the first processor of cpuinfo and from sysfs."""
    cpuinfo, caches = os.path.join(tmp, "cpuinfo"), os.path.join(tmp, "c")
    with open(cpuinfo, "w") as f:
        f.write(CPUINFO)
    os.mkdir(caches)
    for name, cache in CACHES.items():
        if cache is None:
            open(os.path.join(caches, name), "w").close()
            continue
        os.mkdir(os.path.join(caches, name))
        for field, value in zip(("level", "type", "size"), cache):
            with open(os.path.join(caches, name, field), "w") as f:
                f.write(value + "\n")
    got = cpu_model(cpuinfo, caches)
    check(got == "AMD EPYC (family 25 model 1 stepping 1; L1d 32K, "
          "L2 512K, L3 32768K)", "the CPU, its identity and caches", got)
    got = cpu_model(cpuinfo, os.path.join(tmp, "none"))
    check(got == "AMD EPYC (family 25 model 1 stepping 1)",
          "without sysfs caches, the identity alone", got)
    with open(cpuinfo, "w") as f:
        f.write("processor\t: 0\nmodel name\t: Plain CPU\n")
    got = cpu_model(cpuinfo, os.path.join(tmp, "none"))
    check(got == "Plain CPU", "a cpuinfo with a name only gives the name",
          got)
    with open(cpuinfo, "w") as f:
        f.write(ARM_CPUINFO)
    got = cpu_model(cpuinfo, os.path.join(tmp, "none"))
    check(got == f"{platform.machine()} (implementer 0x41 part 0xd0c "
          "variant 0x3 revision 1)",
          "Arm's cpuinfo, without a name: the machine and Arm's fields", got)


def test_bad_args():
    for script, *args in BAD:
        p = run(script, *args, "--dry-run") if script == SWEEP \
            else run(script, *args)
        check(p.returncode == 2 and "usage:" in p.stderr,
              f"{os.path.basename(script)} {' '.join(args)}: usage, exit 2",
              f"status {p.returncode}: {p.stderr}")


PERF_FAKES = {
    # usched's ring takes 1 s, and tells -v figures on stderr; with half
    # the cycles of an R of --rs, 0.8 s, and it notes its allowed CPUs.
    "ring": 'case "$*" in *-v*) echo "switches: 1000 (1 ns each)" >&2; '
            'echo "processor 0: max stack $((112 + $7)) B" >&2; '
            'echo "peak RSS: 1000 KiB, 150.0 bytes per thread" >&2; '
            'echo "CPU time: user 0.70 s, system 0.30 s" >&2;; esac\n'
            'case "$*" in *-f*) echo 0.75;; *" 1000 1") echo 1.00002;;\n'
            '*" 8 1 "*|*" 8 50 "*|*" 8 5000 "*) echo 0.8; echo "$4 $(sed -n '
            '"s/^Cpus_allowed_list:\\t//p" /proc/$$/status)" >> "$0.cpus";;\n'
            '*) echo 1.0;; esac',
    "ring-lto": "echo 0.625",
    # 0.9 s and 0.5 s by turns: a figure is a program's best round.
    "ring-cpp": '[ $(($(wc -l < "$0.calls") % 2)) = 1 ] && echo 0.9 '
                '|| echo 0.5',
    "ring-boost": "echo 2.0",
    # 8 s at R=2 and 100; more threads do not fit.
    "ring-go": 'case "$*" in "8 2 "*|"8 100 "*) echo 8.0;; *) '
               'echo "ring-go: out of memory" >&2; exit 1;; esac',
    # 13 ns (12 with -f, 4 less with --floor) + 1 ns per 100 extra bytes;
    # twice that per byte in a cycle of more than 2 threads, 2.5 times at
    # a stride.
    "switch": 't=2; s=1; b=13; f=0; while [ $# -gt 0 ]; do case "$1" in\n'
              '-t) t=$2; shift 2;; -s) s=$2; shift 2;; -n) shift 2;;\n'
              '-f) b=12; shift;; --floor) f=4; shift;; *) break;; esac; done\n'
              'echo "   saved B  ns/switch"; k=100; [ $t = 2 ] || k=50\n'
              '[ $s = 1 ] || k=40\n'
              'for d in "$@"; do echo "$((128 + d)) $((b - f + d / k))"; '
              'done',
    "create": "echo 20.0",
}


def shift_fake(k, sign=1):
    """ring-shift-K: at R=2, 1 s + K ms, all slower than ring; at R=100,
    0.5 s + K ms, all faster: the median is of the eight, not ring's. D
    costs more than in ring (20 us at D=1000, none at 10000): 20 + K/8 us
    at D=1000 (with sign -1, it saves as much), 40 + K/2 at 10000; the
    medians over the eight, 27 and 68 us, are not ring's."""
    arms = ""
    for r, secs in (("8 2", 1 + k / 1000), ("8 100", 0.5 + k / 1000)):
        for d, us in ((1000, sign * (20 + k / 8)), (10000, 40 + k / 2),
                      (0, 0)):
            t = secs + us / 1e6
            arms += '*" %s "*" %d 1") echo %.6f;;\n' % (r, d, t)
    return 'case "$*" in\n%sesac' % arms


PERF_FAKES.update(("ring-shift-%d" % k, shift_fake(k))
                  for k in range(16, 113, 16))


# Cachegrind, faked: a run of the ring with M rounds "counts" 1000 + k*16*M
# instructions (k a message: 75 for ring, 70 for ring -f, 66 for ring-lto,
# 36 for C++20),
# some in functions the annotation lists (one in a file whose path has a
# space, one of no known function), and a second event after them; Boost
# fails, and so does every program with FAKE_VALGRIND_FAILS set; a switch
# run of -n K counts 1000 + 142*2*K, 80*2*K with --floor.
FAKE_VALGRIND = r"""#!/usr/bin/env python3
import os, sys
args = sys.argv[1:]
out = [a.split("=", 1)[1] for a in args
       if a.startswith("--cachegrind-out-file=")][0]
prog = args[[a.startswith("--") for a in args].index(False):]
if os.environ.get("FAKE_VALGRIND_FAILS") or "--tool=cachegrind" not in args:
    sys.exit(3)
name, rest = os.path.basename(prog[0]), prog[1:]
fns = []
if name == "switch":
    k = 2 * int(rest[rest.index("-n") + 1])
    per = 80 if "--floor" in rest else 142
    fns = [("bench/floor.c:floor_step", 50 * k + 7)] if per == 80 else [
        ("usched.c:usched_suspend", 40 * k), ("???:???", 2 * k)]
else:
    k = int(rest[-3]) * 16
    per = {"ring": 70 if "-f" in rest else 75, "ring-lto": 66,
           "ring-cpp": 36}.get(name)
    if name == "ring" and "-f" not in rest:
        fns = [("bench/ring.c:rounds_ll", 27 * k + 500),
               ("ll.c:ll_wake", 13 * k), ("/a b/sched/proc.h:ll_wake", k)]
if per is None:
    sys.exit(1)
with open(out, "w") as f:
    f.write("summary: %d 77\n" % (1000 + k * per))
    for where, n in fns:
        f.write("fn %s %d\n" % (where, n))
"""
FAKE_ANNOTATE = r"""#!/usr/bin/env python3
import sys
for line in open(sys.argv[-1]):
    if line.startswith("fn "):
        where, n = line[3:].rsplit(" ", 1)
        print("%s (10.00%%)  %s" % ("{:,}".format(int(n)), where))
"""


def fake_tools(tmp):
    """The fake valgrind and cg_annotate, and a PATH that finds them
    first."""
    tools = os.path.join(tmp, "tools")
    os.makedirs(tools)
    for name, text in (("valgrind", FAKE_VALGRIND),
                       ("cg_annotate", FAKE_ANNOTATE)):
        with open(os.path.join(tools, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(tools, name), 0o755)
    return dict(os.environ, PATH=tools + os.pathsep + os.environ["PATH"])


def run_perf(env, *args):
    return subprocess.run([sys.executable, PERF, *args], capture_output=True,
                          text=True, timeout=300, env=env)


def test_perf(tmp):
    """perf.py's ratios and verdicts, from fake programs with known times."""
    for name, body in PERF_FAKES.items():
        fake_bin(tmp, name, body)
    env = fake_tools(tmp)
    p = run_perf(env, "--bin", tmp, "--runs", "2", "--rs", "2,100,10000")
    out = p.stdout
    check(p.returncode == 0, "perf.py runs on programs that work",
          p.stderr)
    check("not built" not in p.stderr, "with every program built, none is "
          "said missing", p.stderr)
    check(out.startswith("Machine: %s, %d CPUs, "
                         % (cpu_model(), os.cpu_count())),
          "perf.py starts with the machine its figures come from", out)
    check("## Switch: %s [-f]" % os.path.relpath(os.path.join(tmp, "switch"))
          in out, "the switch heading names the --bin program", out)
    check("128 bytes saved: 13.00 ns a switch   goal <= 12: MISSED" in out
          and "128 bytes saved: 12.00 ns a switch with -f   goal <= 12: met"
          in out, "the switch figures, without and with -f, and verdicts",
          out)
    check("    the same copies without usched (--floor): 9.00 ns, the switch "
          "1.44x that" in out and "(--floor): 8.00 ns, the switch 1.50x "
          "that" in out, "the floor beside each switch figure, and the "
          "switch's ratio to it", out)
    check(out.count("0.50x MISSED") == 3 and out.count("2.00x met") == 3,
          "ring: 1 s against 0.5 s is 0.50x, against 2 s 2.00x, per R", out)
    check(out.count(" = 0.67x ") == 3,
          "ring -f: 0.75 s against C++20's 0.5 s is 0.67x, per R", out)
    check(out.count(" = 0.80x ") == 3,
          "ring-lto: 0.625 s against C++20's 0.5 s is 0.80x, per R", out)
    check(out.count("failed: ring-go: out of memory") == 1,
          "a failing peer is reported with its message", out)
    # 8 * 2 * 500100 messages in 1 s (ring), 1.016, ... 1.112 s; 8 * 100 *
    # 10100 in 1 s and 0.516, ... 0.612 s; the peers' best: C++20 0.5 s,
    # Boost 2 s, Go 8 s.
    check("\n## Code placement: ring N=8, P=1, its hot code moved 0-112 "
          "bytes on (the same code; %s and ring-shift-K)"
          % os.path.relpath(os.path.join(tmp, "ring")) in out
          and "\nR=2   M=500100 ll 8.0 7.9 7.8 7.6 7.5 7.4 7.3 7.2; min "
          "7.2, median 7.6, max 8.0\n      the median against C++20 16.0 "
          "-> 0.47 MISSED; Boost 4.0 -> 1.89 met; Go 1.0 -> 7.58 MISSED\n"
          in out
          and "\nR=100 M=10100  ll 8.1 15.7 15.2 14.7 14.3 13.9 13.6 13.2; "
          "min 8.1, median 14.1, max 15.7\n      the median against C++20 "
          "16.2 -> 0.87 met; Boost 4.0 -> 3.50 met; Go 1.0 -> 13.99 met\n"
          in out,
          "code placement: per R the eight rings' rates in shift order, "
          "their min, median and max, and the median's ratio to C++20, "
          "Boost and Go and its verdicts", out)
    ds = (0, 1000, 10000)
    shifts = ["ring-shift-%d" % k for k in range(16, 113, 16)]
    check(all(calls(os.path.join(tmp, s)) ==
              ["--sched ll 8 2 500100 0 1"] * 2 +
              ["--sched ll 8 100 10100 0 1"] * 2 +
              ["--sched ll 8 2 500100 %d 1" % d for d in ds] * 2 +
              ["--sched ll 8 100 10100 %d 1" % d for d in ds] * 2
              for s in shifts),
          "each ring-shift-K runs --runs rounds at R=2 and R=100, then of "
          "D=0, 1000 and 10000 at each",
          [calls(os.path.join(tmp, s)) for s in shifts])
    # The N=8 ring's rounds at R=2, 100 and 10000 (Go's failure there ends
    # its), then the placements'.
    r2, r100, r10k = ("8 %d %d 0 1" % rm
                      for rm in ((2, 500100), (100, 10100), (10000, 200)))
    check(calls(os.path.join(tmp, "ring-boost")) ==
          [r2, r2, r100, r100, r10k, r10k, r2, r2, r100, r100]
          and calls(os.path.join(tmp, "ring-go")) ==
          [r2, r2, r100, r100, r10k, r2, r2, r100, r100],
          "Boost and Go run --runs rounds at R=2 and 100 beside the "
          "placements", [calls(os.path.join(tmp, p))
                         for p in ("ring-boost", "ring-go")])
    check("-> 0.50 met" in out and "-> 1.00 MISSED" in out,
          "N=2 and P=2 ratios", out)
    if len(os.sched_getaffinity(0)) >= 2:
        check(len(re.findall(r"-> 1\.00 MISSED; two processes [\d.]+ -> "
                             r"1\.25, P=2 gets 80 % of it\n", out)) == 3,
              "P=2 against two processes of R/2 cycles: 1 s against 0.8 s "
              "is 1.25x, of which P=2's 1.00x is 80 %", out)
        with open(os.path.join(tmp, "ring.cpus")) as f:
            runs = [x.split() for x in f.read().splitlines()]
        cpus = [str(c) for c in sorted(os.sched_getaffinity(0))[:2]]
        check(sorted(r for r, _ in runs) == ["1"] * 4 + ["50"] * 4 +
              ["5000"] * 4 and sorted(c for _, c in runs) ==
              [cpus[0]] * 6 + [cpus[1]] * 6,
              "each R's two processes run each --runs round, with half "
              "its cycles each (R=2: 1 and 1), one on each of two CPUs", runs)
    else:
        check(out.count("two processes: n/a (one CPU)") == 3,
              "on one CPU, no two processes", out)
    check("150.0 bytes a thread met" in out and "20.0 ns   met" in out
          and "1 s (system time 0.3 s)" in out,
          "memory (with the ring's system time) and create figures", out)
    check("usched ll    75.0 a message: rounds_ll 27.0, ll_wake 14.0\n" in out
          and "ll -f        70.0 a message\n" in out
          and "ll -flto     66.0 a message\n" in out
          and "C++20        36.0 a message\n" in out
          and "Boost      failed: under cachegrind: exit 1" in out
          and "switch      142.0 a switch: usched_suspend 40.0, ??? 2.0\n"
          in out and "floor        80.0 a switch: floor_step 50.0\n" in out,
          "instructions a message and a switch: the difference of two "
          "cachegrind runs, by function (inlined parts joined)", out)
    # D=1000: 20, 22, ... 34 us more over 1000 switches for 1000 B, the
    # median 27; switch: 10 ns more for 1000 B. D=10000: 0 (ring), 48, ...
    # 96 us for 10000 B, the median 68; switch: 100 ns.
    check("R=100 D=1000  ring 27.6 ns/KiB (min 20.5, max 34.8), switch 10.2 "
          "-> 2.70 MISSED; 800 threads 20.5 -> 1.35, ring's order 25.6 -> "
          "1.08\n" in out and "\nR=2   D=10000 ring 7.0 ns/KiB (min 0.0, "
          "max 9.8), switch 10.2 -> 0.68 met; 16 threads 20.5 -> 0.34, "
          "ring's order 25.6 -> 0.27\n" in out,
          "the cost of D, the median of the placements' each against its "
          "own D=0, with their min and max, against the switch benchmark's "
          "slope, and against a cycle of as many threads, in address order "
          "and the ring's", out)
    check(calls(os.path.join(tmp, "switch"))[-4:] == [
        "-t 800 -s 1 -n 2500 0 1000 10000"] * 2 + [
        "-t 800 -s 8 -n 2500 0 1000 10000"] * 2,
          "the cycles have the ring's N*R threads; the second visits them "
          "at a stride of N, as the ring does",
          calls(os.path.join(tmp, "switch")))
    check(len(calls(os.path.join(tmp, "ring-cpp"))) == 3 * 2 + 2 * 2 + 3 * 2,
          "every comparison runs --runs rounds",
          calls(os.path.join(tmp, "ring-cpp")))
    peers = ("ring-cpp", "ring-boost", "ring-go")
    for name in peers:
        os.remove(os.path.join(tmp, name))
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2",
                 "--no-valgrind")
    row = [x for x in p.stdout.splitlines() if x.split()[:1] == ["2"]]
    # 8 threads * 2 cycles * 500100 rounds in 0.75 s: 10.7 M messages/s;
    # in 0.625 s, 12.8.
    check(p.returncode == 0 and len(row) == 1
          and row[0].split()[3:7] == ["10.7", "12.8", "failed:", "not"],
          "without the C++20 peer, ring -f and ring-lto still show "
          "messages/s",
          p.stdout + p.stderr)
    check(re.search(r"\nR=2   M=500100 ll 8\.0 .*, max 8\.0\n +the median "
                    r"against C\+\+20 failed: not built: \S+ -> - n/a; "
                    r"Boost failed: not built: \S+ -> - n/a; Go failed: "
                    r"not built: \S+ -> - n/a\n", p.stdout),
          "so do the placements, their median without a ratio or verdict "
          "against a peer not built", p.stdout)
    check(p.stderr.endswith("perf: not built, so their figures are missing: "
                             "ring-cpp, ring-boost, ring-go (make bench "
                             "builds each one whose toolchain is there)\n"),
          "a program not built is named once more at the end, once",
          p.stderr)
    for name in peers:
        fake_bin(tmp, name, PERF_FAKES[name])
    check("skipped (--no-valgrind)" in p.stdout,
          "--no-valgrind skips the instruction counts", p.stdout)
    ran = len(calls(os.path.join(tmp, "ring")))
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2,268435456",
                 "--no-valgrind")
    check(p.returncode == 2 and "must be <= 268435455" in p.stderr
          and len(calls(os.path.join(tmp, "ring"))) == ran,
          "--rs of 8*268435456 = 2^31 threads, more than usched's ring "
          "takes: usage, exit 2, nothing run", p.stdout + p.stderr)
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "1",
                 "--no-valgrind")
    check(p.returncode == 0 and "two processes: n/a (" in p.stdout
          and " 8 0 " not in "\n".join(calls(os.path.join(tmp, "ring"))),
          "R=1 has no halves: no two processes, and no ring of 0 cycles",
          p.stdout + p.stderr)
    p = run_perf(dict(env, FAKE_VALGRIND_FAILS="1"), "--bin", tmp,
                 "--runs", "1", "--rs", "2")
    check(p.returncode == 0
          and "usched ll  failed: under cachegrind: exit 3" in p.stdout
          and "switch     failed: under cachegrind: exit 3" in p.stdout
          and "floor      failed: under cachegrind: exit 3" in p.stdout
          and "## Memory" in p.stdout,
          "a failure under valgrind is reported, and the run goes on",
          p.stdout + p.stderr)
    # Noise: the rings with D=1000 run faster than with D=0, a negative
    # cost.
    fake_bin(tmp, "ring", PERF_FAKES["ring"].replace("1.00002", "0.99998"))
    for k in range(16, 113, 16):
        fake_bin(tmp, "ring-shift-%d" % k, shift_fake(k, -1))
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2",
                 "--no-valgrind")
    rows = [x for x in p.stdout.splitlines() if " D=1000 " in x]
    check(p.returncode == 0 and len(rows) == 2
          and all(" ring -27.6 ns/KiB (min -34.8, max -20.5), switch 10.2 "
                  "-> - n/a; " in x and x.endswith(" -> -") for x in rows),
          "a negative cost of D is no ratio and no verdict, not 'met'",
          p.stdout + p.stderr)
    for k in range(16, 113, 16):
        fake_bin(tmp, "ring-shift-%d" % k, shift_fake(k))
    # A ring whose threads do not save D more bytes: no division by 0.
    fake_bin(tmp, "ring", PERF_FAKES["ring"].replace("$((112 + $7))", "112"))
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2",
                 "--no-valgrind")
    check(p.returncode == 1 and "a usched benchmark failed: ring: a thread "
          "saved no more stack with D=1000 than with D=0 (112 B)\n"
          in p.stderr, "a ring whose saved stack does not grow with D is "
          "reported, exit 1", p.stderr)
    fake_bin(tmp, "ring", PERF_FAKES["ring"])
    fake_bin(tmp, "switch",
             PERF_FAKES["switch"].replace("$((128 + d))", "128"))
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2",
                 "--no-valgrind")
    check(p.returncode == 1 and "a usched benchmark failed: switch: a thread "
          "saved 128, 128 and 128 B with D=0, 1000 and 10000\n" in p.stderr,
          "so is a switch benchmark whose saved stack does not grow",
          p.stderr)
    fake_bin(tmp, "switch", PERF_FAKES["switch"])
    for name in ("switch", "ring", "ring-lto", "create"):
        fake_bin(tmp, name, f"echo '{name}: a reason' >&2; "
                 f"echo 'usage: {name} ARGS' >&2; exit 2")
        p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2")
        check(p.returncode == 1 and "a usched benchmark failed: "
              f"{name}: a reason\n" in p.stderr,
              f"a failing usched {name}: exit 1, with its reason (not "
              "its usage)", p.stderr)
        fake_bin(tmp, name, PERF_FAKES[name])
    # Output that is not the numbers expected: a clear failure, no traceback.
    for name, body, why in (
            ("ring", "echo fast", "ring printed 'fast' where a time was "
             "expected"),
            ("ring", "true", "ring printed nothing where a time was "
             "expected"),
            ("ring", "echo 0", "ring printed '0' where a time was expected"),
            ("switch", "echo '   saved B  ns/switch'; echo '128 quick'",
             "switch printed 'quick' where a number was expected"),
            ("switch", "echo hdr; echo 'nan 13'",
             "switch printed 'nan' where a number was expected"),
            ("switch", "echo 'saved B  ns/switch'; echo '128 13 x'",
             "switch: 1 row of two numbers expected below its header, got "
             "'saved B  ns/switch | 128 13 x'"),
            ("ring", PERF_FAKES["ring"].replace("150.0", "1.2.3"),
             "ring printed '1.2.3' where a number was expected")):
        fake_bin(tmp, name, body)
        p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2")
        check(p.returncode == 1 and "Traceback" not in p.stderr and
              "a usched benchmark failed: %s\n" % why in p.stderr,
              f"{why}: perf.py exits 1 and says so", p.stderr)
        fake_bin(tmp, name, PERF_FAKES[name])
    for body in ("soon", "0"):
        fake_bin(tmp, "ring-cpp", "echo " + body)
        p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2",
                     "--no-valgrind")
        check(p.returncode == 0 and f"failed: ring-cpp printed '{body}' "
              "where a time was expected" in p.stdout,
              f"a peer that prints '{body}', no time, is reported in its "
              "column, and the run goes on", p.stdout + p.stderr)
    # Programs that cannot run, or print bytes that are not UTF-8.
    os.chmod(os.path.join(tmp, "ring-cpp"), 0o644)
    fake_bin(tmp, "ring-boost", "printf '\\377\\376 1.0\\n'")
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2",
                 "--no-valgrind")
    check(p.returncode == 0 and "Traceback" not in p.stderr
          and "failed: cannot run ring-cpp: Permission denied" in p.stdout
          and re.search(r"\n +2 .* 8\.0 = 1\.00x MISSED", p.stdout),
          "a peer that cannot run is reported in its column; one that "
          "prints bytes not in UTF-8 is read all the same",
          p.stdout + p.stderr)
    fake_bin(tmp, "ring-cpp", PERF_FAKES["ring-cpp"])
    fake_bin(tmp, "ring-boost", PERF_FAKES["ring-boost"])
    os.chmod(os.path.join(tmp, "ring-lto"), 0o644)
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2",
                 "--no-valgrind")
    check(p.returncode == 1 and p.stderr == "perf: a usched benchmark "
          "failed: cannot run ring-lto: Permission denied\n",
          "a usched program that cannot run: one line, exit 1", p.stderr)
    fake_bin(tmp, "ring-lto", PERF_FAKES["ring-lto"])
    fake_bin(tmp, "ring", PERF_FAKES["ring"].replace("switches: 1000",
                                                     "switches: 0"))
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2",
                 "--no-valgrind")
    check(p.returncode == 1 and p.stderr.endswith(
          "counted no switches\n") and "Traceback" not in p.stderr,
          "a ring that counts no switches: said, exit 1 (no division by "
          "zero)", p.stderr)
    fake_bin(tmp, "ring", PERF_FAKES["ring"])
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, PERF, "--bin", tmp, "--runs", "1",
                            "--rs", "2", "--no-valgrind"], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=300,
                           env=env)
    check(p.returncode == 1 and p.stderr == "perf: cannot write the "
          "figures: No space left on device\n",
          "stdout full: one line, exit 1", p.stderr)
    os.remove(os.path.join(tmp, "ring-shift-48"))
    p = run_perf(env, "--bin", tmp, "--runs", "1", "--rs", "2",
                 "--no-valgrind")
    check(p.returncode == 1 and p.stderr == "perf: a usched benchmark "
          "failed: not built: %s\n" % os.path.join(tmp, "ring-shift-48"),
          "a ring-shift-K not built: named, exit 1, as a usched program",
          p.stderr)
    fake_bin(tmp, "ring-shift-48", PERF_FAKES["ring-shift-48"])
    p = run_perf(env, "--bin", os.path.join(tmp, "nowhere"))
    check(p.returncode == 1 and "not built: " +
          os.path.join(tmp, "nowhere", "switch") in p.stderr,
          "a usched benchmark not built is named", p.stderr)


def main():
    for test in (test_graph, test_graph_cpus, test_graph_runs,
                 test_graph_libraries,
                 test_graph_failures,
                 test_graph_bad, test_graph_legends, test_graph_colours,
                 test_graph_axes,
                 test_graph_ticks,
                 test_graph_stale, test_graph_torn, test_replacing_synced,
                 test_dry_run, test_sweep, test_sweep_rebuilt,
                 test_sweep_moved, test_sweep_libraries,
                 test_sweep_warmup,
                 test_sweep_closed_pipe, test_sweep_bad_input,
                 test_interrupt, test_perf_interrupt, test_profiles,
                 test_sweep_bounds, test_perf,
                 test_cpu_model, test_matplotlib_sh):
        with tempfile.TemporaryDirectory(prefix="t_scripts-") as tmp:
            try:
                test(tmp)
            except Exception as e:  # a crash is a failure, not an abort
                check(False, f"{test.__name__} crashed", repr(e))
    test_bad_args()
    print(f"1..{count}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
