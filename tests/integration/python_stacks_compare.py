#!/usr/bin/env python3
"""python_stacks_compare.py PERF_SCRIPT LCPI_CSV HOT IMAGE EXPECT [BOUND]

The callers of HOT in `perf script -F ip,sym,dso` (perf record
--call-graph dwarf) against `lcpiprof --callers HOT --format csv`, counted
the same way on both sides (lcpiprof's rule, libprofile/report/callers.h):
a stack counts once per immediate caller of HOT however often HOT recurs.

Compared: the callers in IMAGE (Debian's python3.11), each as a share of
the callers in IMAGE on its side. A caller without a symbol (a static
function of the stripped binary: gen_send_ex2, which resumes the
generator) is named by its return address, as lcpi names it
("python3.11+0x180ebe"; perf's "[unknown]" with the same offset). Left
out, on both sides: the ends of walks
(the two unwinders stop differently: lcpi's `[stack end: ...]` markers,
perf's last frame) and stacks of other processes (lcpid samples the whole
machine, perf only the workload; another python on the host has its own
image). EXPECT (comma-separated) must be among the named callers of both.

The bound (BOUND points, default 3): the workload runs 15 s; each side
must have at least 2,000 callers counted in IMAGE (2,400-4,800 per 10 s
on this 2-CPU host at load 7, where python gets a quarter of a CPU; more
when idle). A share p of n has a standard error of sqrt(p(1-p)/n): at
n = 2,000 and the largest share (p = 0.74) about 1.0 point, and the
difference of two independent samplings sqrt(2) times that, 1.4 points:
3 points is over 2 of those. But the two tools sample the same run, whose
phases (module loop, map, generator) are common to both, so the spread of
the difference is smaller: 0.15 to 1.04 points in four runs. The tools'
differences: perf samples the one process (cpu-clock, 1,000/s), lcpid
the machine (its stack event, 1,000/s/CPU), and their walks end in
different places (lcpid's walk can also end "not unwound in time" under
load): a lost stack drops out of its side's callers; the normalisation to
the callers counted cancels that as long as the loss does not depend on
the caller.
"""
import csv
import os
import re
import sys

perf_path, lcpi_path, hot, image = sys.argv[1:5]
expect = [e for e in sys.argv[5].split(",") if e]
bound = float(sys.argv[6]) if len(sys.argv) > 6 else 3.0

FRAME = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def named(name):
    """Not the ends of walks: lcpi's "[stack end: ...]"."""
    return bool(name) and not name.startswith(("0x", "["))


def perf_callers():
    counts, through, stack = {}, 0, []

    def flush():
        nonlocal through
        seen = set()
        for i, (sym, _) in enumerate(stack):
            if sym == hot and i + 1 < len(stack):
                seen.add(stack[i + 1])
        if any(sym == hot for sym, _ in stack):
            through += 1
        for key in seen:
            counts[key] = counts.get(key, 0) + 1

    for line in open(perf_path, errors="replace"):
        if not line.strip():
            flush()
            stack = []
            continue
        m = FRAME.match(line)
        if m:
            sym, dso = re.sub(r"\+0x[0-9a-f]+$", "", m.group(2)), m.group(3)
            if sym == "[unknown]":  # lcpi's name for it: the image's file name + offset
                sym = f"{os.path.basename(dso)}+0x{int(m.group(1), 16):x}"
            stack.append((sym, dso))
    flush()
    return counts, through


def lcpi_callers():
    counts, through = {}, 0
    for row in csv.DictReader(open(lcpi_path)):
        counts[(row["caller"], row["image"])] = int(row["stacks"])
    return counts


def shares(counts):
    mine = {name: n for (name, img), n in counts.items() if img == image and named(name)}
    total = sum(mine.values())
    return {name: 100.0 * n / total for name, n in mine.items()} if total else {}, total


perf_counts, perf_through = perf_callers()
perf, perf_named = shares(perf_counts)
lcpi, lcpi_named = shares(lcpi_callers())
print(f"perf: {perf_through} stacks through {hot}, {perf_named} named callers in {image}")
print(f"lcpi: {lcpi_named} named callers in {image}")
names = sorted(set(perf) | set(lcpi), key=lambda n: -max(perf.get(n, 0), lcpi.get(n, 0)))
worst = 0.0
print(f"{'caller':32} {'perf %':>8} {'lcpi %':>8} {'diff':>6}")
for name in names:
    p, l = perf.get(name, 0.0), lcpi.get(name, 0.0)
    worst = max(worst, abs(p - l))
    print(f"{name[:32]:32} {p:8.2f} {l:8.2f} {l - p:+6.2f}")
print(f"largest difference: {worst:.2f} points (bound {bound})")
ok = True
for n, side in ((perf_named, "perf"), (lcpi_named, "lcpi")):
    if n < 2000:
        print(f"FAIL: {side} has only {n} named callers of {hot} (want >= 2000: run it longer)")
        ok = False
for e in expect:
    if e not in perf or e not in lcpi:
        print(f"FAIL: expected caller {e} is not named by both (perf {e in perf}, lcpi {e in lcpi})")
        ok = False
if worst > bound:
    print(f"FAIL: the shares differ by {worst:.2f} points, more than {bound}")
    ok = False
sys.exit(0 if ok else 1)
