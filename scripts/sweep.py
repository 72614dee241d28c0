#!/usr/bin/env python3
"""Sweep the ring benchmark over implementations and sizes with hyperfine.

Each point (implementation, N, R) runs through hyperfine (one warm-up run,
then --runs timed runs) and is saved as one JSON file in the results
directory, so an interrupted sweep resumes where it stopped.

Two times are kept per run:
  seconds  the number the ring program prints: its run, thread creation
           included, not process start-up (the graphs use this one);
  wall     hyperfine's time for the whole process (start-up, thread
           creation, teardown), less its estimate of the shell's own
           start-up, so it may come out a little below `seconds`.
To get the first, hyperfine runs the program through its shell with stdout
appended to a scratch file; hyperfine runs the warm-up first, so the first
--warmup lines of that file are dropped and the rest are the timed runs.

A point that exits non-zero, is killed, times out (--timeout) or drives the
machine out of memory (MemAvailable below --mem-reserve) is recorded as
failed with the reason, and the sweep goes on.  A missing binary skips its
implementations.  Finished points (ok or failed) are not run again unless
their arguments (flags, M, D, P), timed or warm-up runs, binary (its
SHA-256) or machine (CPU, kernel, the shared libraries the binary loads as
ldd finds them, and their SHA-256) changed, or --retry-failed is given
for failed ones.  A successful point measured with another M (another
profile's, as when a quick sweep follows a full one in one directory) is
not replaced unless --replace is given: the sweep stops first, naming it.
Each point records the usched commit (git describe of the tree --bin is
in), the CPU, the kernel and the libraries it was measured with: a sweep
resumed another day may run on another CPU (a VM's can change), kernel
or C library.
"""

import argparse
import contextlib
import datetime
import errno
import functools
import hashlib
import json
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
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALL = 0  # P value meaning "every CPU this process may run on"
# The times a point may record, which keep every figure of graph.py finite,
# and the threads (N*R) and M within what numpy's integers and the plots
# take: a sweep asks for no point graph.py would refuse.  MAX_THREADS, above
# every program's own (below), takes the failed points of 2^32 threads
# that older sweeps saved.
MIN_SECONDS, MAX_SECONDS = 1e-9, 1e9
MAX_THREADS = 1 << 32
MAX_M = 1 << 40
# The most threads (N*R) each program takes, refusing more (exit 2):
# every ring indexes its threads in 32 bits (bench/args.h's
# RING_MAX_THREADS, the Go and Rust peers' MaxThreads), and usched's
# schedulers count them in an int (bench/ring.c's limits; ring-lto is
# ring built with -flto).  A sweep asks none for more: such a point would
# only be saved failed.  tests/t_bench.sh checks each program's own.
RING_MAX_THREADS = (1 << 32) - 1
MOST_THREADS = {"ring": (1 << 31) - 1, "ring-lto": (1 << 31) - 1}
# hyperfine refuses a count beyond 64 bits, failing every point; no one
# waits for a million runs of one.
MAX_RUNS = 10 ** 6


@dataclass(frozen=True)
class Impl:
    """One line of the comparison: a binary, its flags and fixed D and P."""
    label: str
    binary: str
    flags: tuple
    d: int
    p: int  # ALL = every CPU
    what: str


# The implementations, in the order of the graphs' legends and tables.
# Constraints of the peers are encoded here: ring-cpp takes P=1 and D=0,
# ring-cpp-pool D=0, ring-boost P=1; ring-pthread's P counts CPUs.
IMPLS = (
    Impl("U-rr-1T", "ring", ("--sched", "rr"), 0, 1, "usched rr, 1 processor"),
    Impl("U-rr", "ring", ("--sched", "rr"), 0, ALL, "usched rr, all CPUs"),
    Impl("U-ll-1T", "ring", ("--sched", "ll"), 0, 1, "usched ll, 1 processor"),
    Impl("U-ll", "ring", ("--sched", "ll"), 0, ALL, "usched ll, all CPUs"),
    Impl("U-ll-1K", "ring", ("--sched", "ll"), 1000, ALL,
         "usched ll, all CPUs, 1000 live stack bytes"),
    Impl("U-ll-10K", "ring", ("--sched", "ll"), 10000, ALL,
         "usched ll, all CPUs, 10000 live stack bytes"),
    Impl("POSIX", "ring-pthread", (), 0, 1,
         "one pthread per ring member, on 1 CPU"),
    Impl("POSIX-MT", "ring-pthread", (), 0, ALL,
         "one pthread per ring member, on all CPUs"),
    Impl("GO1T", "ring-go", (), 0, 1, "goroutines, GOMAXPROCS=1"),
    Impl("GO", "ring-go", (), 0, ALL, "goroutines, GOMAXPROCS=all CPUs"),
    Impl("RUST-async-std", "ring-async-std", (), 0, 1,
         "Rust async-std tasks, 1 thread"),
    Impl("RUST-tokio", "ring-tokio", (), 0, 1,
         "Rust tokio tasks, multi-thread runtime, 1 worker"),
    Impl("RUST-tokio-MT", "ring-tokio", (), 0, ALL,
         "Rust tokio tasks, multi-thread runtime on all CPUs"),
    Impl("C++1T", "ring-cpp", (), 0, 1, "C++20 coroutines, 1 thread"),
    Impl("C++", "ring-cpp-pool", (), 0, ALL,
         "C++20 coroutines over a pool of all CPUs"),
    Impl("BOOST", "ring-boost", (), 0, 1, "Boost.Context fibers, 1 thread"),
)
LABELS = tuple(i.label for i in IMPLS)


def most_threads(binary):
    """The most threads (N*R) the program binary takes."""
    return MOST_THREADS.get(binary, RING_MAX_THREADS)


@dataclass(frozen=True)
class Profile:
    """A grid of sizes (M = messages // N // R + 100) and run settings."""
    ns: tuple
    rs: tuple
    messages: int
    runs: int
    warmup: int
    timeout: float  # seconds per point, warm-up and runs together


PROFILES = {
    "quick": Profile((2, 8), (2, 100, 10000), 800_000, 3, 1, 120),
    "full": Profile((2, 8), (2, 4, 8, 50, 100, 500, 1000, 5000, 10000, 50000,
                             100000, 500000, 1000000), 8_000_000, 5, 1, 1800),
}


@dataclass(frozen=True)
class Point:
    """One (implementation, N, R) measurement to make."""
    impl: Impl
    n: int
    r: int
    m: int
    d: int
    p: int
    argv: tuple

    @property
    def name(self):
        return f"{self.impl.label}_N{self.n}_R{self.r}"

    @property
    def messages(self):
        return self.n * self.r * self.m


def cpus():
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def rounds(messages, n, r):
    """M for a point: about `messages` in all, at least 100 rounds."""
    return messages // n // r + 100


def make_points(impls, ns, rs, messages, bindir):
    """Every point of the grid for the given implementations."""
    pts = []
    for impl in impls:
        p = cpus() if impl.p == ALL else impl.p
        exe = os.path.join(bindir, impl.binary)
        for n in ns:
            for r in rs:
                m = rounds(messages, n, r)
                argv = (exe, *impl.flags, *map(str, (n, r, m, impl.d, p)))
                pts.append(Point(impl, n, r, m, impl.d, p, argv))
    return pts


def result_path(results, pt):
    return os.path.join(results, pt.name + ".json")


@functools.lru_cache(maxsize=None)
def sha256(path):
    """The file's SHA-256 in hex, or None if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def saved(results, pt):
    """The point's saved record, or None if there is none to read."""
    try:
        with open(result_path(results, pt)) as f:
            old = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    return old if isinstance(old, dict) else None


def same_way(old, pt, opts):
    """True if old, a saved record, was measured as pt would be: same
    arguments (flags, N, R, M, D, P), runs and warm-up runs, and the same
    binary."""
    try:
        return (old["command"][1:], old["runs"], old["warmup"],
                old["binary_sha256"]) == (list(pt.argv[1:]), opts.runs,
                                          opts.warmup, sha256(pt.argv[0]))
    except (KeyError, TypeError):
        return False


# What a point records of the machine it ran on, beside its binary: the
# kernel schedules the threads of most peers (a futex wake for each
# message of POSIX).
MACHINE_FIELDS = (("cpu", "CPU"), ("kernel", "kernel"))


def this_machine():
    return {"cpu": cpu_model(), "kernel": kernel()}


@functools.lru_cache(maxsize=None)
def libraries(path):
    """The shared libraries the program at path loads, as the dynamic
    loader finds them here and now (ldd, which follows LD_LIBRARY_PATH as
    the runs do): {library's path: its SHA-256, None if missing}; {} if it
    loads none (static, a script); None if ldd cannot tell (it is not
    installed, or fails)."""
    try:
        p = subprocess.run(["ldd", path], capture_output=True, text=True,
                           errors="replace", timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        static = "not a dynamic executable" in p.stdout + p.stderr
        return {} if static else None
    libs = {}
    for line in p.stdout.splitlines():
        # "libc.so.6 => /lib/libc.so.6 (0x...)", "/lib/ld.so (0x...)",
        # "libx.so => not found"; the vDSO is no file.
        if m := re.fullmatch(r"\s*(?:\S+ => )?(/.*) \(0x[0-9a-f]+\)", line):
            libs[m[1]] = sha256(m[1])
        elif m := re.fullmatch(r"\s*(\S+) => not found", line):
            libs[m[1]] = None
    return libs


def was_now(name, old, new):
    """'kernel Linux 6.1, now Linux 6.12': what old, a saved record, gives
    for name (None: not recorded) and what it would be now."""
    return f"{name} {old or 'not recorded'}, now {new}"


def named(libs):
    """libraries() for a message: the files' names."""
    if not isinstance(libs, dict):
        return "unknown (ldd could not tell)"
    return ", ".join(os.path.basename(lib) for lib in libs) or "none"


def other_libraries(old, now):
    """How the shared libraries of old, a saved record, are not now's
    (libraries()), or None."""
    if "libraries" not in old:
        return was_now("shared libraries", None, named(now))
    was = old["libraries"]
    if was == now:
        return None
    if not (isinstance(was, dict) and isinstance(now, dict)):
        return was_now("shared libraries", named(was), named(now))
    lib = min(x for x in {*was, *now}
              if x not in was or x not in now or was[x] != now[x])

    def state(libs):
        if lib not in libs:
            return "not loaded"
        h = libs[lib]
        return f"SHA-256 {h[:12]}" if isinstance(h, str) else "missing"
    return was_now(f"shared library {lib}", state(was), state(now))


def other_machine(old, pt, opts):
    """How the machine of old, a saved record, is not the one pt would run
    on now ("kernel Linux 6.1, now Linux 6.12"; or one of the shared
    libraries its program loads), or None."""
    for key, name in MACHINE_FIELDS:
        if old.get(key) != opts.machine[key]:
            return was_now(name, old.get(key), opts.machine[key])
    return other_libraries(old, libraries(pt.argv[0]))


def moved(results, pt, opts):
    """How the machine of the point's saved record measured the same way
    is not this one, or None (the same, or no such record)."""
    old = saved(results, pt)
    return other_machine(old, pt, opts) if same_way(old, pt, opts) else None


def is_done(results, pt, opts):
    """True if the point has a saved result measured the same way, on this
    machine."""
    old = saved(results, pt)
    return (same_way(old, pt, opts) and other_machine(old, pt, opts) is None
            and not (opts.retry_failed and old.get("status") != "ok"))


def other_m(results, pt):
    """The M of the point's saved successful result if it is not pt's
    (another profile's), else None."""
    old = saved(results, pt) or {}
    if old.get("status") == "ok" and old.get("m") != pt.m:
        return old.get("m")
    return None


def clash(todo, opts):
    """Says why the sweep would replace successful points measured with
    another M, and returns True; False if it would not."""
    other = [(pt, m) for pt in todo
             if (m := other_m(opts.results, pt)) is not None]
    if not other or opts.replace:
        return False
    pt, m = other[0]
    print(f"sweep.py: {opts.results} holds successful points measured "
          f"with another M, another profile's? ({len(other)}, such as "
          f"{pt.name}: M={m}, now {pt.m}); give another --results, or "
          f"--replace to measure them again", file=sys.stderr)
    return True


def mem_available():
    """MemAvailable in bytes, or None where /proc/meminfo is missing."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def default_reserve():
    """5% of the memory available now, at least 512 MB."""
    avail = mem_available() or 0
    return max(512 << 20, avail // 20) >> 20


def kill_group(pgid, sig=signal.SIGKILL):
    """SIG to process group PGID, if any of it is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def run_bounded(cmd, log, timeout, reserve):
    """Run cmd in its own process group; return (exit code, reason).

    The group is killed when it outlives `timeout` seconds or when the
    machine's available memory falls below `reserve` bytes."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    reason = None
    try:
        while proc.poll() is None:
            if time.monotonic() - start > timeout:
                reason = f"timeout after {timeout:g} s"
            else:
                avail = mem_available()
                if avail is not None and avail < reserve:
                    reason = (f"out of memory (MemAvailable "
                              f"{avail >> 20} MB < {reserve >> 20} MB)")
            if reason:
                break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            kill_group(proc.pid)
            proc.wait()
    return proc.returncode, reason


def signal_name(n):
    """SIGSEGV for 11; "signal 35" for one Python has no name for."""
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def exit_reason(code, hyperfine_log, stderr_text):
    """Why hyperfine failed, from its exit and the program's stderr."""
    m = re.search(r"non-zero exit code: (-?\d+)", hyperfine_log)
    if m:
        status = int(m.group(1))
        why = f"exit status {status}"
        if status > 128 and status - 128 < signal.NSIG:
            why += f" (killed by {signal_name(status - 128)})"
    elif code < 0:
        why = f"hyperfine killed by {signal_name(-code)}"
    else:
        last = hyperfine_log.strip().splitlines()[-1:] or [""]
        why = f"hyperfine exit status {code}: {last[0]}"
    msg = stderr_text.strip().splitlines()[:1]
    return why + (f": {msg[0]}" if msg else "")


def parse_seconds(text, warmup, runs):
    """The timed runs' printed seconds, or raise ValueError."""
    lines = text.split()
    if len(lines) != warmup + runs:
        raise ValueError(f"expected {warmup + runs} numbers on stdout, "
                         f"got {len(lines)}")
    vals = [float(x) for x in lines[warmup:]]
    if not all(MIN_SECONDS <= v <= MAX_SECONDS for v in vals):
        raise ValueError(f"a time outside {MIN_SECONDS:g} to "
                         f"{MAX_SECONDS:g} s in {lines[warmup:]}")
    return vals


def measure(pt, opts, hyperfine):
    """Run one point through hyperfine; return the fields to record."""
    with tempfile.TemporaryDirectory(prefix="usched-sweep-") as tmp:
        out, err, exp, log = (os.path.join(tmp, f) for f in
                              ("stdout", "stderr", "hf.json", "hf.log"))
        shell_cmd = (f"{shlex.join(pt.argv)} >>{shlex.quote(out)} "
                     f"2>>{shlex.quote(err)}")
        cmd = [hyperfine, "--style", "basic", "--warmup", str(opts.warmup),
               "--runs", str(opts.runs), "--export-json", exp, shell_cmd]
        with open(log, "w") as logf:
            code, reason = run_bounded(cmd, logf, opts.timeout,
                                       opts.mem_reserve << 20)
        if reason is None and code != 0:
            reason = exit_reason(code, read(log), read(err))
        if reason:
            return {"status": "failed", "reason": reason}
        try:
            secs = parse_seconds(read(out), opts.warmup, opts.runs)
            with open(exp) as f:
                hf = json.load(f)["results"][0]
        except (ValueError, KeyError, IndexError, OSError) as e:
            return {"status": "failed", "reason": f"bad output: {e}"}
    return {"status": "ok", "reason": None, "seconds": secs,
            "wall": hf.get("times", []), "hyperfine": hf}


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


@contextlib.contextmanager
def replacing(path, mode="w", **kwargs):
    """A new file, opened with mode, that takes path's place once written
    whole: a reader, a full disk, a kill or a crash midway never leaves
    half of it as path.  On an error it is removed, and the OSError names
    path."""
    tmp = None
    where = os.path.dirname(path) or "."
    try:
        with tempfile.NamedTemporaryFile(
                mode, dir=where, delete=False,
                prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                **kwargs) as f:
            tmp = f.name
            mask = os.umask(0)  # the mode open() gives a new file
            os.umask(mask)
            os.fchmod(f.fileno(), 0o666 & ~mask)
            yield f
            # On disk before its name: a crash could keep the rename and
            # lose the data, an empty file.
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        sync_dir(where)
    except BaseException as e:
        if tmp:
            with contextlib.suppress(OSError):
                os.remove(tmp)
        if isinstance(e, OSError) and e.filename in (None, tmp):
            e.filename = path
        raise


def sync_dir(path):
    """fsync the directory path, so that a rename in it outlives a crash;
    on a file system that cannot (EINVAL), as durable as it makes it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno != errno.EINVAL:
            raise
    finally:
        os.close(fd)


def write_json(path, obj):
    """Write obj to path atomically: a reader never sees half of it."""
    with replacing(path) as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def save(results, pt, fields, opts):
    """Write the point's JSON."""
    rec = {"label": pt.impl.label, "binary": pt.impl.binary,
           "n": pt.n, "r": pt.r, "m": pt.m, "d": pt.d, "p": pt.p,
           "messages": pt.messages,
           "command": [os.path.basename(pt.argv[0]), *pt.argv[1:]],
           "status": fields["status"], "reason": fields.get("reason"),
           "runs": opts.runs, "warmup": opts.warmup, "date": now(),
           **opts.machine,
           "seconds": [], "wall": []}
    rec.update(fields)
    write_json(result_path(results, pt), rec)


def now():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def command_version(argv):
    """First line a version command prints, or 'not found'."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    lines = (p.stdout or p.stderr).strip().splitlines()
    return lines[0] if p.returncode == 0 and lines else "not found"


def cpu_fields(cpuinfo):
    """The first processor's fields of a /proc/cpuinfo text, by name."""
    fields = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        name, _, value = line.partition(":")
        fields[name.strip()] = value.strip()
    return fields


def cpu_caches(cache_dir):
    """'L1d 32K, L2 512K, ...': each data or unified cache of one CPU, as
    sysfs sizes it (one instance), or '' when sysfs does not tell."""
    try:
        names = os.listdir(cache_dir)
    except OSError:
        return ""
    caches = []
    for name in names:
        d = os.path.join(cache_dir, name)
        level, kind, size = (read(os.path.join(d, f)).strip()
                             for f in ("level", "type", "size"))
        if level.isdigit() and size and kind in ("Data", "Unified"):
            caches.append((int(level), f"L{level}"
                           f"{'d' if kind == 'Data' else ''} {size}"))
    return ", ".join(c for _, c in sorted(caches))


# cpuinfo fields that identify a CPU, x86's then Arm's, as the name shows them
CPU_IDS = (("cpu family", "family"), ("model", "model"),
           ("stepping", "stepping"), ("CPU implementer", "implementer"),
           ("CPU part", "part"), ("CPU variant", "variant"),
           ("CPU revision", "revision"))


def cpu_model(cpuinfo="/proc/cpuinfo",
              cache_dir="/sys/devices/system/cpu/cpu0/cache"):
    """The CPU's name with what tells its generation apart when the name
    does not ("AMD EPYC" on a VM; Arm gives none): its identity in
    cpuinfo and its caches."""
    fields = cpu_fields(read(cpuinfo))
    name = fields.get("model name") or platform.machine() or "unknown"
    ids = " ".join(f"{short} {fields[k]}" for k, short in CPU_IDS
                   if k in fields)
    details = "; ".join(x for x in (ids, cpu_caches(cache_dir)) if x)
    return f"{name} ({details})" if details else name


def machine_info(bindir=None):
    """What the report header tells about the machine and toolchains, and
    the usched of the programs in bindir (default: this tree's)."""
    tools = {"gcc": ["gcc", "--version"], "g++": ["g++", "--version"],
             "clang": ["clang", "--version"], "go": ["go", "version"],
             "rustc": ["rustc", "--version"],
             "hyperfine": ["hyperfine", "--version"]}
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "cpus_used": cpus(),
            "kernel": kernel(),
            "tools": {k: command_version(v) for k, v in tools.items()},
            "usched": usched_version(bindir), "date": now()}


def kernel():
    return f"{platform.system()} {platform.release()}"


def usched_version(bindir=None):
    """git describe of the tree that holds bindir (the programs measured,
    which --bin may take from another tree), or of this tree by default;
    'not found' if it is in none."""
    return command_version(["git", "-C", bindir or ROOT, "describe",
                            "--always", "--dirty"])


def fmt_time(sec):
    sec = int(sec)
    return f"{sec // 3600}:{sec // 60 % 60:02d}:{sec % 60:02d}"


class Progress:
    """Points done/total, elapsed and remaining time weighted by messages."""

    def __init__(self, todo):
        self.total = len(todo)
        self.weight_left = sum(p.messages for p in todo)
        self.weight_done = 0
        self.done = 0
        self.start = time.monotonic()

    def line(self, pt, fields):
        self.done += 1
        self.weight_done += pt.messages
        self.weight_left -= pt.messages
        spent = time.monotonic() - self.start
        eta = spent / self.weight_done * self.weight_left
        if fields["status"] == "ok":
            mean = sum(fields["seconds"]) / len(fields["seconds"])
            what = f"{pt.messages / mean / 1e6:.2f} Mmsg/s"
        else:
            what = "FAILED: " + fields["reason"]
        width = len(str(self.total))
        return (f"[{self.done:{width}}/{self.total}] {pt.impl.label} "
                f"N={pt.n} R={pt.r} M={pt.m}: {what} | elapsed "
                f"{fmt_time(spent)}, remaining ~{fmt_time(eta)}")


def positive_float(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}")
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be > 0: {s!r}")
    return v


def int_at_least(low, high=None):
    def conv(s):
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {s!r}")
        if v < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}: {s!r}")
        if high is not None and v > high:
            raise argparse.ArgumentTypeError(f"must be <= {high}: {s!r}")
        return v
    return conv


def int_list(low, high=None):
    conv = int_at_least(low, high)

    def parse(s):
        vals = tuple(conv(x) for x in s.split(","))
        if len(set(vals)) != len(vals):
            raise argparse.ArgumentTypeError(f"repeated value in {s!r}")
        return vals
    return parse


def label_list(s):
    labels = [x for x in s.split(",") if x]
    bad = [x for x in labels if x not in LABELS]
    if bad or not labels:
        raise argparse.ArgumentTypeError(
            f"unknown implementation {','.join(bad) or s!r}; "
            f"known: {','.join(LABELS)}")
    return labels


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Run the ring benchmarks through hyperfine; one JSON "
        "per point in the results directory (resumable).",
        epilog="Implementations: " + ", ".join(LABELS))
    ap.add_argument("--profile", choices=sorted(PROFILES), default="quick",
                    help="quick (default, a few minutes) or full (whole grid)")
    ap.add_argument("--only", type=label_list, metavar="LABEL,...",
                    help="run only these implementations")
    ap.add_argument("--ns", type=int_list(2, MAX_THREADS), metavar="N,...",
                    help="override the profile's N values")
    ap.add_argument("--rs", type=int_list(1, MAX_THREADS), metavar="R,...",
                    help="override the profile's R values")
    ap.add_argument("--runs", type=int_at_least(1, MAX_RUNS),
                    help="timed runs per point (quick 3, full 5)")
    ap.add_argument("--warmup", type=int_at_least(0, MAX_RUNS),
                    help="warm-up runs per point (default 1)")
    ap.add_argument("--timeout", type=positive_float, metavar="SEC",
                    help="per-point limit, warm-up and runs together "
                    "(quick 120, full 1800)")
    ap.add_argument("--mem-reserve", type=int_at_least(1), metavar="MB",
                    default=default_reserve(),
                    help="fail a point when MemAvailable drops below this "
                    "(default 5%% of what is available now, >= 512)")
    ap.add_argument("--results", metavar="DIR",
                    help="default report/results-PROFILE, as make report")
    ap.add_argument("--bin", default=os.path.join(ROOT, "bench", "bin"),
                    metavar="DIR", help="benchmark binaries (default "
                    "bench/bin)")
    ap.add_argument("--retry-failed", action="store_true",
                    help="run again the points recorded as failed")
    ap.add_argument("--replace", action="store_true",
                    help="measure again successful points saved with "
                    "another M (another profile's)")
    ap.add_argument("--dry-run", action="store_true",
                    help="list the points to run and exit")
    ap.add_argument("--check", action="store_true",
                    help="check the options and that no successful point "
                    "of another M would be replaced, built or not, and "
                    "exit (make report, before it builds)")
    opts = ap.parse_args(argv)
    prof = PROFILES[opts.profile]
    opts.results = opts.results or os.path.join(
        ROOT, "report", "results-" + opts.profile)
    opts.ns = opts.ns or prof.ns
    opts.rs = opts.rs or prof.rs
    n, r = max(opts.ns), max(opts.rs)
    over = [i for i in chosen_impls(opts) if n * r > most_threads(i.binary)]
    if over:
        more = f" and {len(over) - 1} more take" if over[1:] else " takes"
        ap.error(f"N*R = {n}*{r} is more than {over[0].label}{more} "
                 f"({over[0].binary}: {most_threads(over[0].binary)} "
                 "threads at most)")
    opts.messages = prof.messages
    opts.runs = opts.runs or prof.runs
    opts.timeout = opts.timeout or prof.timeout
    opts.warmup = prof.warmup if opts.warmup is None else opts.warmup
    return opts


def chosen_impls(opts):
    """The implementations --only selects, all by default."""
    return [i for i in IMPLS if opts.only is None or i.label in opts.only]


def present_impls(opts):
    """The selected implementations whose binary exists; say which not."""
    found = []
    for impl in chosen_impls(opts):
        exe = os.path.join(opts.bin, impl.binary)
        if os.access(exe, os.X_OK) and os.path.isfile(exe):
            found.append(impl)
        else:
            print(f"skip {impl.label}: no {exe}", file=sys.stderr)
    return found


class StdoutFailed(Exception):
    """Writing to stdout failed: the progress's fault, not the results'."""


def say(text):
    """Prints a line of progress now; raises StdoutFailed if it cannot (a
    full disk), BrokenPipeError if the reader left."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        raise
    except OSError as e:
        raise StdoutFailed(e.strerror or str(e)) from None


def stdout_closed(prog):
    """True, having said so, if stdout is closed: files opened next would
    take its place, and what is printed would go nowhere."""
    if sys.stdout is not None:
        return False
    print(f"{prog}: stdout is closed", file=sys.stderr)
    return True


def quiet_stdout():
    """After the reader left (sweep.py ... | head): no traceback for what
    it did not want, and none again when Python flushes stdout at exit."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def dry_run(todo, done):
    """List the points; 1 if the reader left early (sweep.py ... | head)."""
    rc = 0
    try:
        print("label\tN\tR\tM\tD\tP\tcommand")
        for pt in todo:
            print(f"{pt.impl.label}\t{pt.n}\t{pt.r}\t{pt.m}\t{pt.d}\t"
                  f"{pt.p}\t{shlex.join(pt.argv)}")
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_stdout()
        rc = 1
    except OSError as e:
        quiet_stdout()
        print(f"sweep.py: cannot write the list: {e.strerror or e}",
              file=sys.stderr)
        return 1
    print(f"{len(todo)} points to run, {done} already done",
          file=sys.stderr)
    return rc


def sweep(todo, opts, hyperfine):
    """Run the points, saving each; return the number that failed."""
    if todo:
        write_json(os.path.join(opts.results, "machine.json"),
                   machine_info(opts.bin))
    prog = Progress(todo)
    failed = 0
    for pt in todo:
        # The program as it runs, read for each point: a make bench (make
        # test runs one) during a sweep of hours rebuilds it, maybe at
        # another commit; an upgrade, its libraries.
        sha256.cache_clear()
        libraries.cache_clear()
        ran = {"binary_sha256": sha256(pt.argv[0]),
               "libraries": libraries(pt.argv[0]),
               "usched": usched_version(opts.bin)}
        fields = measure(pt, opts, hyperfine)
        save(opts.results, pt, {**ran, **fields}, opts)
        failed += fields["status"] != "ok"
        say(prog.line(pt, fields))
    return failed


def interrupt(signum, frame):
    raise KeyboardInterrupt


def pending(impls, opts):
    """The points of impls, and those of them still to measure."""
    points = make_points(impls, opts.ns, opts.rs, opts.messages, opts.bin)
    return points, [p for p in points if not is_done(opts.results, p, opts)]


def main(argv=None):
    if stdout_closed("sweep.py"):
        return 1
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    for sig in (signal.SIGTERM, signal.SIGHUP):  # hyperfine has a session
        signal.signal(sig, interrupt)  # of its own: kill it on the way out
    opts.machine = this_machine()
    if opts.check:  # the programs may not be built yet: every point
        return 2 if clash(pending(chosen_impls(opts), opts)[1], opts) else 0
    impls = present_impls(opts)
    if not impls:
        print(f"sweep.py: none of the selected programs is in {opts.bin} "
              "(make bench builds them)", file=sys.stderr)
        return 1
    points, todo = pending(impls, opts)
    if clash(todo, opts):
        return 2
    elsewhere = [(p, why) for p in todo
                 if (why := moved(opts.results, p, opts))]
    if elsewhere:
        k = len(elsewhere)
        print(f"sweep.py: {k} saved point{'s were' if k > 1 else ' was'} "
              "measured on another machine or with other libraries "
              f"({elsewhere[0][0].name}: "
              f"{elsewhere[0][1]}{', ...' * (k > 1)}): measuring "
              f"{'them' if k > 1 else 'it'} again", file=sys.stderr)
    if opts.dry_run:
        return dry_run(todo, len(points) - len(todo))
    hyperfine = shutil.which("hyperfine")
    if hyperfine is None:
        print("sweep.py: hyperfine not found (apt-get install hyperfine)",
              file=sys.stderr)
        return 1
    try:
        os.makedirs(opts.results, exist_ok=True)
        say(f"{len(todo)} points to run, {len(points) - len(todo)} "
            f"already done; results in {opts.results}")
        failed = sweep(todo, opts, hyperfine)
        say(f"done: {len(todo) - failed} ok, {failed} failed; "
            f"results in {opts.results}")
    except BrokenPipeError:
        quiet_stdout()
        print(f"sweep.py: output closed; finished points are in "
              f"{opts.results}, run again to resume", file=sys.stderr)
        return 1
    except StdoutFailed as e:
        quiet_stdout()
        print(f"sweep.py: cannot write to stdout: {e}; finished points are "
              f"in {opts.results}, run again to resume", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"sweep.py: cannot write the results: "
              f"{e.filename or opts.results}: {e.strerror or e}",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\ninterrupted; finished points are in {opts.results}, "
              "run again to resume", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
