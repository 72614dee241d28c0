#!/usr/bin/env python3
"""Turn sweep.py's results into plots and a markdown report.

For each N (threads per cycle) it draws c<N>.png and c<N>.svg: x = threads
N*R, y = millions of messages per second (both log scale; --linear for a
linear y), one line per implementation, its legend entry saying how many
of its points at that N failed.  Throughput uses the seconds each
ring program printed (its run, thread creation included): the point is
N*R*M / mean(seconds) / 1e6 and its error bar spans the slowest to the
fastest run (N*R*M / max(seconds) to N*R*M / min(seconds)).  report.md
holds a header (machine, toolchains, date, the usched commits the points
were measured at, with a warning when there are several, one when the
points were not all measured on the header's CPU or kernel, or with the
same runs and warm-up runs or versions of a shared library, and one
when the implementations of a column ran different M), one table per N
(cells: the point's value with 2 decimals, "fail" for a failed point,
empty when not run), the failures' reasons and links to the images;
summary.csv holds every point's numbers.  The plots of an N that the last
run into the same directory drew (its summary.csv's) and that the results
no longer have are removed.
"""

import argparse
import collections
import csv
import json
import math
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
import sweep  # noqa: E402  (labels, machine details)

ROOT = sweep.ROOT


def load_results(results):
    """(every point in the directory, machine.json aside; one line per
    file that is not a valid point)."""
    points, errors, seen = [], [], {}
    for name in sorted(os.listdir(results)):
        if not name.endswith(".json") or name == "machine.json":
            continue
        path = os.path.join(results, name)
        try:
            with open(path) as f:
                pt = json.load(f)
            why = point_error(pt)
        except (OSError, ValueError) as e:
            why = f"cannot read it: {e}"
        except RecursionError:
            why = "cannot read it: nested too deep"
        if not why:  # two results of a point: which one is right?
            key = (pt["label"], pt["n"], pt["r"])
            if key in seen:
                why = (f"the same point ({key[0]}, N={key[1]}, R={key[2]}) "
                       f"as {seen[key]}")
            seen.setdefault(key, path)
        if why:
            errors.append(f"{path}: {why}")
            continue
        pt["threads"] = pt["n"] * pt["r"]
        pt["messages"] = pt["threads"] * pt["m"]
        points.append(pt)
    return points, errors


def point_error(pt):
    """What is wrong with a point's record, or None."""
    if not isinstance(pt, dict):
        return "not a JSON object"
    # Plain names: matplotlib reads $...$ as mathematics and hides a legend
    # entry that starts with _.
    if not isinstance(pt.get("label"), str) or not re.fullmatch(
            r"[A-Za-z0-9][A-Za-z0-9+._-]*", pt["label"]):
        return ("field 'label': want a name of letters, digits, '+', '-', "
                f"'.' and '_' (not first), got {json.dumps(pt.get('label'))}")
    if pt.get("status") not in ("ok", "failed"):
        return (f"field 'status': want \"ok\" or \"failed\", got "
                f"{json.dumps(pt.get('status'))}")
    # sweep.py's bounds, which it records no point beyond.
    for k, most in (("n", sweep.MAX_THREADS), ("r", sweep.MAX_THREADS),
                    ("m", sweep.MAX_M)):
        if type(pt.get(k)) is not int or not 1 <= pt[k] <= most:
            return (f"field '{k}': want an integer from 1 to {most}, got "
                    f"{json.dumps(pt.get(k))[:60]}")
    if pt["n"] * pt["r"] > sweep.MAX_THREADS:
        return ("fields 'n' and 'r': N*R is more than "
                f"{sweep.MAX_THREADS} threads")
    secs = pt.get("seconds", [])
    if not isinstance(secs, list) or not all(
            type(x) in (int, float)
            and sweep.MIN_SECONDS <= x <= sweep.MAX_SECONDS
            for x in secs):
        return ("field 'seconds': want a list of times from "
                f"{sweep.MIN_SECONDS:g} to {sweep.MAX_SECONDS:g} s, got "
                f"{json.dumps(secs)[:60]}")
    if pt["status"] == "ok" and not secs:
        return "field 'seconds': empty in an ok point"
    if not isinstance(pt.get("usched", ""), str):
        return f"field 'usched': want a commit, got {json.dumps(pt['usched'])}"
    if not isinstance(pt.get("cpu", ""), str):
        return f"field 'cpu': want a CPU's name, got {json.dumps(pt['cpu'])}"
    if not isinstance(pt.get("kernel", ""), str):
        return ("field 'kernel': want a kernel's name, got "
                f"{json.dumps(pt['kernel'])[:60]}")
    libs = pt.get("libraries")
    if libs is not None and not (isinstance(libs, dict) and all(
            h is None or isinstance(h, str)
            and re.fullmatch(r"[0-9a-f]{64}", h) for h in libs.values())):
        return ("field 'libraries': want {path: SHA-256 or null} or null, "
                f"got {json.dumps(libs)[:60]}")
    for k in ("runs", "warmup"):
        if k in pt and (type(pt[k]) is not int or pt[k] < 0):
            return (f"field '{k}': want a count, got "
                    f"{json.dumps(pt[k])[:60]}")
    return None


def throughput(pt):
    """(mean, slowest, fastest) in millions of messages/s, or None."""
    secs = pt.get("seconds") or []
    if pt["status"] != "ok" or not secs or min(secs) <= 0:
        return None
    mean = sum(secs) / len(secs)
    scale = pt["messages"] / 1e6
    return scale / mean, scale / max(secs), scale / min(secs)


def label_order(points):
    """Labels present, in sweep.py's table order, unknown ones last."""
    present = {p["label"] for p in points}
    known = [lb for lb in sweep.LABELS if lb in present]
    return known + sorted(present - set(known))


def by_n(points):
    """{N: points}, N ascending."""
    groups = {}
    for pt in points:
        groups.setdefault(pt["n"], []).append(pt)
    return dict(sorted(groups.items()))


def cell(pt):
    if pt is None:
        return ""
    tp = throughput(pt)
    return "fail" if tp is None else f"{tp[0]:.2f}"


def table(points):
    """Markdown table: rows = implementations, columns = threads N*R."""
    cols = sorted({p["threads"] for p in points})
    index = {(p["label"], p["threads"]): p for p in points}
    lines = ["| implementation | " + " | ".join(map(str, cols)) + " |",
             "|:---|" + "---:|" * len(cols)]
    for label in label_order(points):
        cells = [cell(index.get((label, c))) for c in cols]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# One of each per implementation of sweep.py's table; then colours of
# their own for labels not in it.
MARKERS = "os^vD<>phX*P8dHx"
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple",
          "tab:brown", "tab:pink", "tab:gray", "tab:olive", "tab:cyan",
          "black", "goldenrod", "teal", "navy", "maroon", "magenta",
          "crimson", "lime", "deepskyblue", "indigo", "sienna", "orchid",
          "darkslategray", "gold", "salmon", "olivedrab", "slateblue",
          "turquoise", "chocolate", "darkkhaki", "darkgreen", "rosybrown")


def line_style(i):
    """The i-th label's line: solid, dashed, dash-dotted while COLORS
    last, then a dash pattern of its own for each further round of them,
    so that no two labels look alike."""
    rnd = i // len(COLORS)
    if rnd:
        return (0, (2 * rnd + 2, 2, 1, 2))
    return "-" if i < 10 else "--" if i < len(sweep.LABELS) else "-."


def styles(points):
    """{label: marker, colour, line style}, the same in every figure: by
    the label's place in sweep.py's table, unknown labels after it."""
    unknown = sorted({p["label"] for p in points} - set(sweep.LABELS))
    return {label: {"marker": MARKERS[i % len(MARKERS)],
                    "color": COLORS[i % len(COLORS)],
                    "linestyle": line_style(i)}
            for i, label in enumerate((*sweep.LABELS, *unknown))}


def short_number(x):
    """A number as an axis shows it: 0.5, 16, 800, 80k, 8M."""
    for div, unit in ((1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:g}{unit}"
    return f"{x:g}"


def plain_ticks(ax, points, linear):
    """Ticks at the thread counts that have a successful point, and numbers
    without powers of ten: matplotlib's own label a narrow range as 8x10^0,
    9x10^0, 10^1."""
    from matplotlib import ticker
    xs = sorted({p["threads"] for p in points if throughput(p)})
    ax.xaxis.set_major_locator(ticker.FixedLocator(xs))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.tick_params(axis="x", labelsize="small")  # 100k and 200k apart
    short = ticker.FuncFormatter(lambda x, _: short_number(x))
    ax.xaxis.set_major_formatter(short)
    if linear:
        return

    class Plain(ticker.LogFormatter):
        """The ticks matplotlib labels (minor ones too on a narrow range),
        in plain numbers."""
        def __call__(self, x, pos=None):
            return short_number(x) if super().__call__(x, pos) else ""

    ax.yaxis.set_major_formatter(Plain())
    ax.yaxis.set_minor_formatter(Plain(labelOnlyBase=False))


def plot(points, n, out, plt, linear, style):
    """Draw one N's lines, each label in its `style`; return the PNG and
    SVG paths."""
    fig, ax = plt.subplots(figsize=(10, 6))
    for label in label_order(points):
        # A failed point breaks the line (NaN), rather than being bridged.
        rows = sorted((p["threads"], throughput(p) or (math.nan,) * 3)
                      for p in points if p["label"] == label)
        failed = sum(math.isnan(t[0]) for _, t in rows)
        name = label + (f" ({failed} failed)" if failed else "")
        xs = [x for x, _ in rows]
        ys = [t[0] for _, t in rows]
        err = [[t[0] - t[1] for _, t in rows], [t[2] - t[0] for _, t in rows]]
        ax.errorbar(xs, ys, yerr=err, label=name, capsize=3, **style[label])
    if not any(map(throughput, points)):  # nothing a log scale can show
        ax.text(0.5, 0.5, "no successful point", ha="center",
                transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
    else:
        ax.set_xscale("log")
        ax.set_yscale("linear" if linear else "log")
        plain_ticks(ax, points, linear)
    ax.set_xlabel("threads (N*R, log scale)")
    ax.set_ylabel("million messages / s" + ("" if linear else ", log scale")
                  + "\n(bars: slowest to fastest run)")
    ax.set_title(f"ring, N = {n} threads per cycle")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    paths = plot_paths(out, n)
    for path, kwargs in zip(paths, ({"dpi": 120}, {"metadata":
                                                   {"Date": None}})):
        with sweep.replacing(path, "wb") as f:
            fig.savefig(f, format=path.rsplit(".", 1)[1],
                        bbox_inches="tight", **kwargs)
    plt.close(fig)
    return paths


def machine(results):
    """The sweep's machine.json, or this machine's details now if there is
    none, and which; or None and what is wrong with the file."""
    path = os.path.join(results, "machine.json")
    try:
        with open(path) as f:
            info = json.load(f)
    except FileNotFoundError:
        return sweep.machine_info(), "read when the report was made"
    except (OSError, ValueError) as e:
        return None, f"{path}: cannot read it: {e}"
    except RecursionError:
        return None, f"{path}: cannot read it: nested too deep"
    if not isinstance(info, dict) or not isinstance(info.get("tools", {}),
                                                    dict):
        return None, (f"{path}: want a JSON object, with 'tools' one too, "
                      f"got {json.dumps(info)[:60]}")
    return info, "recorded by sweep.py"


def counted(counts):
    """"VALUE (k points), ..." of (value, k) pairs."""
    return ", ".join(f"{v} ({k} point{'s' * (k > 1)})" for v, k in counts)


def tally(points, key):
    """"VALUE (k points), ..." of the points' values of key ("unknown" for
    none), most points first, and the values."""
    counts = collections.Counter(p.get(key) or "unknown"
                                 for p in points).most_common()
    return counted(counts), [v for v, _ in counts]


def elsewhere(points, info, key):
    """The CPUs (key "cpu") or kernels the points were measured on,
    tallied, unless that is the header's alone (machine.json's, from the
    last sweep) or none is known (points of before they were recorded);
    else None."""
    used, values = tally(points, key)
    return None if values in ([info.get(key)], ["unknown"]) else used


def mixed_rounds(points):
    """"N=.. R=..: M a (k points), b (j points)" for every (N, R) whose
    implementations ran different M (results of several profiles in one
    directory): their figures in that column are not the same work."""
    ms = collections.defaultdict(collections.Counter)
    for p in points:
        ms[p["n"], p["r"]][p["m"]] += 1
    return [f"N={n} R={r}: M " + counted(sorted(c.items()))
            for (n, r), c in sorted(ms.items()) if len(c) > 1]


def mixed_runs(points):
    """The timed and warm-up runs of the points, tallied, if they differ
    (a sweep resumed with other --runs or --warmup): their error bars do
    not span alike; else None. Points that record none count only beside
    others that do."""
    used, values = tally([{"how": f"{p['runs']} runs after {p['warmup']} "
                           "warm-up" if "runs" in p and "warmup" in p
                           else None} for p in points], "how")
    return used if len(values) > 1 else None


def mixed_libraries(points):
    """"PATH: SHA-256 a (k points), b (j points)" for every shared library
    the points record with different SHA-256 (an upgrade during a resumed
    sweep, results of two machines), most points first: their figures are
    not of the same code. Points that record no libraries (an older
    sweep's, or ldd could not tell) or the library as not found say
    nothing."""
    shas = collections.defaultdict(collections.Counter)
    for p in points:
        for lib, h in (p.get("libraries") or {}).items():
            if h:
                shas[lib][h] += 1
    out = []
    for lib, c in sorted(shas.items()):
        if len(c) > 1:
            most = sorted(c.items(), key=lambda hk: (-hk[1], hk[0]))
            out.append(f"{lib}: SHA-256 "
                       + counted((h[:12], k) for h, k in most))
    return out


def warnings(points, info):
    """What report.md and stderr warn of, in order: each warning's
    paragraph for the report, and its lines for stderr."""
    out = []
    used, values = tally(points, "usched")
    many = len(values)
    if many > 1:
        out.append((f"**Warning: the points come from {many} different "
                    "usched commits** (summary.csv's usched column gives "
                    "each point's).",
                    [f"the points come from {many} usched commits: {used}"]))
    for key, name in sweep.MACHINE_FIELDS:
        used = elsewhere(points, info, key)
        if used:
            out.append(("**Warning: the points were not all measured on "
                        f"the {name} above**: {used} (summary.csv's {key} "
                        "column gives each point's).",
                        ["the points were not all measured on "
                         f"{info.get(key)}: {used}"]))
    runs = mixed_runs(points)
    if runs:
        out.append(("**Warning: the points were not all measured with the "
                    f"same runs**: {runs}.",
                    ["the points were not all measured with the same "
                     f"runs: {runs}"]))
    libs = mixed_libraries(points)
    if libs:
        out.append(("**Warning: the points were not all measured with the "
                    "same shared libraries**: " + "; ".join(libs)
                    + " (each point's file records its libraries).",
                    ["the points were not all measured with the same "
                     f"shared library {x}" for x in libs]))
    mixed = mixed_rounds(points)
    if mixed:
        out.append(("**Warning: implementations ran different M in the "
                    "same column** (results of several profiles?): "
                    + "; ".join(mixed) + ".",
                    [f"different M in one column: {x}" for x in mixed]))
    return out


def header(info, source, points):
    used, _ = tally(points, "usched")
    rows = [("CPU", f"{info.get('cpu')} ({info.get('cores')} cores, "
                    f"{info.get('cpus_used')} used)"),
            ("Kernel", info.get("kernel")),
            *((k, v) for k, v in (info.get("tools") or {}).items()),
            ("usched", used),
            ("Date", info.get("date"))]
    lines = ["# usched ring benchmark", "",
             f"Machine and toolchains ({source}; usched: the commits the "
             "points were measured at):", "",
             "| | |", "|:---|:---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    for paragraph, _ in warnings(points, info):
        lines += ["", paragraph]
    return "\n".join(lines)


def failures(points):
    """The failed points' reasons, in the tables' order: by N, then
    implementation, then R (not the files' names, where R=100 comes
    before R=2)."""
    order = {lb: i for i, lb in enumerate(label_order(points))}
    bad = sorted((p for p in points if p["status"] != "ok"),
                 key=lambda p: (p["n"], order[p["label"]], p["r"]))
    lines = [f"- {p['label']} N={p['n']} R={p['r']}: {p.get('reason')}"
             for p in bad]
    return "\n".join(lines)


def legend(points):
    """A table of what each label is, with its D and P (native threads) as
    its points ran them; several values where they differ."""
    what = {i.label: i.what for i in sweep.IMPLS}
    rows = ["| label | what | D | P |", "|:--|:--|--:|--:|"]
    for label in label_order(points):
        mine = [p for p in points if p["label"] == label]
        d, n = ({str(p.get(k, "?")) for p in mine} for k in ("d", "p"))
        rows.append(f"| {label} | {what.get(label, 'not in sweep.py')} | "
                    f"{', '.join(sorted(d))} | {', '.join(sorted(n))} |")
    absent = [lb for lb in sweep.LABELS if lb not in label_order(points)]
    if absent:
        rows += ["", f"No points of {', '.join(absent)}: not built, or not "
                 "chosen, when the sweep ran."]
    return "\n".join(rows)


def report(points, images, info, source, linear):
    """The whole report.md text."""
    axes = "the x axis is" if linear else "both axes are"
    parts = [header(info, source, points), "",
             "Millions of messages per second: N*R*M messages over the mean "
             "of the seconds each ring program printed for its run, "
             "thread creation included.  Columns: threads N*R.  \"fail\": "
             "the point failed; empty: not run.  In the plots error bars span "
             f"the slowest to the fastest run and {axes} logarithmic.", "",
             "D: extra stack bytes each thread keeps live; P: native "
             "threads.", "", legend(points), ""]
    for n, pts in by_n(points).items():
        png, svg = (os.path.basename(p) for p in images[n])
        parts += [f"## N = {n} threads per cycle", "",
                  f"[![N = {n}]({png})]({svg})", "", table(pts), ""]
    fails = failures(points)
    if fails:
        parts += ["## Failed points", "", fails, ""]
    return "\n".join(parts)


def plot_paths(out, n):
    return [os.path.join(out, f"c{n}.{ext}") for ext in ("png", "svg")]


def plotted_before(out):
    """The N whose plots an earlier run wrote to out, as its summary.csv
    lists them: those that this run does not redraw are stale."""
    try:
        with open(os.path.join(out, "summary.csv"), newline="") as f:
            return {int(row["n"]) for row in csv.DictReader(f)
                    if (row.get("n") or "").isdigit()}
    except (OSError, ValueError, csv.Error):
        return set()


def write_csv(points, path):
    cols = ["label", "n", "r", "threads", "m", "d", "p", "status",
            "mmsgs_mean", "mmsgs_slowest", "mmsgs_fastest", "runs", "reason",
            "usched", "cpu", "kernel"]
    with sweep.replacing(path, newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for p in sorted(points, key=lambda p: (p["n"], p["label"],
                                               p["threads"])):
            tp = throughput(p) or ("", "", "")
            w.writerow([p["label"], p["n"], p["r"], p["threads"], p["m"],
                        p.get("d"), p.get("p"), p["status"],
                        *(f"{v:.4f}" if v != "" else "" for v in tp),
                        len(p.get("seconds") or []), p.get("reason") or "",
                        p.get("usched") or "", p.get("cpu") or "",
                        p.get("kernel") or ""])


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Plots (c<N>.png/.svg), report.md and summary.csv "
        "from sweep.py's results.")
    ap.add_argument("--results", metavar="DIR",
                    default=os.path.join(ROOT, "report", "results-quick"),
                    help="sweep.py's results (default report/results-quick, "
                    "the quick profile's)")
    ap.add_argument("--out", metavar="DIR",
                    default=os.path.join(ROOT, "report"),
                    help="where to write (default report)")
    ap.add_argument("--linear", action="store_true",
                    help="linear throughput axis (default: log scale)")
    return ap.parse_args(argv)


def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("graph.py: matplotlib is missing "
              "(python3 -m pip install matplotlib)", file=sys.stderr)
        return 1
    if not os.path.isdir(opts.results):
        print(f"graph.py: no results directory {opts.results} "
              "(run scripts/sweep.py first)", file=sys.stderr)
        return 1
    try:
        points, errors = load_results(opts.results)
    except OSError as e:
        print(f"graph.py: cannot read {opts.results}: {e.strerror}",
              file=sys.stderr)
        return 1
    for line in errors:
        print(f"graph.py: {line}", file=sys.stderr)
    if errors:
        return 1
    if not points:
        print(f"graph.py: no results in {opts.results}", file=sys.stderr)
        return 1
    if not any(map(throughput, points)):
        print(f"graph.py: no successful points in {opts.results} "
              f"({len(points)} failed)", file=sys.stderr)
        return 1
    info, source = machine(opts.results)
    if info is None:
        print(f"graph.py: {source}", file=sys.stderr)
        return 1
    if os.path.exists(opts.out) and not os.path.isdir(opts.out):
        print(f"graph.py: --out {opts.out} is not a directory",
              file=sys.stderr)
        return 1
    for _, said in warnings(points, info):
        for line in said:
            print(f"graph.py: warning: {line}", file=sys.stderr)
    md = os.path.join(opts.out, "report.md")
    try:
        os.makedirs(opts.out, exist_ok=True)
        before = plotted_before(opts.out)
        style = styles(points)
        images = {n: plot(pts, n, opts.out, plt, opts.linear, style)
                  for n, pts in by_n(points).items()}
        stale = [path for n in sorted(before - set(images))
                 for path in plot_paths(opts.out, n)
                 if os.path.exists(path)]
        for path in stale:
            os.remove(path)
        with sweep.replacing(md) as f:
            f.write(report(points, images, info, source, opts.linear))
        write_csv(points, os.path.join(opts.out, "summary.csv"))
    except OSError as e:
        print(f"graph.py: cannot write {e.filename or opts.out}: "
              f"{e.strerror or e}", file=sys.stderr)
        return 1
    try:
        for paths in images.values():
            print("plot:", *paths)
        if stale:
            print("removed, of N no longer in the results:", *stale)
        print("report:", md)
        print("table:", os.path.join(opts.out, "summary.csv"), flush=True)
    except OSError as e:  # the files are written: only the list is lost
        sweep.quiet_stdout()
        if not isinstance(e, BrokenPipeError):
            print(f"graph.py: cannot write to stdout: {e.strerror or e}",
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
