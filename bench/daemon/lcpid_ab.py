#!/usr/bin/env python3
"""lcpid_ab.py - a real lcpid's own CPU per raw sample, two builds side by
side: for each repetition and each sled size N, lcpid of build A and of
build B (alternating which goes first) runs with the perf source at its
default rate while lcpi-bench-sled spins one pinned child per CPU over N
distinct pcs (N sets the hash tables' miss rate). The CPU is lcpid's, all
threads, from /proc/PID/task/*/schedstat (exact ns), between two
`lcpictl status` calls SECONDS apart once start-up is over; the samples
and the miss rate are status's over the same interval. With --perf-record
DIR, B's first run at each N is also profiled: `perf record -e cpu-clock
-p PID` over the interval (no PMU here: cpu-clock; kernel code included).

  sudo bench/daemon/lcpid_ab.py build-main build --pcs 1,20000 --reps 5
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "overhead"))
import trial  # noqa: E402  (Lcpid, parse_status, _proc_cpu)

START_S = 1.5  # lcpid's start-up (kallsyms, the /proc scan) is not the steady cost


def status(l):
    kv, _ = trial.parse_status(l.ctl("status"))
    return kv


def one(build, sled, pcs, seconds, extra, profile=None):
    l = trial.Lcpid(build, "perf", "cycles", extra)
    w = None
    perf = None
    try:
        w = subprocess.Popen([sled, "--pcs", str(pcs), "--seconds", str(seconds + START_S + 2)])
        time.sleep(START_S)
        s0, c0 = status(l), trial._proc_cpu(l.pid)
        if profile:
            perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-c", "100000",
                                     "-g", "-p", str(l.pid), "-o", profile],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(seconds)
        s1, c1 = status(l), trial._proc_cpu(l.pid)
        if perf:
            perf.send_signal(2)
            perf.wait(timeout=60)
        samples = s1["samples"] - s0["samples"]
        hits, misses = s1["hits"] - s0["hits"], s1["misses"] - s0["misses"]
        return {"ns_per_sample": 1e9 * (c1 - c0) / max(samples, 1), "samples": samples,
                "miss_pct": 100 * misses / max(hits + misses, 1),
                "records": s1["records"] - s0["records"], "lost": s1["lost"] - s0["lost"]}
    finally:
        if w:
            w.wait()
        l.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("a", help="build directory A (daemon/lcpid, tools/lcpictl)")
    p.add_argument("b", help="build directory B")
    p.add_argument("--sled", help="lcpi-bench-sled (default: B's bench/daemon/lcpi-bench-sled)")
    p.add_argument("--pcs", default="1,20000", help="sled sizes, comma-separated")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--frequency", type=int, help="lcpid --frequency (default: lcpid's, 5,000)")
    p.add_argument("--perf-record", metavar="DIR", help="profile B's first run per N into DIR")
    o = p.parse_args()
    sled = o.sled or os.path.join(o.b, "bench/daemon/lcpi-bench-sled")
    pcs = [int(n) for n in o.pcs.split(",")]
    runs = {(w, n): [] for w in "ab" for n in pcs}
    for rep in range(o.reps):
        for n in pcs:
            for w in (("a", "b") if rep % 2 == 0 else ("b", "a")):
                profile = None
                if o.perf_record and w == "b" and not runs[(w, n)]:
                    os.makedirs(o.perf_record, exist_ok=True)
                    profile = os.path.join(o.perf_record, "lcpid-pcs%d.data" % n)
                extra = ["--frequency", str(o.frequency)] if o.frequency else []
                r = one(getattr(o, w), sled, n, o.seconds, extra, profile)
                runs[(w, n)].append(r)
                print("rep %d N=%d %s: %.1f ns/sample, %d samples, miss %.1f %%, lost %d" % (
                    rep + 1, n, w, r["ns_per_sample"], r["samples"], r["miss_pct"], r["lost"]),
                    file=sys.stderr)
    print("A = %s\nB = %s\n%d repetitions of %g s, alternating; median (min-max)\n" % (
        o.a, o.b, o.reps, o.seconds))
    print("| N pcs | miss % | A ns/sample | B ns/sample | B / A |\n|---|---|---|---|---|")
    for n in pcs:
        a = [r["ns_per_sample"] for r in runs[("a", n)]]
        b = [r["ns_per_sample"] for r in runs[("b", n)]]
        ratio = [y / x for x, y in zip(a, b)]
        miss = statistics.median(r["miss_pct"] for r in runs[("a", n)] + runs[("b", n)])

        def f(v):
            return "%.1f (%.1f-%.1f)" % (statistics.median(v), min(v), max(v))

        print("| %d | %.1f | %s | %s | %s |" % (n, miss, f(a), f(b),
                                               "%.2f (%.2f-%.2f)" % (statistics.median(ratio),
                                                                     min(ratio), max(ratio))))


if __name__ == "__main__":
    main()
