#!/usr/bin/env python3
"""cost.py - the cost of one sample, as a slope (issue 15): a CPU-bound
workload (lcpi-cost-spin: one spinning thread per CPU, a fixed number of
iterations) runs under each configuration at several sampling rates, and
its CPU time (user + system, from wait4's rusage) is fitted against the
samples the profiler took while it ran. The slope is the CPU time one
sample costs the workload, in ns; its 95 % interval comes from Student's t;
R^2 says how straight the line is. The same fit is made of wall time.

Configurations (--configs), every one at every rate of --rates:
  floor        lcpi-cost-floor: the same perf events opened system-wide on
               every CPU, rings read and discarded (the kernel's cost alone)
  perf-record  perf record -a -e EVENT -c PERIOD
  lcpid        lcpid --source perf --events EVENT --period PERIOD
  lcpid-governed  the same with --max-overhead BUDGET (issue 27): asked
               --governed-rate, armed once lcpid calibrated and its governor
               chose the rate the budget allows; --governed-runs cells of it
               per repetition (and one bare), fitted with the governed rate as
               instrument; its slowdown is the workload's CPU time over the
               bare runs' (every configuration's rate 0), and a short run of
               the known-shares workload (tests/integration/workloads/shares.c)
               at the governed rate checks the shares against the truth
  in the QEMU guest (--guest; scripts/qemu/run-guest.sh, Debian's 6.1
  kernel under TCG, lcpi.ko loaded), the same four, with lcpid --source kmod:
  guest-floor, guest-perf-record, guest-lcpid, guest-lcpid-governed (its
  known-shares run too, in the guest)
Rate 0 is the bare workload, run once per configuration and repetition
(each configuration's intercept). Every repetition runs every (configuration,
rate) cell once, in a fresh random order (seeded, --seed), so drift and the
other load on the machine fall on every cell alike. Each profiled run starts
a fresh profiler, arms it just before the workload and disarms it just
after, so the sample count is that of the workload's run.

The event is cpu-clock (this host has no PMU) and the period 1e9/rate ns;
lcpid randomises its period by +-10 % around that mean (its default).
Writes OUT.json (every run, every fit) and OUT.md + OUT.png (cost_report.py).
Needs root and a build with lcpid, lcpictl and bench/cost's programs.
"""
import argparse
import csv
import datetime
import json
import math
import os
import platform
import random
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import fit  # noqa: E402
import profilers  # noqa: E402
import cost_report  # noqa: E402

GOVERNED = "lcpid-governed"
HOST_CONFIGS = ["floor", "perf-record", "lcpid", GOVERNED]
GUEST_GOVERNED = "guest-" + GOVERNED
GUEST_CONFIGS = ["guest-floor", "guest-perf-record", "guest-lcpid", GUEST_GOVERNED]
EVENT = "cpu-clock"
# How long a governed run waits for lcpid's calibration and its rate in the
# guest, where TCG's emulated interrupts make a calibration slow and noisy
GUEST_GOVERN_TIMEOUT_S = 180
MODES = {  # repetitions, CPU seconds per thread per run, guest repetitions, guest s
    "full": (8, 1.5, 4, 1.0),
    "quick": (2, 0.4, 1, 0.3),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def spin_cmd(build, iterations):
    return [os.path.join(build, "bench/cost/lcpi-cost-spin"), str(iterations)]


def run_workload(cmd, prof=None):
    """(CPU seconds from wait4's rusage, wall seconds, pid)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    try:
        if prof:
            prof.workload(p.pid)
        _, status, ru = os.wait4(p.pid, 0)
    except BaseException:  # ^C or a profiler's error: no workload left behind
        p.kill()
        p.wait()
        raise
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise profilers.TrialError("%s exited %d" % (" ".join(cmd), p.returncode))
    return ru.ru_utime + ru.ru_stime, wall, p.pid


def calibrate(build, cpu_s_per_thread):
    """Iterations that take about cpu_s_per_thread of CPU per thread here."""
    n = 20_000_000
    while True:
        cpu, _, _ = run_workload(spin_cmd(build, n) + ["1"])
        if cpu > 0.2:
            return int(n * cpu_s_per_thread / cpu)
        n *= 4


def start(cfg, rate, a):
    period = 1_000_000_000 // rate
    base = cfg.replace("guest-", "")
    if base == "floor":
        return profilers.Floor(a.build, period)
    if base == "perf-record":
        return profilers.PerfRecord(EVENT, period)
    source = "kmod" if cfg.startswith("guest-") else "perf"
    return profilers.LcpidProf(a.build, source, EVENT, period,
                               a.budget if base == GOVERNED else 0, govern_timeout=a.govern_timeout)


def one_run(cfg, rate, a, cmd, start_fn=None):
    """start_fn(cfg, rate, a) -> a profiler; default start (bench/stacks has its own)."""
    out = {"config": cfg, "rate": rate}
    if rate == 0:
        out["cpu_s"], out["wall_s"], _ = run_workload(cmd)
        out.update(samples=0, samples_all=0, lost=0, profiler_cpu_s=0.0)
        return out
    prof = (start_fn or start)(cfg, rate, a)
    try:
        prof.arm()
        p0 = profilers.proc_cpu(prof.pid)
        out["cpu_s"], out["wall_s"], wpid = run_workload(cmd, prof)
        out["samples"], out["samples_all"], out["lost"] = prof.disarm(wpid)
        out["profiler_cpu_s"] = prof.cpu_end - p0
        if getattr(prof, "governed", None):
            out["governed"] = prof.governed
        prof.stop()
    except BaseException:
        prof.kill()
        raise
    return out


def run_all(configs, rates, reps, a, cmd, seed, start_fn=None):
    cells = [(c, r) for c in configs if not c.endswith(GOVERNED) for r in rates]
    for gov in (c for c in configs if c.endswith(GOVERNED)):
        # one asked rate, several runs, and its bare one
        cells += [(gov, 0)] + [(gov, a.governed_rate)] * a.governed_runs
    rng = random.Random(seed)
    runs, t0, total = [], time.monotonic(), reps * len(cells)
    for rep in range(reps):
        rng.shuffle(cells)
        for cfg, rate in cells:
            r = one_run(cfg, rate, a, cmd, start_fn)
            r["rep"] = rep
            runs.append(r)
            el = time.monotonic() - t0
            log("[%3d/%d] rep %d %-17s %6d/s: cpu %.3fs wall %.3fs samples %d%s | %dm%02ds, "
                "~%dm left" % (len(runs), total, rep, cfg, rate, r["cpu_s"], r["wall_s"],
                               r["samples"], " LOST %d" % r["lost"] if r["lost"] else "",
                               el // 60, el % 60, el / len(runs) * (total - len(runs)) / 60))
    return runs


def fits(runs, configs):
    """Per configuration: CPU-time and wall-time lines against samples,
    the profiler's own CPU per sample, and the ratios."""
    out = {}
    for cfg in configs:
        rs = [r for r in runs if r["config"] == cfg]
        xs = [r["samples"] for r in rs]
        # the governed row's rate is the one lcpid chose, not the asked one
        zs = [r["governed"]["governed_rate_per_cpu"] if r.get("governed") else r["rate"]
              for r in rs]
        # the nominal rate as instrument (fit.fit_iv: samples follow CPU time)
        cpu = fit.fit_iv(xs, [r["cpu_s"] for r in rs], zs)
        wall = fit.fit_iv(xs, [r["wall_s"] for r in rs], zs)
        ols = fit.fit(xs, [r["cpu_s"] for r in rs])
        # The profiler's own CPU goes to every sample it handles (every CPU's,
        # every process's), not only the workload's: divided by all of them.
        prof = [r for r in rs if r["samples_all"]]
        own = fit.fit([r["samples_all"] for r in prof], [r["profiler_cpu_s"] for r in prof])
        tot_s = sum(r["samples_all"] for r in prof)
        out[cfg] = {
            "cpu": cpu.as_dict() if cpu else None,
            "wall": wall.as_dict() if wall else None,
            "cpu_ols": ols.as_dict() if ols else None,
            "profiler_ns_per_sample": 1e9 * sum(r["profiler_cpu_s"] for r in prof) / tot_s
            if tot_s else None,
            "profiler_fit": own.as_dict() if own else None,
            "lost": sum(r["lost"] for r in rs), "runs": len(rs),
            "_lines": (cpu, wall),
        }
    for prefix in ("", "guest-"):
        fl, pr = out.get(prefix + "floor"), out.get(prefix + "perf-record")
        for cfg in (prefix + "floor", prefix + "perf-record", prefix + "lcpid",
                    prefix + GOVERNED):
            if cfg not in out or out[cfg]["cpu"] is None:
                continue
            line = out[cfg]["_lines"][0]
            rat = {}
            if pr and pr["cpu"]:
                rat["to_perf"] = fit.ratio(line, pr["_lines"][0])
            if fl and fl["cpu"]:
                rat["to_floor"] = fit.ratio(line, fl["_lines"][0])
            if fl and pr and fl["cpu"] and pr["cpu"] and cfg != prefix + "floor":
                rat["above_floor_to_perf"] = fit.ratio(line, pr["_lines"][0], fl["_lines"][0])
            out[cfg]["ratios"] = {k: {"ratio": v[0], "ci95": v[1]} for k, v in rat.items()}
    for v in out.values():
        v.pop("_lines")
    return out


def _mean_var(xs):
    n = len(xs)
    m = sum(xs) / n
    return m, sum((x - m) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0


def governed_summary(runs, fitted, budget, prefix="", nproc=None):
    """The governed row against its budget: the rate lcpid chose, the
    workload's slowdown (its CPU time over the bare runs', every
    configuration's rate 0, with a 95 % interval by the delta method on the
    two means, normal quantile), and the overhead the fixed-rate lcpid's slope
    implies at the governed rate (slope x rate, with its interval)."""
    gov = [r for r in runs if r["config"] == prefix + GOVERNED and r.get("governed")]
    bare = [r["cpu_s"] for r in runs if r["rate"] == 0]
    if len(gov) < 2 or len(bare) < 2:
        return None
    rates = sorted(r["governed"]["governed_rate_per_cpu"] for r in gov)

    def median(key):  # of the runs whose status had it
        xs = sorted(r["governed"][key] for r in gov if r["governed"].get(key) is not None)
        return xs[len(xs) // 2] if xs else None
    mg, vg = _mean_var([r["cpu_s"] for r in gov])
    mb, vb = _mean_var(bare)
    slow = mg / mb - 1
    half = 1.96 * (mg / mb) * math.sqrt(vg / len(gov) / mg ** 2 + vb / len(bare) / mb ** 2)
    rate = rates[len(rates) // 2]
    out = {"budget_pct": budget, "runs": len(gov), "bare_runs": len(bare),
           "rate_median": rate, "rate_min": rates[0], "rate_max": rates[-1],
           "rate_after_differs": sum(1 for r in gov if r["governed"].get("rate_after")
                                     != r["governed"]["governed_rate_per_cpu"]),
           "asked_rate": gov[0]["governed"]["asked_rate_per_cpu"],
           "cost_estimate_ns_median": median("sample_cost_ns"),
           "governed_cost_pct_median": median("governed_cost_pct"),
           "slowdown_pct": 100 * slow, "slowdown_ci95_pct": 100 * half,
           "samples_per_cpu_s": sum(r["samples"] / r["cpu_s"] for r in gov) / len(gov),
           # calibrations the bench asked for beyond each run's first
           # (profilers.LcpidProf._govern), in how many runs
           "calibrations_asked_again": sum(r["governed"].get("calibrations_asked", 1) - 1
                                           for r in gov),
           "runs_asked_again": sum(1 for r in gov
                                   if r["governed"].get("calibrations_asked", 1) > 1)}
    for key, cfg in (("implied_fixed", "lcpid"), ("implied_own", GOVERNED)):
        f = fitted.get(prefix + cfg, {}).get("cpu")
        if f:
            out[key + "_pct"] = 100 * f["slope"] * rate
            out[key + "_ci95_pct"] = 100 * f["slope_ci95"] * rate
    # lcpid's own CPU over the workload's runs, as a share of every CPU
    wall = sum(r["wall_s"] for r in gov) * (nproc or os.cpu_count() or 1)
    out["daemon_pct"] = 100 * sum(r["profiler_cpu_s"] for r in gov) / wall
    return out


def known_shares(a, source):
    """lcpid --source SOURCE --max-overhead BUDGET at the governed rate over
    the known-shares workload (work60, work30, work10 for 60/30/10 % of its
    iterations): each procedure's share of the three against the truth."""
    shares = os.path.join(a.build, "tests/integration/workloads/shares")
    prof = profilers.LcpidProf(a.build, source, EVENT, 1_000_000_000 // a.governed_rate, a.budget,
                               govern_timeout=a.govern_timeout)
    try:
        gov = dict(prof.governed)
        # Long enough for --shares-samples at the rate chosen (the workload
        # is one thread): a share p of n samples is off by sqrt(p(1-p)/n),
        # 1.3 points for 60 % of 1,460, so a short run cannot show 1 point.
        rate = gov.get("governed_rate_per_cpu") or a.governed_rate
        seconds = max(a.shares_seconds, min(a.shares_max_seconds,
                                            math.ceil(a.shares_samples / rate)))
        subprocess.run([shares, str(seconds)], check=True)
        prof.stop_lcpid()  # it writes its window
        r = subprocess.run([os.path.join(a.build, "tools/lcpiprof"), "--db", prof.l.db,
                            "--epoch", "all", "-p", "-i", shares, "--format", "csv"],
                           capture_output=True, text=True)
    finally:
        prof.kill()
        shutil.rmtree(prof.l.dir, ignore_errors=True)
    counts = {}
    rows = list(csv.reader(r.stdout.splitlines()))
    head = rows[0] if rows else []
    for row in rows[1:]:
        rec = dict(zip(head, row))
        name = rec.get("procedure", "")
        if name in ("work60", "work30", "work10"):
            counts[name] = counts.get(name, 0) + int(rec.get(EVENT) or 0)
    total = sum(counts.values())
    out = {"seconds": seconds, "governed": gov, "samples": total, "counts": counts,
           "lcpiprof_error": r.stderr.strip()[-300:] if r.returncode else None}
    if total:
        out["share_pct"] = {k: 100 * v / total for k, v in counts.items()}
        out["max_error_points"] = max(abs(100 * counts.get(k, 0) / total - t)
                                      for k, t in (("work60", 60), ("work30", 30),
                                                   ("work10", 10)))
    return out


def run_guest(a):
    """The guest configurations: this runner inside the QEMU guest."""
    reps, cpu_s = a.guest_reps, a.guest_cpu_s
    # a generous bound: under TCG a perf record run takes about a minute (its
    # start-up and perf script), the others ~10 s, a governed one its
    # calibration too; the known-shares run at most --shares-max-seconds
    timeout = int(300 + reps * len(a.rates) * len(GUEST_CONFIGS) * (45 + 10 * cpu_s)
                  + reps * a.governed_runs * (GUEST_GOVERN_TIMEOUT_S + 10 * cpu_s)
                  + GUEST_GOVERN_TIMEOUT_S + a.shares_max_seconds)
    cmd = [os.path.join(REPO, "scripts/qemu/run-guest.sh"), "--timeout", str(timeout), "--",
           "/usr/bin/python3", "-B", os.path.abspath(__file__), "--inside-guest",
           "--build", a.build, "--reps", str(reps), "--cpu-seconds", str(cpu_s),
           "--rates", ",".join(map(str, a.rates)), "--seed", str(a.seed),
           "--budget", str(a.budget), "--governed-rate", str(a.governed_rate),
           "--governed-runs", str(a.governed_runs), "--shares-seconds", str(a.shares_seconds),
           "--shares-samples", str(a.shares_samples),
           "--shares-max-seconds", str(a.shares_max_seconds)]
    log("guest: " + " ".join(cmd))
    found = None
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as p:
        for line in p.stdout:
            if line.startswith("LCPI-COST-RESULT "):
                found = json.loads(line.split(" ", 1)[1])
            else:
                log("guest| " + line.rstrip())
    if found is None:
        return None, "run-guest.sh exited %d without results (see its log above)" % p.returncode
    with open(a.out + ".guest-runs.json", "w") as f:  # kept should the analysis fail
        json.dump(found, f)
    return found, None


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"nproc": os.cpu_count(), "cpu_model": model, "kernel": platform.release()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="2 repetitions of 0.4 CPU-s runs (1 of 0.3 s in the guest): "
                    "checks the tooling in a few minutes; indicative numbers only")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--out", default=os.path.join(REPO, "bench/results/cost"),
                    help="writes OUT.json, OUT.md, OUT.png")
    ap.add_argument("--configs", default=",".join(HOST_CONFIGS),
                    help="host configurations (default %(default)s)")
    ap.add_argument("--rates", default="0,2500,5000,10000,20000",
                    help="samples/s/CPU (default %(default)s)")
    ap.add_argument("--reps", type=int, help="repetitions (default 8, --quick 2)")
    ap.add_argument("--cpu-seconds", type=float,
                    help="the workload's CPU seconds per thread (default 1.5, --quick 0.4)")
    ap.add_argument("--guest", action=argparse.BooleanOptionalAction, default=True,
                    help="also the guest configurations (default on)")
    ap.add_argument("--guest-reps", type=int, help="guest repetitions (default 4, --quick 1)")
    ap.add_argument("--guest-cpu-seconds", type=float, help="default 1.0, --quick 0.3")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--budget", type=float, default=1,
                    help="lcpid-governed's --max-overhead, %% of each CPU (default %(default)s)")
    ap.add_argument("--governed-rate", type=int, default=5000,
                    help="the rate lcpid-governed is asked for (default %(default)s/s/CPU)")
    ap.add_argument("--governed-runs", type=int, default=3,
                    help="lcpid-governed runs per repetition (default %(default)s)")
    ap.add_argument("--shares-seconds", type=int, default=6,
                    help="the known-shares run at the governed rate, at least this "
                         "many s (0: none)")
    ap.add_argument("--shares-samples", type=int, default=15000,
                    help="... and long enough for this many samples at the governed rate "
                         "(default %(default)s: one standard error of a 60 %% share is "
                         "0.4 points)")
    ap.add_argument("--shares-max-seconds", type=int, default=120,
                    help="... but at most this many s (default %(default)s)")
    ap.add_argument("--inside-guest", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    mode = "quick" if a.quick else "full"
    reps, cpu_s, greps, gcpu_s = MODES[mode]
    a.reps = a.reps or reps
    a.cpu_seconds = a.cpu_seconds or cpu_s
    a.guest_reps = a.guest_reps or greps
    a.guest_cpu_s = a.guest_cpu_seconds or gcpu_s
    a.rates = [int(r) for r in a.rates.split(",")]
    a.build = os.path.abspath(a.build)
    a.govern_timeout = profilers.GOVERN_TIMEOUT_S

    if a.inside_guest:
        with open("/proc/sys/kernel/perf_cpu_time_max_percent", "w") as f:
            f.write("0")  # run-guest.sh does this too; the rates must hold
        a.govern_timeout = GUEST_GOVERN_TIMEOUT_S
        iters = calibrate(a.build, a.cpu_seconds)
        runs = run_all(GUEST_CONFIGS, a.rates, a.reps, a, spin_cmd(a.build, iters), a.seed)
        found = {"runs": runs, "iterations": iters, "machine": machine()}
        if a.shares_seconds:
            found["known_shares"] = known_shares(a, "kmod")
        print("LCPI-COST-RESULT " + json.dumps(found), flush=True)
        return 0

    started = datetime.datetime.now(datetime.timezone.utc)
    configs = a.configs.split(",")
    iters = calibrate(a.build, a.cpu_seconds)
    log("cost: %d iterations per thread (~%.1f CPU-s), %d repetitions of %s at %s/s/CPU" % (
        iters, a.cpu_seconds, a.reps, ",".join(configs), ",".join(map(str, a.rates))))
    runs = run_all(configs, a.rates, a.reps, a, spin_cmd(a.build, iters), a.seed)
    with open(a.out + ".host-runs.json", "w") as f:  # kept should the analysis fail
        json.dump(runs, f)
    result = {"command": " ".join(["bench/cost/cost.py"] + sys.argv[1:]), "mode": mode,
              "started": started.isoformat(timespec="seconds"),
              "event": EVENT, "rates": a.rates, "seed": a.seed,
              "host": {"machine": machine(), "iterations": iters, "reps": a.reps,
                       "cpu_s_per_thread": a.cpu_seconds, "runs": runs,
                       "fits": fits(runs, configs)},
              "guest": None, "guest_error": "not run (--no-guest)"}
    if GOVERNED in configs:
        result["host"]["governed"] = governed_summary(runs, result["host"]["fits"], a.budget)
        if a.shares_seconds:
            result["host"]["known_shares"] = known_shares(a, "perf")
            log("cost: known shares at the governed rate: %r" % result["host"]["known_shares"])
    if a.guest:
        g, err = run_guest(a)
        result["guest_error"] = err
        if g:
            gf = fits(g["runs"], GUEST_CONFIGS)
            result["guest"] = {"machine": g["machine"], "iterations": g["iterations"],
                               "reps": a.guest_reps, "cpu_s_per_thread": a.guest_cpu_s,
                               "runs": g["runs"], "fits": gf,
                               "governed": governed_summary(g["runs"], gf, a.budget, "guest-",
                                                            g["machine"]["nproc"]),
                               "known_shares": g.get("known_shares")}
    result["minutes"] = (datetime.datetime.now(datetime.timezone.utc) - started).seconds / 60
    with open(a.out + ".json", "w") as f:
        json.dump(result, f, indent=1)
    cost_report.write(result, a.out)
    log("cost: wrote %s.json, .md, .png" % a.out)
    return 0 if (not a.guest or result["guest"]) else 1


if __name__ == "__main__":
    sys.exit(main())
