#!/usr/bin/env python3
"""stacks.py - what call stacks cost (issue 29), by bench/cost's slope
method, and the bytes a window's stacks add to the database.

Part 1, the slope: bench/cost's workload (lcpi-cost-spin, one spinning
thread per CPU) under each configuration at several rates; its CPU time
(wait4's rusage) fitted against the samples taken of it, with the nominal
rate as instrument (bench/cost/fit.py fit_iv). Configurations:
  lcpid         lcpid --period 1e9/RATE: the flat profile alone
  lcpid-stacks  the same, and --stack-frequency RATE: a stack per flat
                sample (the stack event at the flat rate); a stack's cost
                is this slope minus lcpid's
  perf-record   perf record -a -c PERIOD (flat)
  perf-g        perf record -a -g: frame-pointer call chains
  perf-dwarf    perf record -a --call-graph dwarf: 8 KiB user-stack copies
A stack's cost at lcpid's default stack rate (100/s/CPU) and at the flat
rate (5,000/s/CPU) is then the per-stack slope times that rate. lcpid
unwinds in its own process, so its own CPU per sample (schedstat) is the
other half of the price, stated beside.

Part 2, the bytes: two lcpids sample the same load (a compile, python and
shell loop) at once for WINDOWS windows of 30 s, one without stacks and one
with --stack-frequency 100; after each window closes, each database's size
(its pages in use: page_count - freelist_count) is read. Growth per window is (last - first) / (windows - 1),
the first window left out (it stores the kernel's symbols and the images'
first rows); and per table (SQLite's dbstat) what the stack tables hold.

Writes OUT.json and OUT.md (command at the top). Needs root and a build
with lcpid, lcpictl and bench/cost's programs. ~15 minutes on a loaded
2-CPU host with the default 2 repetitions (--quick: ~3).
"""
import argparse
import datetime
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(REPO, "bench", "cost"))
import cost  # noqa: E402  (run_all, calibrate, spin_cmd, fits, machine)
import profilers  # noqa: E402

CONFIGS = ["lcpid", "lcpid-stacks", "perf-record", "perf-g", "perf-dwarf"]
PERF_EXTRA = {"perf-record": [], "perf-g": ["-g"], "perf-dwarf": ["--call-graph", "dwarf"]}
DEFAULT_STACK_RATE = 100  # lcpid's documented default when stacks are on
FLAT_RATE = 5000  # lcpid's default flat rate
STACK_STATS = []  # per lcpid-stacks run, in run order: the status deltas


class LcpidStacks(profilers.LcpidProf):
    """lcpid with stacks at the flat rate; keeps its stack counters."""

    def __init__(self, build, period, rate):
        super().__init__(build, "perf", cost.EVENT, period,
                         ["--stack-frequency", str(rate), "--max-stacks", "65536"])

    def disarm(self, wpid):
        res = super().disarm(wpid)
        a, b = self.status_after, self.before
        STACK_STATS.append({k: int(a.get(k, 0) - b.get(k, 0))
                            for k in ("stacks", "stacks_lost", "unwind_stacks",
                                      "unwind_not_in_time", "samples")})
        return res


def start(cfg, rate, a):
    period = 1_000_000_000 // rate
    if cfg == "lcpid":
        return profilers.LcpidProf(a.build, "perf", cost.EVENT, period)
    if cfg == "lcpid-stacks":
        return LcpidStacks(a.build, period, rate)
    return profilers.PerfRecord(cost.EVENT, period, PERF_EXTRA[cfg])


def diff_ns(x, y):
    """(slope x - slope y, its standard error) in ns (the fits are in
    seconds per sample), the two fits independent."""
    return 1e9 * (x["slope"] - y["slope"]), 1e9 * (x["slope_se"] ** 2 + y["slope_se"] ** 2) ** 0.5


def slopes(a):
    iters = cost.calibrate(a.build, a.cpu_seconds)
    cost.log("stacks: %d iterations per thread (~%.1f CPU-s), %d repetitions at %s/s/CPU" % (
        iters, a.cpu_seconds, a.reps, ",".join(map(str, a.rates))))
    runs = cost.run_all(CONFIGS, a.rates, a.reps, a, cost.spin_cmd(a.build, iters), a.seed,
                        start)
    stacked = [r for r in runs if r["config"] == "lcpid-stacks" and r["rate"]]
    for r, s in zip(stacked, STACK_STATS):
        r["stack_status"] = s
    fits = cost.fits(runs, CONFIGS)
    out = {"iterations": iters, "runs": runs, "fits": fits}
    flat, stk = fits["lcpid"]["cpu"], fits["lcpid-stacks"]["cpu"]
    if flat and stk:
        ns, se = diff_ns(stk, flat)
        own = None
        if fits["lcpid"]["profiler_ns_per_sample"] and fits["lcpid-stacks"]["profiler_ns_per_sample"]:
            own = (fits["lcpid-stacks"]["profiler_ns_per_sample"] -
                   fits["lcpid"]["profiler_ns_per_sample"])
        taken = sum(s["stacks"] for s in STACK_STATS)
        lost = sum(s["stacks_lost"] for s in STACK_STATS)
        out["per_stack"] = {
            "workload_ns": ns, "workload_ns_se": se, "lcpid_own_ns": own,
            "stacks_taken": taken, "stacks_lost": lost,
            "overhead_pct_at_default": 100 * ns * DEFAULT_STACK_RATE / 1e9,
            "overhead_pct_at_flat_rate": 100 * ns * FLAT_RATE / 1e9,
            "lcpid_own_pct_at_default": 100 * own * DEFAULT_STACK_RATE / 1e9 if own else None,
        }
    return out


def db_bytes(path):
    """The bytes the database uses: its pages less the free ones (the file
    grows and shrinks in steps of its own)."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=30)
    try:
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()
    return (pages - free) * size


def table_bytes(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
        windows = db.execute("SELECT count(*) FROM epochs WHERE kind = 'window'").fetchone()[0]
        stack_rows = db.execute("SELECT count(*) FROM stack_counts").fetchone()[0]
        stacks = db.execute("SELECT count(*), coalesce(sum(length(frames)), 0) FROM stacks"
                            ).fetchone()
    finally:
        db.close()
    return {"tables": dict(rows), "window_epochs": windows, "stack_count_rows": stack_rows,
            "stacks": stacks[0], "stack_frame_bytes": stacks[1]}


LOAD = r"""
while :; do
  for f in "$REPO"/tests/integration/workloads/*.c; do gcc -O2 -c "$f" -o /dev/null 2>/dev/null; done
  /usr/bin/python3 "$REPO/tests/integration/workloads/python_callers.py" 2
  python3 -c 'import hashlib; [hashlib.sha256(str(i).encode()).digest() for i in range(200000)]'
  sh -c 'for i in $(seq 2000); do :; done'
done
"""


def window_bytes(a):
    """Two lcpids, with and without stacks, over the same load."""
    work = tempfile.mkdtemp(prefix="lcpi-stacks-bytes-")
    daemons, dbs = [], {}
    for name, extra in (("flat", []), ("stacks", ["--stack-frequency", str(DEFAULT_STACK_RATE)])):
        d = os.path.join(work, name)
        os.makedirs(d)
        dbs[name] = os.path.join(d, "p.db")
        daemons.append(subprocess.Popen(
            [os.path.join(a.build, "daemon/lcpid"), "--foreground", "--source", "perf",
             "--db", dbs[name], "--socket", os.path.join(d, "s"), "--events", cost.EVENT,
             "--window", "30s", "--flush-interval", "10", "--max-overhead", "0",
             "--log-level", "warn"] + extra, stderr=open(os.path.join(d, "log"), "w")))
    load = subprocess.Popen(["bash", "-c", LOAD], env=dict(os.environ, REPO=REPO),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    sizes = {n: [] for n in dbs}
    try:
        # read each size 12 s after a window boundary (the window closed and
        # its rows merged: flush every 10 s)
        for _ in range(a.windows + 1):
            now = time.time()
            time.sleep(30 - now % 30 + 12)
            for n, p in dbs.items():
                sizes[n].append(db_bytes(p))
            cost.log("stacks: window sizes %s" % {n: v[-1] for n, v in sizes.items()})
    finally:
        os.killpg(load.pid, 15)
        load.wait()
        for d in daemons:
            d.terminate()
        for d in daemons:
            d.wait(timeout=60)
    out = {}
    for n, p in dbs.items():
        s = sizes[n]
        out[n] = {"sizes": s, "growth_per_window": (s[-1] - s[1]) / (len(s) - 2),
                  **table_bytes(p)}
    subprocess.run(["rm", "-rf", work])
    return out


def report(res, out):
    L = ["# Call stacks: cost per stack and bytes per window (bench/stacks)", "",
         "Generated by `%s` on %s; %.0f minutes. Machine: %d CPUs (%s), kernel %s; the CPUs "
         "are shared with other jobs (builds and tests ran meanwhile)." % (
             res["command"], res["started"], res["minutes"], res["machine"]["nproc"],
             res["machine"]["cpu_model"], res["machine"]["kernel"]), ""]
    s = res["slopes"]
    L += ["## Cost per sample, as a slope", "",
          "bench/cost's method (bench/results/cost.md says it in full): lcpi-cost-spin, %d "
          "iterations per thread (~%.1f CPU-s), at %s samples/s/CPU, %d repetitions in a fresh "
          "random order each; workload CPU against the samples taken of it, the rate as "
          "instrument. lcpid-stacks takes a stack per flat sample (--stack-frequency = the "
          "flat rate), so its slope is a flat sample and a stack." % (
              s["iterations"], res["cpu_s"], ", ".join(map(str, res["rates"])), res["reps"]), "",
          "| configuration | workload CPU ns/sample (95 % CI) | R² | ÷ perf record's | "
          "profiler's own CPU ns/sample (total over samples handled) | lost |", "|---|---|---|---|---|---|"]
    for cfg in CONFIGS:
        f = s["fits"][cfg]
        c = f["cpu"]
        rat = f.get("ratios", {}).get("to_perf")
        L.append("| %s | %s | %s | %s | %s | %d |" % (
            cfg, "%.0f ± %.0f" % (1e9 * c["slope"], 1e9 * c["slope_ci95"]) if c else "n/a",
            "%.3f" % c["r2"] if c and c["r2"] is not None else "n/a",
            "%.2f ± %.2f" % (rat["ratio"], rat["ci95"]) if rat and rat["ratio"] is not None
            else "n/a",
            "%.0f" % f["profiler_ns_per_sample"] if f["profiler_ns_per_sample"] else "-",
            f["lost"]))
    p = s.get("per_stack")
    if p:
        half = 1.96 * p["workload_ns_se"]
        if half >= abs(p["workload_ns"]):
            L += ["", "**Not resolved on this run:** a stack's cost to the workload, %.0f ± %.0f "
                  "ns, is within its own 95 %% interval of zero; R² says how much of each line "
                  "is noise (the other jobs' load on the 2 CPUs). The workload-side figures "
                  "below are therefore bounds, not measurements; lcpid's own CPU per stack "
                  "is the firmer figure." % (p["workload_ns"], half)]
        L += ["", "A stack (lcpid-stacks minus lcpid, standard errors in quadrature): "
              "**%.0f ± %.0f ns of the workload's CPU** (the interrupt: the kernel call chain, "
              "the 8 KiB user-stack copy and the registers), and %s ns of lcpid's own CPU "
              "(reading the stack ring, the DWARF unwind, the stack table). At the default "
              "100 stacks/s/CPU: **%.2f %%** of each CPU in the workload, %s in lcpid; at the "
              "flat rate (5,000/s/CPU): %.1f %% in the workload. Stacks taken %d, lost %d "
              "(the stack ring, ~110 stacks a CPU, read every 100 ms: above ~1,000/s/CPU "
              "lcpid loses stacks, and a lost stack costs less)." % (
                  p["workload_ns"], 1.96 * p["workload_ns_se"],
                  "%.0f" % p["lcpid_own_ns"] if p["lcpid_own_ns"] is not None else "n/a",
                  p["overhead_pct_at_default"],
                  "%.2f %%" % p["lcpid_own_pct_at_default"]
                  if p["lcpid_own_pct_at_default"] is not None else "n/a",
                  p["overhead_pct_at_flat_rate"], p["stacks_taken"], p["stacks_lost"])]
        by_rate = {}
        for r in s["runs"]:
            st = r.get("stack_status")
            if st:
                t = by_rate.setdefault(r["rate"], [0, 0, 0])
                t[0] += st["stacks"]
                t[1] += st["unwind_not_in_time"]
                t[2] += st["stacks_lost"]
        L += ["", "lcpid keeping up (all CPUs' stacks, summed over the repetitions): " + "; ".join(
            "at %d/s/CPU %d stacks, %d not unwound in time (%.0f %%), %d lost" % (
                rate, t[0], t[1], 100 * t[1] / t[0] if t[0] else 0, t[2])
            for rate, t in sorted(by_rate.items())) +
            ". Not unwound in time keeps the frame-pointer chain (docs/operators.md); the "
            "flat samples lcpid lost with stacks on are the table's lost column."]
    b = res["bytes"]
    L += ["", "## Bytes per window", "",
          "Two lcpids at once over the same load (gcc, python3, sh loops), 30-s windows, "
          "%d windows after the first; growth per window = (last size - first) / windows, "
          "the first window (kernel symbols, first rows of every image) left out." % (
              res["windows"] - 1), "",
          "| lcpid | growth per 30-s window, bytes | database at the end, bytes in use | "
          "stack tables at the end (stacks + stack_counts, dbstat) | windows | distinct "
          "stacks | stack_counts rows |", "|---|---|---|---|---|---|---|"]
    for n in ("flat", "stacks"):
        d = b[n]
        st = d["tables"].get("stacks", 0) + d["tables"].get("stack_counts", 0)
        L.append("| %s | %.0f | %d | %d | %d | %d | %d |" % (
            "flat only" if n == "flat" else "with --stack-frequency 100", d["growth_per_window"],
            d["sizes"][-1], st, d["window_epochs"], d["stacks"], d["stack_count_rows"]))
    extra = b["stacks"]["growth_per_window"] - b["flat"]["growth_per_window"]
    L += ["", "Stacks at 100/s/CPU add **%.0f bytes per 30-s window** (%.1f MB an hour, "
          "%.0f %% of the flat profile's growth)." % (
              extra, extra * 120 / 1e6,
              100 * extra / b["flat"]["growth_per_window"] if b["flat"]["growth_per_window"]
              else float("nan")), ""]
    with open(out + ".md", "w") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--out", default=os.path.join(REPO, "bench/results/stacks"))
    ap.add_argument("--quick", action="store_true",
                    help="1 repetition of 0.4 CPU-s runs, 2 windows: checks the tooling in "
                    "about 3 minutes; indicative numbers only")
    ap.add_argument("--rates", default="0,1000,2000,4000", help="samples/s/CPU")
    ap.add_argument("--reps", type=int, help="repetitions (default 2, --quick 1)")
    ap.add_argument("--cpu-seconds", type=float, help="per thread (default 1.0, --quick 0.4)")
    ap.add_argument("--windows", type=int, help="30-s windows in part 2 (default 4, --quick 2)")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--report", metavar="JSON", help="only write OUT.md again from a saved run")
    a = ap.parse_args()
    if a.report:
        with open(a.report) as f:
            report(json.load(f), a.out)
        return 0
    a.reps = a.reps or (1 if a.quick else 2)
    a.cpu_seconds = a.cpu_seconds or (0.4 if a.quick else 1.0)
    a.windows = a.windows or (2 if a.quick else 4)
    a.rates = [int(r) for r in a.rates.split(",")]
    a.build = os.path.abspath(a.build)
    started = datetime.datetime.now(datetime.timezone.utc)
    res = {"command": " ".join(["bench/stacks/stacks.py"] + sys.argv[1:]),
           "started": started.isoformat(timespec="seconds"), "machine": cost.machine(),
           "rates": a.rates, "reps": a.reps, "cpu_s": a.cpu_seconds, "windows": a.windows}
    res["slopes"] = slopes(a)
    res["bytes"] = window_bytes(a)
    res["minutes"] = (datetime.datetime.now(datetime.timezone.utc) - started).seconds / 60
    with open(a.out + ".json", "w") as f:
        json.dump(res, f, indent=1)
    report(res, a.out)
    cost.log("stacks: wrote %s.json, .md" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
