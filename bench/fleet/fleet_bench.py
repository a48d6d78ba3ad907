#!/usr/bin/env python3
"""fleet_bench.py - the fleet's cost and size (issue 28 part 5), run by bench/fleet/run
with a clickhouse-server of its own.

1. One real host-day: lcpid (system-wide, cpu-clock) records WINDOWS windows of
   SECONDS each while a small mixed workload runs (gzip, python, sqlite3) beside
   whatever else the machine runs; the windows are then renamed to consecutive
   hours of one day (their start and end times only: the rows are lcpid's own).
2. That database is shipped by lcpi-ship --once under HOSTS host names, one
   PARALLEL processes at a time, each with a state file of its own: rows per second
   shipped, and each shipper's CPU (wait4's rusage) per window and peak memory
   (ru_maxrss).
3. Bytes per host-day: system.parts of the lcpi tables (bytes_on_disk,
   data_compressed_bytes), as the parts are after shipping and after
   OPTIMIZE ... FINAL, divided by HOSTS; against the SQLite file of the same
   windows (as lcpid left it, and VACUUMed).
4. Fleet queries over the HOSTS x WINDOWS windows: lcpiprof --fleet (images
   view) and --fleet -p, and -p --host of one host, REPS times each (median);
   the images view is checked to equal HOSTS times the local report.
"""
import argparse
import csv
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

TABLES = ["windows", "counts", "processes", "images", "symbols"]


def ch(url, sql):
    req = urllib.request.Request(url + "/", data=sql.encode())
    with urllib.request.urlopen(req, timeout=600) as r:
        return r.read().decode()


def sqlite(db, sql):
    return subprocess.run(["sqlite3", db, sql], check=True, capture_output=True, text=True).stdout


def make_host_db(a, db):
    """A real lcpid database of a.windows windows, renamed to consecutive hours."""
    sock = os.path.join(a.work, "lcpid.sock")
    lcpid = os.path.join(a.build, "daemon", "lcpid")
    lcpictl = os.path.join(a.build, "tools", "lcpictl")
    log = open(os.path.join(a.work, "lcpid.log"), "w")
    # at the asked rate (--max-overhead 0): one period in every window, so
    # the fleet's sum is exactly hosts x the local one (the governor's
    # periods are weighed, and rounded per key in each report)
    d = subprocess.Popen([lcpid, "--foreground", "--max-overhead", "0", "--db", db, "--socket",
                          sock, "--events", "cpu-clock", "--log-level", "warn"], stderr=log)
    for _ in range(200):
        if subprocess.run([lcpictl, "--socket", sock, "status"], capture_output=True).returncode == 0:
            break
        time.sleep(0.05)
    work = subprocess.Popen(["bash", "-c",
                             "while :; do gzip -6 -c /usr/lib/x86_64-linux-gnu/libc.so.6 >/dev/null; "
                             "python3 -c 'sum(i*i for i in range(200000))'; "
                             "sqlite3 :memory: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 "
                             "FROM c WHERE x<100000) SELECT sum(x) FROM c' >/dev/null; done"],
                            start_new_session=True)
    try:
        # windows - 1 epochs ended by `lcpictl epoch`, the last by lcpid's stop
        for _ in range(a.windows - 1):
            time.sleep(a.seconds)
            subprocess.run([lcpictl, "--socket", sock, "epoch"], check=True, capture_output=True)
        time.sleep(a.seconds)
    finally:
        os.killpg(work.pid, 15)
        work.wait()
    subprocess.run([lcpictl, "--socket", sock, "stop"], check=True, capture_output=True)
    d.wait()
    # the last epoch, open when lcpid stopped: closed, as lcpi-ship ships closed ones
    sqlite(db, "UPDATE epochs SET ended = max(started, CAST(strftime('%s','now') AS INTEGER)) "
               "WHERE ended IS NULL")
    ids = [int(x) for x in sqlite(db, "SELECT id FROM epochs ORDER BY id").split()]
    day = (int(time.time()) // 86400 - 1) * 86400  # yesterday, 00:00 UTC
    sql = "".join(f"UPDATE epochs SET started = {day + 3600 * i}, ended = {day + 3600 * (i + 1)} "
                  f"WHERE id = {e};" for i, e in enumerate(ids))
    sqlite(db, sql)
    return ids


def ship_all(a, db):
    """Ships db under a.hosts names, a.parallel shippers at a time (as a fleet's
    hosts ship at once); each one's rusage from wait4."""
    ship = os.path.join(a.build, "ship", "lcpi-ship")
    os.makedirs(os.path.join(a.work, "state"), exist_ok=True)
    runs, running = [], {}
    t_ship = time.monotonic()
    # one lcpi-ship per database file (its flock): a copy per shipper at once
    free = []
    for k in range(a.parallel):
        copy = os.path.join(a.work, f"host-copy{k}.db")
        shutil.copyfile(db, copy)
        free.append(copy)
    for h in list(range(a.hosts)) + [None] * a.parallel:
        while running and (h is None or len(running) >= a.parallel):
            pid, status, ru = os.wait4(-1, 0)
            if pid not in running:
                continue
            host, t0, err, copy = running.pop(pid)
            free.append(copy)
            code = os.waitstatus_to_exitcode(status)
            if code != 0:
                err.seek(0)
                sys.exit(f"lcpi-ship --host {host} exited {code}: {err.read().decode()[-500:]}")
            runs.append({"host": host, "wall_s": time.monotonic() - t0,
                         "cpu_s": ru.ru_utime + ru.ru_stime, "user_s": ru.ru_utime,
                         "sys_s": ru.ru_stime, "maxrss_kib": ru.ru_maxrss})
            if h is None:
                break
        if h is None:
            continue
        if a.ship_seconds and time.monotonic() - t_ship > a.ship_seconds:
            continue  # out of time: the hosts started are finished, no more begun
        host = f"host-{h:03d}"
        err = open(os.path.join(a.work, "state", host + ".log"), "w+b")
        copy = free.pop()
        p = subprocess.Popen([ship, "--once", "--url", a.url, "--db", copy, "--state",
                              os.path.join(a.work, "state", host + ".db"), "--host", host],
                             stdout=subprocess.DEVNULL, stderr=err)
        running[p.pid] = (host, time.monotonic(), err, copy)
    runs.sort(key=lambda r: r["host"])
    return runs


def parts(a):
    out = {}
    for line in ch(a.url, "SELECT table, count(), sum(rows), sum(bytes_on_disk), "
                          "sum(data_compressed_bytes), sum(data_uncompressed_bytes) FROM system.parts "
                          "WHERE database = 'lcpi' AND active GROUP BY table FORMAT TabSeparated"
                   ).splitlines():
        t, n, rows, disk, comp, uncomp = line.split("\t")
        out[t] = {"parts": int(n), "rows": int(rows), "bytes_on_disk": int(disk),
                  "compressed": int(comp), "uncompressed": int(uncomp)}
    return out


def timed(cmd, reps):
    times = []
    for _ in range(reps):
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.monotonic() - t0)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr[-500:]}")
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "runs": len(times)}, r.stdout


def csv_total(text):
    rows = list(csv.reader(io.StringIO(text)))
    c = rows[0].index("cpu-clock")
    return sum(int(r[c]) for r in rows[1:])


def render(json_path, out, run_command):
    """Writes OUT.md again from a run's JSON (the tables' wording changed, not the figures)."""
    r = json.load(open(json_path))
    r["run_command"] = run_command
    a = argparse.Namespace(quick=r["hosts"] < 100 and r["windows_per_host"] < 24,
                           parallel=r["shipper"].get("parallel", 1), out=out)
    write_md(a, r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--ch-data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True, help="writes OUT.md and OUT.json")
    ap.add_argument("--quick", action="store_true", help="10 hosts x 6 windows of 1 s")
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--windows", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=2.0, help="each window's length")
    ap.add_argument("--reps", type=int, default=5, help="runs of each fleet query")
    ap.add_argument("--parallel", type=int, default=4, help="shippers at a time")
    ap.add_argument("--ship-seconds", type=float, default=0,
                    help="begin no host's shipping after this long (0: no limit); the "
                         "report is then over the hosts shipped")
    a = ap.parse_args()
    if a.quick:
        a.hosts, a.windows, a.seconds, a.reps = 10, 6, 1.0, 3
    argv = " ".join(sys.argv[1:])
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t_start = time.monotonic()
    db = os.path.join(a.work, "host.db")
    make_host_db(a, db)
    windows = int(sqlite(db, "SELECT count(*) FROM epochs WHERE ended IS NOT NULL"))
    samples = int(sqlite(db, "SELECT coalesce(sum(count), 0) FROM counts"))
    sqlite_bytes = os.path.getsize(db)
    vac = os.path.join(a.work, "vacuumed.db")
    sqlite(db, f"VACUUM INTO '{vac}'")
    sqlite_vacuumed = os.path.getsize(vac)

    t0 = time.monotonic()
    runs = ship_all(a, db)
    ship_wall = time.monotonic() - t0
    shipped = ch(a.url, "SELECT count(), sum(count_rows), sum(process_rows), uniqExact(host) "
                        "FROM lcpi.windows FORMAT TabSeparated").split()
    n_windows, count_rows, process_rows, n_hosts = (int(x) for x in shipped)
    symbol_rows = int(ch(a.url, "SELECT count() FROM lcpi.symbols").strip())
    image_rows = int(ch(a.url, "SELECT count() FROM lcpi.images").strip())
    if len(runs) < a.hosts:
        print(f"fleet_bench: {len(runs)} of {a.hosts} hosts shipped in --ship-seconds "
              f"{a.ship_seconds:g}", file=sys.stderr)
        a.hosts = len(runs)
    assert n_windows == a.hosts * windows and n_hosts == a.hosts, shipped
    rows = count_rows + process_rows + symbol_rows + image_rows + n_windows

    before = parts(a)
    for t in TABLES:
        ch(a.url, f"OPTIMIZE TABLE lcpi.{t} FINAL")
    after = parts(a)

    prof = os.path.join(a.build, "tools", "lcpiprof")
    fleet = [prof, "--fleet", a.url, "--format", "csv"]
    q_images, out = timed(fleet, a.reps)
    local = subprocess.run([prof, "--db", db, "--epoch", "all", "--observer-inline", "--format", "csv"],
                           check=True, capture_output=True, text=True).stdout
    want, got = a.hosts * csv_total(local), csv_total(out)
    assert want == got, f"fleet images view sums {got} samples, {a.hosts} x local = {want}"
    q_procs, _ = timed(fleet + ["-p"], a.reps)
    q_host, _ = timed(fleet + ["-p", "--host", "host-007" if a.hosts > 7 else "host-000"], a.reps)

    cpu = [r["cpu_s"] for r in runs]
    rss = [r["maxrss_kib"] for r in runs]
    res = {
        "started": started, "command": f"bench/fleet/run (fleet_bench.py {argv})",
        "machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                    "clickhouse": ch(a.url, "SELECT version()").strip(),
                    "loadavg_at_start": os.getloadavg()},
        "hosts": a.hosts, "windows_per_host": windows, "window_seconds": a.seconds,
        "samples_per_host": samples,
        "shipped": {"windows": n_windows, "count_rows": count_rows, "process_rows": process_rows,
                    "symbol_rows": symbol_rows, "image_rows": image_rows, "rows": rows,
                    "wall_s": ship_wall, "rows_per_s": rows / ship_wall,
                    "count_rows_per_s": count_rows / ship_wall,
                    "windows_per_s": n_windows / ship_wall},
        "shipper": {"cpu_ms_per_window": 1000 * sum(cpu) / n_windows,
                    "host_cpu_s_median": statistics.median(cpu), "host_cpu_s_max": max(cpu), "parallel": a.parallel,
                    "maxrss_kib_max": max(rss), "maxrss_kib_median": int(statistics.median(rss)),
                    "runs": runs},
        "sqlite": {"file_bytes": sqlite_bytes, "vacuumed_bytes": sqlite_vacuumed},
        "clickhouse_parts": {"after_ship": before, "after_optimize_final": after},
        "queries": {"images": q_images, "procedures": q_procs, "procedures_one_host": q_host,
                    "images_total_checked": got},
        "elapsed_s": time.monotonic() - t_start,
    }
    with open(a.out + ".json", "w") as f:
        json.dump(res, f, indent=1)
    write_md(a, res)


def write_md(a, r):
    s, sh, q = r["shipped"], r["shipper"], r["queries"]
    H = r["hosts"]

    def tot(p, key):
        return sum(v[key] for v in p.values())

    def kib(b):
        return f"{b / 1024:,.0f}"
    lines = [
        "# The fleet: shipping, size and query time (bench/fleet)", "",
        f"Generated by `{r.get('run_command', 'sudo bench/fleet/run')}` "
        f"(`bench/run --parts fleet` runs `bench/fleet/run`; it ran `{r['command']}`) on {r['started']}, "
        f"{r['elapsed_s'] / 60:.1f} minutes. ClickHouse {r['machine']['clickhouse']} (Debian 12's "
        f"clickhouse-server, one server of the bench's own, started as the fleet tests start theirs), "
        f"{r['machine']['cpus']} CPUs shared with other jobs (load average at the start "
        f"{r['machine']['loadavg_at_start'][0]:.1f}), kernel {r['machine']['kernel']}.", "",
        f"One real host-day: lcpid (system-wide, cpu-clock at its default frequency, no budget: one period in every window) recorded "
        f"{r['windows_per_host']} windows of {r['window_seconds']:g} s each while a small workload "
        f"(gzip, python3, sqlite3) ran beside the machine's other jobs ({r['samples_per_host']:,} samples); "
        f"the windows were then renamed to the {r['windows_per_host']} hours of one day (start and end "
        f"times only). That database was shipped by `lcpi-ship --once` under {H} host names, "
        f"{a.parallel} processes at a time (each host ships its own images' symbols): {H} x {r['windows_per_host']} = {s['windows']:,} windows. A real "
        f"hourly window holds more distinct offsets than a {r['window_seconds']:g}-second one (the "
        f"rows grow with the code run, not with time): these are lower bounds on rows and bytes "
        f"per host-day, and upper bounds on windows per second.", "",
        "## Shipping", "",
        "| | |", "|---|---|",
        f"| rows shipped | {s['rows']:,} ({s['count_rows']:,} count, {s['process_rows']:,} process, "
        f"{s['symbol_rows']:,} symbol, {s['image_rows']:,} image, {s['windows']:,} window rows) |",
        f"| wall time, {H} shippers, {a.parallel} at a time | {s['wall_s']:.1f} s |",
        f"| rows per second | {s['rows_per_s']:,.0f} (count rows: {s['count_rows_per_s']:,.0f}/s) |",
        f"| windows per second | {s['windows_per_s']:.1f} |",
        f"| shipper CPU per window (user+sys, wait4) | {sh['cpu_ms_per_window']:.1f} ms |",
        f"| shipper CPU per host (its {r['windows_per_host']} windows and its images' symbols) | median "
        f"{sh['host_cpu_s_median']:.2f} s, max {sh['host_cpu_s_max']:.2f} s |",
        f"| shipper peak memory (ru_maxrss) | median {sh['maxrss_kib_median']:,} KiB, max "
        f"{sh['maxrss_kib_max']:,} KiB |", "",
        "## Bytes per host-day", "",
        f"ClickHouse: system.parts of the `lcpi` tables (active parts) divided by {H} hosts; "
        f"SQLite: the file of the same {r['windows_per_host']} windows.", "",
        "| table | rows | parts after ship | bytes on disk after ship | after OPTIMIZE FINAL | "
        "compressed (final) | uncompressed (final) |", "|---|---|---|---|---|---|---|"]
    b, f = r["clickhouse_parts"]["after_ship"], r["clickhouse_parts"]["after_optimize_final"]
    for t in sorted(f):
        lines.append(f"| {t} | {f[t]['rows']:,} | {b.get(t, {}).get('parts', 0)} | "
                     f"{b.get(t, {}).get('bytes_on_disk', 0):,} | {f[t]['bytes_on_disk']:,} | "
                     f"{f[t]['compressed']:,} | {f[t]['uncompressed']:,} |")
    lines += [
        f"| all | {tot(f, 'rows'):,} | {tot(b, 'parts')} | {tot(b, 'bytes_on_disk'):,} | "
        f"{tot(f, 'bytes_on_disk'):,} | {tot(f, 'compressed'):,} | {tot(f, 'uncompressed'):,} |", "",
        "| per host-day | KiB |", "|---|---|",
        f"| ClickHouse, the windows' rows (counts, processes, windows), on disk after OPTIMIZE FINAL | "
        f"{kib(sum(f.get(t, {}).get('bytes_on_disk', 0) for t in ('counts', 'processes', 'windows')) / H)} |",
        f"| ClickHouse, images and symbols (once per host and build, not per day), same | "
        f"{kib(sum(f.get(t, {}).get('bytes_on_disk', 0) for t in ('images', 'symbols')) / H)} |",
        f"| ClickHouse, on disk after ship | {kib(tot(b, 'bytes_on_disk') / H)} |",
        f"| ClickHouse, on disk after OPTIMIZE FINAL | {kib(tot(f, 'bytes_on_disk') / H)} |",
        f"| ClickHouse, compressed column data (final) | {kib(tot(f, 'compressed') / H)} |",
        f"| ClickHouse, uncompressed (final) | {kib(tot(f, 'uncompressed') / H)} |",
        f"| SQLite file as lcpid left it | {kib(r['sqlite']['file_bytes'])} |",
        f"| SQLite file VACUUMed | {kib(r['sqlite']['vacuumed_bytes'])} |", "",
        "The SQLite file also holds what is not shipped per window (the image cache's index, the "
        "stored symbols of the kernel and JIT code, lcpid's own tables). The images and symbols in "
        "ClickHouse are per (identity, host) (schema 2): every host ships its own copy once per "
        "build it runs, so they are counted in every host's share here, and a day of a host that "
        "runs the same builds adds only the windows' rows.", "",
        f"## Fleet queries over {H} hosts x {r['windows_per_host']} windows", "",
        f"`lcpiprof --fleet URL --format csv`, median of {q['images']['runs']} runs (min-max); the images "
        f"view's total ({q['images_total_checked']:,} samples) was checked to equal {H} times the local "
        "`lcpiprof --epoch all` report's.", "",
        "| query | median s | min-max s |", "|---|---|---|"]
    for name, key in [("images view (default)", "images"), ("procedures (-p), every host", "procedures"),
                      ("procedures (-p), --host of one host", "procedures_one_host")]:
        x = q[key]
        lines.append(f"| {name} | {x['median_s']:.2f} | {x['min_s']:.2f}-{x['max_s']:.2f} |")
    lines.append("")
    with open(a.out + ".md", "w") as fh:
        fh.write("\n".join(lines))


if __name__ == "__main__":
    main()
