#!/usr/bin/env python3
"""overhead.py - the overhead runner: how much slower each workload of
bench/workloads runs while lcpi profiles the machine (DCPI's Table 3), and
what profiling it cost (DCPI's Tables 4 and 5).

For each workload and each configuration, trials run in pairs, base then
profiled (A B A B ...), so drift hits both; the first pair is a warm-up and
is discarded; each trial is a fresh workload process, and each profiled
trial starts a fresh profiler (lcpid on a temporary database and socket, or
`perf record -a`) and stops it after the workload. A pair where either
trial saw outside CPU load or steal time above --max-outside is marked
invalid and re-run, until --runs valid pairs are counted or the
configuration's time bound (--bound) runs out. The slowdown of a pair is
profiled/base - 1; its mean and 95 % t-interval are reported.

Configurations (--configs, comma-separated):
  cycles       lcpid --source perf --events cycles
  default      lcpid --source perf --events cycles,imiss
  mux          lcpid --source perf --events cycles,imiss,dmiss,branch-misses
  perf-record  perf record -a, same event and period as lcpid's cycles
  kmod-cycles, kmod-default, kmod-mux
               lcpid --source kmod in the QEMU TCG guest (scripts/qemu/
               run-guest.sh), base and profiled both inside the guest, with
               the workloads at --size guest: about 20x slower emulated, so
               these are shortened runs, not comparable with the host rows
The rate is lcpid's default (5,000 samples/s/CPU, period randomised)
unless --lcpid-args says otherwise.

Writes OUT.json (every trial) and OUT.md (the tables, via report.py); exits
1 when a configuration failed (the others still run and are written).
Needs root (system-wide perf events) and a build (--build).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import report  # noqa: E402
import trial  # noqa: E402

EVENTS = {"cycles": "cycles", "default": "cycles,imiss",
          "mux": "cycles,imiss,dmiss,branch-misses"}
HOST_CONFIGS = ["cycles", "default", "mux", "perf-record"]
GUEST_CONFIGS = ["kmod-cycles", "kmod-default", "kmod-mux"]
WORKLOADS = ["compile", "compress", "stream", "dss", "timesharing"]
MODES = {  # runs, warm-up pairs, bound per configuration (s), workload size
    "full": (10, 1, 600, "full"),
    "quick": (3, 0, 90, "quick"),  # no warm-up: quick checks the tooling
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Progress:
    """Counts trials done and planned; estimates the time left."""

    def __init__(self, planned):
        self.planned, self.done, self.start = planned, 0, time.monotonic()

    def line(self, what):
        self.done += 1
        el = time.monotonic() - self.start
        left = el / self.done * max(0, self.planned - self.done)
        log("[%3d/%d] %s | %s elapsed, about %s left" % (
            self.done, self.planned, what, _mmss(el), _mmss(left)))


def _mmss(s):
    return "%dm%02ds" % (s // 60, s % 60)


def workload_cmd(name, size):
    return [os.path.join(REPO, "bench/workloads/%s.sh" % name), "--size", size]


def start_profiler(cfg, a, perf_event):
    if cfg == "perf-record":
        return trial.PerfRecord(*perf_event)
    source = "kmod" if cfg.startswith("kmod-") else "perf"
    return trial.Lcpid(a.build, source, EVENTS[cfg.replace("kmod-", "")],
                       a.lcpid_args.split())


def run_config(wl, cfg, a, progress, perf_event):
    """Pairs of (base, profiled) trials for one workload and configuration."""
    cmd = workload_cmd(wl, a.size)
    deadline = time.monotonic() + a.bound
    pairs, invalid, warm, error = [], 0, a.warmup, None
    try:
        while len(pairs) < a.runs and time.monotonic() < deadline:
            base = trial.run(cmd, None, a.max_outside)
            progress.line("%s/%s A base %.2fs%s" % (wl, cfg, base["seconds"], _flag(base)))
            prof = trial.run(cmd, start_profiler(cfg, a, perf_event), a.max_outside)
            progress.line("%s/%s B %s %.2fs%s" % (wl, cfg, cfg, prof["seconds"], _flag(prof)))
            if warm > 0:
                warm -= 1
                continue
            if base["valid"] and prof["valid"]:
                pairs.append({"base": base, "profiled": prof,
                              "slowdown": prof["seconds"] / base["seconds"] - 1,
                              "cpu_slowdown": prof["cpu_s"] / base["cpu_s"] - 1})
            else:
                invalid += 1
                progress.planned += 2
    except trial.TrialError as e:  # this configuration failed; the others still run
        error = str(e)
        log("%s/%s: FAILED: %s" % (wl, cfg, error))
    timed_out = error is None and len(pairs) < a.runs
    if timed_out:
        log("%s/%s: time bound of %ds reached with %d of %d pairs" % (
            wl, cfg, a.bound, len(pairs), a.runs))
    return {"workload": wl, "config": cfg, "pairs": pairs, "invalid": invalid,
            "bound_reached": timed_out, "error": error}


def _flag(t):
    return "" if t["valid"] else " INVALID (outside %.0f%%, steal %.0f%%)" % (
        t["outside_pct"], t["steal_pct"])


def perf_event_from(results, frequency_default=5000):
    """perf record's event and period: what lcpid's cycles really sampled."""
    for r in results:
        for p in r["pairs"]:
            for ev in p["profiled"].get("events", []):
                # "cycles sampled-as cpu-clock period 200000 (fallback)"
                w = ev.split()
                if w[0] == "cycles" and "period" in w:
                    return w[w.index("sampled-as") + 1], int(w[w.index("period") + 1])
    return "cpu-clock", 1000000000 // frequency_default


def run_host(a, configs, progress):
    results = []
    for wl in a.workloads:
        subprocess.run(workload_cmd(wl, a.size) + ["--prepare"], check=True)
        for cfg in configs:
            pe = perf_event_from(results) if cfg == "perf-record" else None
            results.append(run_config(wl, cfg, a, progress, pe))
    return results


def run_guest(a, configs):
    """The kmod configurations: this same runner, inside the QEMU guest."""
    for wl in a.guest_workloads:  # inputs are made on the host: the guest's / is read-only
        subprocess.run(workload_cmd(wl, "guest") + ["--prepare"], check=True)
    cmd = [os.path.join(REPO, "scripts/qemu/run-guest.sh"), "--timeout", str(a.guest_timeout),
           "--", "/usr/bin/python3", "-B", os.path.abspath(__file__), "--inside-guest",
           "--build", a.build, "--configs", ",".join(configs),
           "--workloads", ",".join(a.guest_workloads), "--runs", str(a.guest_runs),
           "--warmup", str(a.warmup), "--bound", str(a.guest_bound), "--max-outside", str(a.max_outside),
           "--lcpid-args=" + a.lcpid_args]
    log("guest: " + " ".join(cmd))
    found = None
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as p:
        for line in p.stdout:  # the guest's console: progress lines, then the result
            if line.startswith("LCPI-BENCH-RESULT "):
                found = json.loads(line.split(" ", 1)[1])
            else:
                log("guest| " + line.rstrip())
    if found is None:
        return [], "run-guest.sh exited %d without results (see its log above)" % p.returncode
    return found, None


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"nproc": os.cpu_count(), "cpu_model": model, "kernel": platform.release(),
            "host": platform.node()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="3 pairs per configuration, quick workload sizes, 90 s bound")
    ap.add_argument("--configs", help="default: all seven; --quick: the host ones and "
                    "kmod-cycles")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="default: all five (%(default)s)")
    ap.add_argument("--runs", type=int, help="counted pairs per configuration "
                    "(default 10, --quick 3)")
    ap.add_argument("--warmup", type=int, help="warm-up pairs discarded (default 1, --quick 0)")
    ap.add_argument("--bound", type=int, help="seconds per configuration per workload "
                    "(default 600, --quick 90)")
    ap.add_argument("--max-outside", type=float, default=10.0, help="a trial is invalid "
                    "when other processes' CPU or steal exceeds this %% of the machine "
                    "(default 10)")
    ap.add_argument("--guest-workloads", help="workloads in the guest (default: --workloads; "
                    "--quick: compress,stream,dss, the shortest there)")
    ap.add_argument("--guest-runs", type=int, help="counted pairs in the guest (default "
                    "5, --quick 2)")
    ap.add_argument("--guest-bound", type=int, help="seconds per configuration per "
                    "workload in the guest (default 900, --quick 120)")
    ap.add_argument("--guest-timeout", type=int, default=7200,
                    help="seconds before the guest is killed (default 7200)")
    ap.add_argument("--lcpid-args", default="", help="extra lcpid options, e.g. "
                    "'--frequency 10000'")
    ap.add_argument("--build", default=os.path.join(REPO, "build"),
                    help="the CMake build tree with daemon/lcpid and tools/lcpictl")
    ap.add_argument("--out", default=os.path.join(REPO, "bench/results/overhead"),
                    help="write OUT.json and OUT.md (default bench/results/overhead)")
    ap.add_argument("--inside-guest", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()

    mode = "quick" if a.quick else "full"
    runs, warm, bound, a.size = MODES[mode]
    a.runs = a.runs or runs
    a.warmup = warm if a.warmup is None else a.warmup
    a.bound = a.bound or bound
    a.guest_runs = a.guest_runs or (2 if a.quick else 5)
    a.guest_bound = a.guest_bound or (120 if a.quick else 900)
    a.build = os.path.abspath(a.build)
    a.workloads = [w for w in a.workloads.split(",") if w]
    if a.guest_workloads is None:
        a.guest_workloads = "compress,stream,dss" if a.quick else ",".join(a.workloads)
    a.guest_workloads = [w for w in a.guest_workloads.split(",") if w]
    if a.configs is None:
        a.configs = ",".join(HOST_CONFIGS + (["kmod-cycles"] if a.quick else GUEST_CONFIGS))
    configs = [c for c in a.configs.split(",") if c]
    for c in configs:
        if c not in HOST_CONFIGS + GUEST_CONFIGS:
            ap.error("unknown configuration %s (known: %s)" % (
                c, ", ".join(HOST_CONFIGS + GUEST_CONFIGS)))
    for w in a.workloads + a.guest_workloads:
        if w not in WORKLOADS:
            ap.error("unknown workload %s (known: %s)" % (w, ", ".join(WORKLOADS)))
    for exe in ("daemon/lcpid", "tools/lcpictl"):
        if not os.access(os.path.join(a.build, exe), os.X_OK):
            sys.exit("overhead: no %s in %s: build first (cmake --build build)" % (exe, a.build))
    if os.geteuid() != 0:
        sys.exit("overhead: needs root (system-wide perf events, lcpid's socket)")

    if a.inside_guest:  # shortened workloads, everything inside the guest
        a.size = "guest"
        progress = Progress(len(a.workloads) * len(configs) * 2 * (a.runs + a.warmup))
        print("LCPI-BENCH-RESULT " + json.dumps(run_host(a, configs, progress)), flush=True)
        return

    host = [c for c in configs if c in HOST_CONFIGS]
    guest = [c for c in configs if c in GUEST_CONFIGS]
    progress = Progress(len(a.workloads) * len(host) * 2 * (a.runs + a.warmup))
    started = time.monotonic()
    results = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "mode": mode, "machine": machine(), "size": a.size, "runs": a.runs,
        "warmup_pairs": a.warmup, "bound_s": a.bound, "max_outside_pct": a.max_outside,
        "lcpid_args": a.lcpid_args, "command": " ".join(sys.argv),
        "host": run_host(a, host, progress) if host else [],
    }
    if guest:
        results["guest"], results["guest_error"] = run_guest(a, guest)
        results["guest_runs"] = a.guest_runs
        results["guest_bound_s"] = a.guest_bound
    results["elapsed_s"] = round(time.monotonic() - started)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".json", "w") as f:
        json.dump(results, f, indent=1)
    with open(a.out + ".md", "w") as f:
        f.write(report.markdown(results))
    log("overhead: wrote %s.json and %s.md in %s" % (a.out, a.out, _mmss(results["elapsed_s"])))
    if results.get("guest_error") or any(
            r.get("error") for r in results["host"] + results.get("guest", [])):
        sys.exit("overhead: some configurations failed (see %s.md)" % a.out)


if __name__ == "__main__":
    try:
        main()
    except trial.TrialError as e:
        sys.exit("overhead: %s" % e)
    except subprocess.CalledProcessError as e:
        sys.exit("overhead: preparing inputs failed: %s" % e)
