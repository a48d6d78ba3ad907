"""cost_report.py - cost.json -> cost.md (the slope table) and cost.png (CPU
time against samples, a series and its fitted line per configuration, drawn
by gnuplot). Run on its own, it re-writes them from a saved cost.json:

  python3 bench/cost/cost_report.py bench/results/cost.json
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

NAMES = {
    "floor": "floor (events + rings only, read and discarded)",
    "perf-record": "`perf record -a`",
    "lcpid": "lcpid, perf source",
    "lcpid-governed": "lcpid, perf source, --max-overhead 1 (governed)",
    "guest-floor": "guest: floor",
    "guest-perf-record": "guest: `perf record -a`",
    "guest-lcpid": "guest: lcpid, kmod source",
    "guest-lcpid-governed": "guest: lcpid, kmod source, --max-overhead 1 (governed)",
}


def _ns(line):
    if not line:
        return "n/a"
    return "%.0f ± %.0f" % (1e9 * line["slope"], 1e9 * line["slope_ci95"])


def _ratio(r):
    if not r or r["ratio"] is None:
        return "n/a"
    return "%.2f ± %.2f" % (r["ratio"], r["ci95"])


def _rate(runs, cfg, rate):
    """Samples per second of the workload's CPU time at a nominal rate."""
    rs = [r for r in runs if r["config"] == cfg and r["rate"] == rate]
    if not rs:
        return None
    return sum(r["samples"] / r["cpu_s"] for r in rs) / len(rs)


def _above(f, floor):
    """Slope minus the floor's, with a 95 % half-width (independent fits:
    standard errors added in quadrature, normal quantile)."""
    if not f or not floor or not f["cpu"] or not floor["cpu"]:
        return "n/a"
    d = f["cpu"]["slope"] - floor["cpu"]["slope"]
    h = 1.96 * math.sqrt(f["cpu"]["slope_se"] ** 2 + floor["cpu"]["slope_se"] ** 2)
    return "%+.0f ± %.0f" % (1e9 * d, 1e9 * h)


def table(part, title):
    fits, runs = part["fits"], part["runs"]
    lines = ["### " + title, "",
             "| configuration | workload CPU ns/sample (95 % CI) | R² | wall ns/sample | "
             "above the floor's, ns | ÷ perf's | ÷ floor's | above floor ÷ perf's above floor "
             "| profiler's own CPU "
             "ns/sample: total, slope | implied overhead at 5,000/s/CPU | samples per workload CPU-s at 5,000 | lost |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    floor = next((f for c, f in fits.items() if c.endswith("floor")), None)
    for cfg, f in fits.items():
        cpu, rat = f["cpu"], f.get("ratios", {})
        imp = "%.1f %%" % (100 * 5000 * cpu["slope"]) if cpu else "n/a"
        got = _rate(runs, cfg, 5000)
        own = f["profiler_ns_per_sample"]
        ofit = f.get("profiler_fit")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
            NAMES.get(cfg, cfg), _ns(cpu), "%.3f" % cpu["r2"] if cpu else "n/a",
            _ns(f["wall"]), _above(f, floor) if f is not floor else "-", _ratio(rat.get("to_perf")), _ratio(rat.get("to_floor")),
            _ratio(rat.get("above_floor_to_perf")),
            ("%.0f" % own if own is not None else "n/a") + ", " + _ns(ofit), imp,
            "%.0f" % got if got is not None else "n/a", f["lost"]))
    lines.append("")
    return lines


def _num(v, fmt):
    return "n/a" if v is None else fmt % v


def asked_again(g):
    """What the bench did where lcpid's estimate waited for a confirmation."""
    n = g.get("calibrations_asked_again")
    if not n:
        return ""
    return (" In %d of the runs lcpid's first estimate was not confirmed within 10 s (its "
            "later calibrations refused for their interval, as on a loaded host), and the "
            "bench asked for %d more calibrations (`lcpictl calibrate`), as an operator "
            "would; until one confirms it, an estimate lowers the rate by half at most." % (
                g["runs_asked_again"], n))


def governed_text(h, where="", source="perf"):
    """The governed row against its budget, and the known shares at its rate;
    where: "" on the host, "QEMU guest, " in it."""
    g = h.get("governed")
    if not g:
        return []
    def pm(key):
        v = g.get(key + "_pct")
        return "n/a" if v is None else "%.2f ± %.2f %%" % (v, g[key + "_ci95_pct"])
    out = ["### %sgoverned: lcpid --source %s --max-overhead %g" % (
               where, source, g["budget_pct"]) if where else
           "### Governed: lcpid --max-overhead %g" % g["budget_pct"], "",
           "lcpid asked for %s/s/CPU with a budget of %g %% of each CPU, armed once it had "
           "calibrated and its governor had set the rate (%d runs, each a fresh lcpid). "
           "The rate it chose: %.0f/s/CPU (median; %.0f-%.0f over the runs), by its "
           "estimate of %s ns per sample (median), governed_cost_pct %s; the workload "
           "was sampled at %.0f per CPU-second.%s Against the budget:" % (
               "{:,.0f}".format(g["asked_rate"]), g["budget_pct"], g["runs"], g["rate_median"],
               g["rate_min"], g["rate_max"], _num(g["cost_estimate_ns_median"], "%.0f"),
               _num(g["governed_cost_pct_median"], "%.2f"), g["samples_per_cpu_s"],
               asked_again(g)), "",
           "| measure | % of the workload's CPU (95 % CI) |", "|---|---|",
           "| measured slowdown: its CPU time over the %d bare runs' (rate 0 of every "
           "configuration) | %.2f ± %.2f %% |" % (g["bare_runs"], g["slowdown_pct"],
                                                g["slowdown_ci95_pct"]),
           "| implied at the governed rate by the fixed-rate lcpid's slope | %s |" % pm(
               "implied_fixed"),
           "| implied at the governed rate by the governed row's own slope | %s |" % pm(
               "implied_own"),
           "| lcpid's own CPU over the workload's runs (every CPU) | %.2f %% |" % g["daemon_pct"],
           ""]
    k = h.get("known_shares")
    if k and k.get("share_pct"):
        sp = k["share_pct"]
        out += ["The known-shares workload (tests/integration/workloads/shares.c: work60, "
                "work30, work10 for 60, 30, 10 %% of its iterations), %d s under lcpid "
                "--max-overhead %g at %.0f/s/CPU: %d samples, work60 %.1f %%, work30 %.1f %%, "
                "work10 %.1f %%; the largest error %.1f points (the issue asks within 1; "
                "one standard error of a 60 %% share of %d samples: %.2f points)." % (
                    k["seconds"], g["budget_pct"], k["governed"]["governed_rate_per_cpu"],
                    k["samples"], sp.get("work60", 0), sp.get("work30", 0),
                    sp.get("work10", 0), k["max_error_points"], k["samples"],
                    100 * math.sqrt(0.24 / k["samples"])), ""]
    return out


def write(result, out):
    h = result["host"]
    md = ["# Cost per sample, as a slope (bench/cost)", "",
          "Generated by `%s` (what `bench/run --parts cost%s` runs) on %s; %s run, "
          "%.0f minutes." % (result.get("command", "bench/cost/cost.py"),
                             " --quick" if result["mode"] == "quick" else "",
                             result["started"], result["mode"], result["minutes"]), "",
          "A CPU-bound workload (bench/cost/spin.c: one spinning thread per CPU, %d "
          "iterations each, ~%.1f CPU-s per thread) ran under each configuration at %s "
          "samples/s/CPU (event %s, period 1e9/rate ns, system-wide on every CPU), %d "
          "repetitions, every (configuration, rate) cell once per repetition in a fresh "
          "random order (seed %d). Its CPU time (user + system, wait4's rusage) is fitted "
          "against the samples the profiler took of the workload's process "
          "while it ran (each profiler armed just before the workload and disarmed after "
          "it; the samples whose pid is the workload's: floor: counted as it reads them; "
          "perf: `perf script -F pid` of its perf.data, enabled and disabled through "
          "--control; lcpid: its database's process_counts). Those samples are the rate "
          "times the workload's own CPU time, so anything else that lengthens a run (the "
          "other jobs' load on caches and CPUs) raises them too, and least squares would "
          "lean towards 1/rate (within one rate the points lie on that line, see the plot); "
          "the line is therefore fitted with the nominal rate as instrument (b = "
          "Cov(rate, CPU) / Cov(rate, samples), bench/cost/fit.py fit_iv; the least-squares "
          "slope is kept in cost.json as cpu_ols). The slope is what one sample costs the "
          "workload; its 95 %% interval is Student's t on n-2 degrees of freedom. Ratios are ratios of slopes, their 95 %% intervals by the "
          "delta method (first-order error propagation, normal quantile; the floor's "
          "variance counted in both terms of \"above floor\" with their covariance; n/a "
          "where the denominator is not clearly above zero, i.e. within 2 standard errors "
          "of it). \"Above the floor's\" is the slope minus the floor's, the standard errors "
          "added in quadrature. "
          "\"Implied overhead\" is slope x 5,000 samples per CPU-second. The profiler's own "
          "CPU is its process's CPU time (schedstat) over the workload's run, divided by "
          "every sample it handled meanwhile (every CPU's and every process's, not only "
          "the workload's: floor and perf count them, lcpid's `samples` in `lcpictl "
          "status`; total: every run's CPU over every run's samples, which includes "
          "fixed costs such as polling and the other jobs' new processes and images; "
          "slope: the same fit of the profiler's CPU against samples, which leaves fixed "
          "costs out); work done in the sampling interrupt is charged to the workload, "
          "not to it." % (h["iterations"], h["cpu_s_per_thread"],
                      ", ".join("{:,}".format(r) for r in result["rates"]), result["event"],
                      h["reps"], result["seed"]), "",
          "Machine: %d CPUs (%s), kernel %s, no hardware PMU (cpu-clock for every "
          "configuration). The CPUs are shared with other jobs (builds of other work ran "
          "during this run): that noise is why the slopes are taken at high rates, where "
          "the signal is many times the noise; R² says how straight each line is." % (
              h["machine"]["nproc"], h["machine"]["cpu_model"], h["machine"]["kernel"]), ""]
    if result.get("load_note"):
        md += [result["load_note"], ""]
    md += table(h, "Host")
    md += governed_text(h)
    g = result.get("guest")
    if g:
        md += ["In the QEMU guest (scripts/qemu/run-guest.sh: Debian's %s kernel under TCG, "
               "%d vCPUs, lcpi.ko loaded; %d repetitions of ~%.1f CPU-s per thread; the "
               "host's /usr/bin/perf, shared read-only with the guest). Emulated interrupts "
               "are far slower than the host's: compare guest rows with each other, not with "
               "the host's." % (g["machine"]["kernel"], g["machine"]["nproc"], g["reps"],
                                g["cpu_s_per_thread"]), ""]
        if result.get("guest_note"):
            md += [result["guest_note"], ""]
        md += table(g, "QEMU guest")
        md += governed_text(g, "QEMU guest, ", "kmod")
    else:
        md += ["### QEMU guest", "", "Not measured in this run: %s." % result.get(
            "guest_error"), ""]
    md += ["![CPU time against samples](%s.png)" % os.path.basename(out), ""]
    with open(out + ".md", "w") as f:
        f.write("\n".join(md))
    plot(result, out + ".png")


def plot(result, png):
    if not shutil.which("gnuplot"):
        return
    d = tempfile.mkdtemp(prefix="lcpi-cost-plot-")
    try:
        parts = [("host", result["host"])]
        if result.get("guest"):
            parts.append(("guest", result["guest"]))
        script = ["set terminal png size %d,600" % (700 * len(parts)), "set output '%s'" % png,
                  "set key top left", "set grid",
                  "set multiplot layout 1,%d" % len(parts)]
        for name, part in parts:
            script += ["set title '%s: workload CPU time against samples'" % name,
                       "set xlabel 'samples taken during the run (thousands)'",
                       "set ylabel 'workload CPU time (s)'"]
            plots = []
            for i, (cfg, f) in enumerate(part["fits"].items()):
                dat = os.path.join(d, "%s.dat" % cfg)
                with open(dat, "w") as fh:
                    for r in part["runs"]:
                        if r["config"] == cfg:
                            fh.write("%g %g\n" % (r["samples"] / 1e3, r["cpu_s"]))
                c = f["cpu"]
                plots.append("'%s' using 1:2 with points pt 7 ps 0.6 lc %d title '%s'" % (
                    dat, i + 1, cfg))
                if c:
                    plots.append("%g + %g*x*1e3 with lines lc %d lw 2 title '%s fit: %.0f ns/sample'"
                                 % (c["intercept"], c["slope"], i + 1, cfg, 1e9 * c["slope"]))
            script.append("plot " + ", ".join(plots))
        script.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    # re-fits every part from its runs (cost.fits), so a saved run is
    # re-analysed with the current arithmetic, then re-writes the files
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cost  # noqa: E402
    src = sys.argv[1] if len(sys.argv) > 1 else "bench/results/cost.json"
    with open(src) as f:
        result = json.load(f)
    for key in ("host", "guest"):
        if result.get(key):
            part = result[key]
            part["fits"] = cost.fits(part["runs"], list(part["fits"]))
    with open(src, "w") as f:
        json.dump(result, f, indent=1)
    write(result, src[:-5] if src.endswith(".json") else src)
