#!/usr/bin/env python3
"""ab.py - two lcpi-bench-daemon binaries (say, main's and a branch's) side by
side on a shared, noisy machine: each repetition runs both with the same
arguments, in alternating order (A B, then B A), and the report gives each
figure's median and range per binary and the median and range of the
per-repetition ratio B / A, which cancels most of what the machine's other
load does to both, as a markdown table.

  sudo bench/daemon/ab.py OLD NEW --reps 5 -- --parts resolve --records 1000000
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def figures(result):
    """The figures worth comparing, by name, from one run's JSON."""
    out = {}
    for r in result.get("resolve", []):
        out[f"resolve 1..{r['max_count']}: ns/record"] = r["ns_per_record"]
    perf = result.get("perf", [])
    if isinstance(perf, dict):  # an older bench: one busy-loop run
        perf = [dict(perf, pcs=1, resolve_ns=0, misses=0, polls=0)]
    for r in perf:
        n = max(r["samples"], 1)
        name = f"perf N={r['pcs']}"
        if r["pcs"] == 0:
            if r.get("polls"):
                out[f"{name}: us/poll"] = r["cpu_ns"] / r["polls"] / 1000
            continue
        out[f"{name}: lcpid ns/sample"] = r["cpu_ns"] / n
        out[f"{name}: source ns/sample"] = (r["cpu_ns"] - r["resolve_ns"]) / n
        if r.get("records"):
            out[f"{name}: Add ns/record"] = r["resolve_ns"] / r["records"]
        out[f"{name}: miss %"] = 100 * r["misses"] / n
    for r in result.get("merge", []):
        out[f"merge {r['entries']}: first s"] = r["first_s"]
    return out


def line_fit(xs, ys):
    """Least squares y = a + b x, and R^2."""
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    a = my - b * mx
    sst = sum((y - my) ** 2 for y in ys)
    r2 = 1 - sum((y - a - b * x) ** 2 for x, y in zip(xs, ys)) / sst if sst else 0.0
    return a, b, r2


def miss_fits(runs):
    """On a shared host other processes' samples move each perf run's miss
    rate: each binary's lcpid ns/sample over all its perf runs (every N and
    repetition) as a line in the miss rate says what a sample costs at any."""
    lines = []
    for which in ("a", "b"):
        xs, ys = [], []
        for r in runs[which]:
            for name, v in r.items():
                if name.endswith(": lcpid ns/sample"):
                    xs.append(r[name.replace("lcpid ns/sample", "miss %")] / 100)
                    ys.append(v)
        if len(xs) >= 3:
            a, b, r2 = line_fit(xs, ys)
            lines.append(f"| {which.upper()} | {a:.1f} + {b:.1f} x miss rate | {r2:.2f} | "
                         f"{len(xs)} runs, misses {100 * min(xs):.1f}-{100 * max(xs):.1f} % |")
    if lines:
        print("\nlcpid ns/sample against the miss rate, fitted over every perf run:\n")
        print("| binary | ns per raw sample | R^2 | over |\n|---|---|---|---|")
        print("\n".join(lines))


def run(binary, args):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        subprocess.run([binary, *args, "--md", os.devnull, "--json", path], check=True)
        with open(path) as f:
            return figures(json.load(f))
    finally:
        os.unlink(path)


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("a", help="the first binary (the baseline)")
    p.add_argument("b", help="the second binary")
    p.add_argument("--reps", type=int, default=5, help="repetitions of the pair")
    p.add_argument("--json", help="write every run's figures here")
    p.epilog = "Arguments after -- go to lcpi-bench-daemon."
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    o = p.parse_args(argv[:cut])
    args = argv[cut + 1:]
    runs = {"a": [], "b": []}
    for rep in range(o.reps):
        order = ("a", "b") if rep % 2 == 0 else ("b", "a")
        for which in order:
            print(f"rep {rep + 1}/{o.reps}: {which}", file=sys.stderr)
            runs[which].append(run(getattr(o, which), args))
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"a": o.a, "b": o.b, "args": args, "runs": runs}, f, indent=1)
    names = [n for n in runs["a"][0] if all(n in r for r in runs["a"] + runs["b"])]
    print(f"A = `{o.a}`, B = `{o.b}`, arguments `{' '.join(args)}`; {o.reps} repetitions, "
          f"alternating which runs first; median (min-max).\n")
    print("| figure | A | B | B / A |\n|---|---|---|---|")
    for n in names:
        a = [r[n] for r in runs["a"]]
        b = [r[n] for r in runs["b"]]
        ratios = [y / x for x, y in zip(a, b) if x]
        print(f"| {n} | {spread(a)} | {spread(b)} | {spread(ratios) if ratios else '-'} |")
    miss_fits(runs)

if __name__ == "__main__":
    main()
