"""report.py - turns the overhead runner's JSON into markdown: the machine
and what was really sampled, DCPI's Table 3 (slowdown per workload per
configuration, mean and 95 % CI over valid pairs), and Tables 4 and 5
(per workload and configuration: sample rate, hash-table miss rate, handler
and daemon cost per sample, daemon memory, database size).

  python3 report.py RESULTS.json      re-prints the markdown of a saved run
"""
import json
import sys

import stats


def _pct(m, h):
    if m is None:
        return "-"
    return "%+.1f %%" % (100 * m) + (" ± %.1f" % (100 * h) if h is not None else " (n<2)")


def _num(x, fmt="%.0f", scale=1.0):
    return "-" if x is None else fmt % (x * scale)


def _slowdown_table(rows, key, base_key):
    cfgs = list(dict.fromkeys(r["config"] for r in rows))
    wls = list(dict.fromkeys(r["workload"] for r in rows))
    by = {(r["workload"], r["config"]): r for r in rows}
    out = ["| workload | base %s | " % ("s" if base_key == "seconds" else "CPU s") + " | ".join(cfgs) + " |",
           "|---|---:|" + "---:|" * len(cfgs)]
    for w in wls:
        bases = [p["base"][base_key] for c in cfgs for p in by.get((w, c), {}).get("pairs", [])]
        cells = []
        for c in cfgs:
            r = by.get((w, c))
            if not r:
                cells.append("")
                continue
            if r.get("error"):
                cells.append("failed (see above)")
                continue
            m, h = stats.mean_ci([p[key] for p in r["pairs"]])
            cells.append("%s (n=%d, inv=%d%s)" % (_pct(m, h), len(r["pairs"]), r["invalid"],
                                                 ", bound" if r["bound_reached"] else ""))
        out.append("| %s | %s | %s |" % (w, _num(stats.mean(bases), "%.2f"), " | ".join(cells)))
    # Every valid pair of a configuration, whatever its workload: the suite's
    # slowdown, with the narrower interval that more pairs give.
    cells = []
    for c in cfgs:
        xs = [p[key] for w in wls for p in by.get((w, c), {}).get("pairs", [])]
        m, h = stats.mean_ci(xs)
        cells.append("%s (n=%d)" % (_pct(m, h), len(xs)))
    out.append("| **all workloads** | | %s |" % " | ".join(cells))
    return "\n".join(out) + "\n"


def _cost_table(rows):
    out = ["| workload | config | samples/s/CPU | lost | miss rate % | handler ns hit/miss "
           "| daemon ns/sample | daemon CPU % | RSS avg / peak MB | db KB |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ps = [p["profiled"] for p in r["pairs"]]
        if not ps or "samples" not in ps[0]:
            continue
        m = lambda k: stats.mean([p.get(k) for p in ps])  # noqa: E731
        hit, miss = m("handler_ns_per_hit"), m("handler_ns_per_miss")
        rate, daemon_ns = m("samples_per_s_per_cpu"), m("daemon_ns_per_sample")
        # lcpid's CPU time as a share of the machine's: samples per second per
        # CPU times its CPU time per sample
        share = None if rate is None or daemon_ns is None else rate * daemon_ns * 1e-7
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |" % (
            r["workload"], r["config"], _num(rate), _num(m("lost")),
            _num(m("miss_rate_pct"), "%.1f"),
            "-" if hit is None else "%.0f / %.0f" % (hit, miss),
            _num(daemon_ns), _num(share, "%.2f"), _num(m("rss_avg_bytes"), "%.1f", 1 / 2**20),
            _num(m("rss_peak_bytes"), "%.1f", 1 / 2**20), _num(m("db_bytes"), "%.0f", 1 / 1024)))
    return "\n".join(out) + "\n"


def _events(rows):
    seen = {}
    for r in rows:
        for p in r["pairs"][:1]:
            if p["profiled"].get("events"):
                seen[r["config"]] = "; ".join(p["profiled"]["events"])
    text = "".join("- `%s`: %s\n" % kv for kv in seen.items())
    if "fallback" in text:
        text += ("\nEvents that fell back all sample cpu-clock at the cycles rate: `default` "
                 "then takes 2x and `mux` 4x the samples of `cycles`, so on this machine those "
                 "rows measure the cost of a higher sample rate, not of counter "
                 "multiplexing.\n")
    return text


def _errors(rows):
    return "".join("- %s / %s failed: %s\n" % (r["workload"], r["config"], r["error"])
                   for r in rows if r.get("error"))


def _section(title, rows, note):
    if not rows:
        return ""
    errors = _errors(rows)
    if errors:
        note += "\nConfigurations that failed (their rows are partial or empty):\n\n" + errors
    return ("## %s\n\n%s\n### Slowdown (DCPI Table 3)\n\nWall-clock slowdown of the workload, "
            "mean of (profiled / base − 1) over valid pairs, ± the 95 %% confidence "
            "half-width (t-distribution); n valid pairs, inv pairs re-run as invalid, "
            "bound = the time bound ended the configuration early.\n\n%s\n"
            "Slowdown of the workload's own CPU time (user + system of its processes), "
            "less sensitive to other load on the machine:\n\n%s\n"
            "### Costs (DCPI Tables 4 and 5)\n\nMeans over the counted profiled trials; "
            "samples, lost and the miss rate over the workload's run only; daemon ns per "
            "sample = lcpid's CPU time during the run / samples taken, and daemon CPU %% = "
            "samples/s/CPU × daemon ns/sample, lcpid's share of the machine's CPU time "
            "(the kernel's own sampling cost is not in it); handler cost only "
            "from the module (kmod rows).\n\n%s\nEvents really sampled:\n\n%s\n") % (
        title, note, _slowdown_table(rows, "slowdown", "seconds"),
        _slowdown_table(rows, "cpu_slowdown", "cpu_s"),
        _cost_table(rows), _events(rows) or "- (none recorded)\n")


def markdown(res):
    m = res["machine"]
    head = ("# lcpi overhead: %s run\n\n%s mode, %s. Machine: %s CPUs, %s, kernel %s. "
            "Workload size `%s`; %d counted pairs per configuration after %d warm-up "
            "pair(s), time bound %d s per configuration; a trial is invalid when other "
            "processes' CPU or steal time exceeds %.0f %% of the machine. Took %d s.\n\n"
            "Command: `%s`\n\n") % (
        res["mode"], res["mode"].capitalize(), res["date"], m["nproc"], m["cpu_model"],
        m["kernel"], res["size"], res["runs"], res["warmup_pairs"], res["bound_s"],
        res["max_outside_pct"], res.get("elapsed_s", 0), res["command"])
    if res["mode"] == "quick":
        head += ("**Quick mode: few pairs and short workloads. The intervals are wide; "
                 "these numbers check the tooling, they are not the results.**\n\n")
    body = _section("Host, perf source (and perf record -a)", res["host"],
                    "lcpid started fresh for every profiled trial, on a temporary database.\n")
    if "guest" in res:
        body += _section(
            "QEMU TCG guest, kmod source", res["guest"],
            "**Shortened workloads (`--size guest`) in an emulated CPU (TCG, ~20x slower): "
            "base and profiled both inside the guest; %d counted pairs after %d warm-up pair(s), "
            "time bound %s s per configuration. Handler costs are emulated-CPU times and say "
            "nothing about real hardware.**\n" % (res["guest_runs"], res["warmup_pairs"],
                                                   res.get("guest_bound_s", "?")))
        if res.get("guest_error"):
            body += "## QEMU guest\n\nNo results: %s\n" % res["guest_error"]
    return head + body


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS.json")
    sys.stdout.write(markdown(json.load(open(sys.argv[1]))))
