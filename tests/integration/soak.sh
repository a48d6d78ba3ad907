#!/usr/bin/env bash
# soak.sh LCPID LCPICTL LCPIPROF BLIP OUT SECONDS - lcpid
# (perf source) with accelerated settings (a window every 2 s, 40 s kept, a
# small size cap, few processes per window) over a workload that keeps
# starting new processes of hundreds of distinct binaries (copies of BLIP,
# each with a build-id of its own, so each is an image of its own). Samples
# lcpictl status every second into OUT/soak.csv and plots it (OUT/soak.png,
# gnuplot), then checks: the database size and RSS level off under their
# bounds, the oldest windows are gone, the newest is complete, the database
# is intact, every sample taken is stored, counted as dropped by retention,
# or counted as lost, per-window process rows are capped, the images of
# processes long gone are forgotten, and lcpiprof
# --since/--until agrees with the windows' sums. SOAK_RETAIN (s),
# SOAK_MAX_DB_MB, SOAK_MAX_PROCESSES and SOAK_BINARIES change the settings
# (to see a check fail: SOAK_RETAIN=3600 SOAK_MAX_DB_MB=0 SOAK_MAX_PROCESSES=0).
# Exit 77 (skip) without root or gnuplot.
set -euo pipefail
lcpid=$1 lcpictl=$2 lcpiprof=$3 blip=$4 out=$5 seconds=$6
[ "$(id -u)" -eq 0 ] || { echo "needs root (perf events of every CPU)"; exit 77; }
command -v gnuplot >/dev/null || { echo "gnuplot is not installed (gnuplot-nox)"; exit 77; }
binaries=${SOAK_BINARIES:-300}
window=2 retain=${SOAK_RETAIN:-40} cap_bytes=$((${SOAK_MAX_DB_MB:-6} << 20))
max_processes=${SOAK_MAX_PROCESSES:-40}

rm -rf "$out"
mkdir -p "$out/bin"
ctl() { "$lcpictl" --socket "$out/s" "$@"; }
trap 'kill $workload $daemon 2>/dev/null || true' EXIT
workload= daemon=

# Hundreds of distinct binaries: BLIP with its build-id bytes replaced by a
# number of each copy's own (image_id.cpp: identity is the build-id).
python3 - "$blip" "$out/bin" "$binaries" <<'PY'
import subprocess, sys, re, os
blip, outdir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
notes = subprocess.run(['readelf', '-n', blip], capture_output=True, text=True).stdout
build_id = bytes.fromhex(re.search(r'Build ID: ([0-9a-f]+)', notes).group(1))
data = open(blip, 'rb').read()
assert data.count(build_id) == 1, 'the build-id is not unique in the file'
for i in range(n):
    mine = i.to_bytes(4, 'little') + build_id[4:]
    path = os.path.join(outdir, f'w{i:04d}')
    open(path, 'wb').write(data.replace(build_id, mine))
    os.chmod(path, 0o755)
PY

start=$(date +%s)
"$lcpid" --foreground --max-overhead 0 --source perf --db "$out/p.db" --socket "$out/s" --events cpu-clock \
  --frequency 2000 --flush-interval 1 --window ${window}s --retain ${retain}s --keep-windows 1 --rollup-after 0 \
  --max-db-size $((cap_bytes >> 20))M --max-processes $max_processes --image-cache-size 0 \
  --log-level info 2>"$out/lcpid.log" &
daemon=$!
for _ in $(seq 100); do ctl status >/dev/null 2>&1 && break; sleep 0.1; done
ctl status >/dev/null

# The workload: each binary in turn, two at a time, each spinning 5 ms.
(
  i=0
  while :; do
    "$out/bin/w$(printf %04d $((i % binaries)))" 5000 &
    "$out/bin/w$(printf %04d $(((i + 1) % binaries)))" 5000
    wait
    i=$((i + 2))
  done
) >/dev/null 2>&1 &
workload=$!

echo "t,db_bytes,rss_bytes,samples,lost,dropped_epochs,epoch,processes_rolled_up" >"$out/soak.csv"
end=$((start + seconds))
while [ "$(date +%s)" -lt "$end" ]; do
  ctl status | awk -v t=$(($(date +%s) - start)) '
    {v[$1] = $2}
    END {print t "," v["db_bytes"] "," v["rss_bytes"] "," v["samples"] "," v["lost"] "," \
         v["dropped_epochs"] "," v["epoch"] "," v["processes_rolled_up"]}' >>"$out/soak.csv"
  sleep 1
done
kill $workload
wait $workload 2>/dev/null || true
sleep 3 # a few merges (one a second) after the last process of the workload ended
ctl status >"$out/status.txt"
ctl stop >/dev/null
wait $daemon
daemon=

gnuplot <<EOF
set terminal pngcairo size 1000,600
set output '$out/soak.png'
set datafile separator ','
set key bottom right
set xlabel 'seconds'
set ylabel 'MiB'
set title 'lcpid soak: window ${window}s, retain ${retain}s, max-db-size $((cap_bytes >> 20))M, $binaries binaries'
plot '$out/soak.csv' using 1:(\$2/1048576) with lines title 'database (db\_bytes)', \
     '' using 1:(\$3/1048576) with lines title 'lcpid RSS (rss\_bytes)', \
     $((cap_bytes >> 20)) with lines dashtype 2 title 'max-db-size'
EOF

# --since/--until: the images report of a span against the sum of the
# windows that overlap it, straight from the database.
mid_since=$((start + seconds - 20)) mid_until=$((start + seconds - 8))
"$lcpiprof" --db "$out/p.db" --since "$(date -u -d @$mid_since +%FT%TZ)" \
  --until "$(date -u -d @$mid_until +%FT%TZ)" --format csv >"$out/span.csv"
"$lcpiprof" --db "$out/p.db" --since "$(date -u -d @$((start - 60)) +%FT%TZ)" --format csv \
  >"$out/all.csv"
"$lcpiprof" --db "$out/p.db" --since "$(date -u -d @$((start - 60)) +%FT%TZ)" -P \
  >"$out/processes.txt"

python3 - "$out" "$start" "$cap_bytes" "$max_processes" "$window" "$mid_since" "$mid_until" \
  "$binaries" <<'PY'
import csv, re, sqlite3, sys
out, start, cap, max_procs, window, since, until, binaries = sys.argv[1], *map(int, sys.argv[2:])
rows = list(csv.DictReader(open(f'{out}/soak.csv')))
assert len(rows) >= 30, f'too few status samples: {len(rows)}'
third = len(rows) // 3
col = lambda name, part: [int(r[name]) for r in part]
first, last = rows[:third], rows[-third:]
ok = True
def check(cond, what):
    global ok
    print(('ok   ' if cond else 'FAIL ') + what)
    ok = ok and cond

# The size cap is applied when a window closes: between two closes the file
# grows by one window's merges, so the bound is the cap plus twice the
# largest growth seen in a second (after the first third: the first merge
# stores the kernel's symbols, megabytes at once).
db = col('db_bytes', rows)
growth = max(max(b - a for a, b in zip(db[third:], db[third + 1:])), 0)
check(max(db[third:]) <= cap + 2 * growth,
      f'db_bytes stays under the cap: max {max(db[third:])} <= {cap} + 2 x {growth}')
check(max(col('db_bytes', last)) <= 1.25 * max(col('db_bytes', rows[third:2 * third])) + (1 << 20),
      f'db_bytes levels off: last third max {max(col("db_bytes", last))} <= 1.25 x middle '
      f'third max {max(col("db_bytes", rows[third:2 * third]))} + 1 MiB')
rss_first, rss_last = max(col('rss_bytes', first)), max(col('rss_bytes', last))
check(rss_last <= 1.5 * rss_first + (4 << 20),
      f'RSS levels off: last third max {rss_last} <= 1.5 x first third max {rss_first} + 4 MiB')

status = dict(l.split(' ', 1) for l in open(f'{out}/status.txt').read().split('\n') if ' ' in l)
check(int(status['dropped_epochs']) > 0, f'retention dropped epochs: {status["dropped_epochs"]}')
check(int(status['processes_rolled_up']) > 0,
      f'pids rolled up: {status["processes_rolled_up"]}')
# Images of processes long gone are forgotten: a few merges after the
# workload ended, the table holds what the host's other processes map, not
# every binary that ran (all of them and their libraries: 398 here before).
check(int(status['images_forgotten']) > binaries and int(status['images']) < binaries // 2,
      f'images forgotten: {status["images_forgotten"]} > {binaries}, known once the '
      f'workload ended {status["images"]} < {binaries // 2}')

con = sqlite3.connect(f'file:{out}/p.db?mode=ro', uri=True)
q = lambda sql, *a: con.execute(sql, a).fetchall()
check(q('PRAGMA integrity_check') == [('ok',)], 'PRAGMA integrity_check: ok')
epochs = q('SELECT id, started, ended FROM epochs ORDER BY id')
check(epochs[0][1] > start + 10, f'the oldest windows are gone: the first kept started '
      f'{epochs[0][1] - start} s after the start')
closed = [e for e in epochs if e[2] is not None]
newest = closed[-1]
newest_counts = q('SELECT sum(count) FROM counts WHERE epoch_id = ?', newest[0])[0][0] or 0
check(0 < newest[2] - newest[1] <= window + 1 and newest_counts > 0,
      f'the newest closed window is whole: {newest[2] - newest[1]} s, {newest_counts} samples')

# Every sample accounted: taken (lcpid's last words) = stored + dropped by
# retention (the dropped windows' statistics, carried) + lost.
log = open(f'{out}/lcpid.log').read()
m = re.search(r'stopped after \d+ flushes: (\d+) samples taken, (\d+) lost', log)
taken, lost_total = int(m.group(1)), int(m.group(2))
stats = dict(q('SELECT name, sum(value) FROM stats GROUP BY name'))
g = lambda n: stats.get(n, 0)
stored = q('SELECT sum(count) FROM counts')[0][0] or 0
dropped = g('retention_dropped.attributed') + g('retention_dropped.unknown')
lost = g('lost') + g('dropped') + g('retention_dropped.lost') + g('retention_dropped.dropped')
check(g('samples') + g('retention_dropped.samples') == taken,
      f'samples taken {taken} = samples stored in stats {g("samples")} + dropped by retention '
      f'{g("retention_dropped.samples")}')
check(stored + dropped + lost == taken,
      f'samples taken {taken} = on disk {stored} + merged away by retention {dropped} + lost {lost}')
check(lost == lost_total, f'lost in the database {lost} = lost in lcpid {lost_total}')
check(dropped > 0, f'retention counted the samples it dropped: {dropped}')

# Per-window process rows: at most the cap of real pids, the rest rolled up.
worst = q('SELECT max(n) FROM (SELECT count(DISTINCT pid) AS n FROM process_counts '
          'WHERE pid != -1 GROUP BY epoch_id)')[0][0]
check(worst <= max_procs, f'real pids per window: at most {worst} <= {max_procs}')
check(q("SELECT count(*) FROM process_counts WHERE pid = -1 AND comm != '[no pid]'")[0][0] > 0,
      'rolled-up rows stored')
check('[rolled up]' in open(f'{out}/processes.txt').read(), 'lcpiprof -P names rolled-up rows')

# --since/--until agree with the sum of the windows they overlap.
def report_total(path):
    rows = list(csv.DictReader(open(path)))
    return sum(int(r['cpu-clock']) for r in rows)
def windows_total(lo, hi):
    ids = [e[0] for e in epochs if e[1] < hi and (e[2] if e[2] is not None else 1 << 62) > lo]
    return sum(q('SELECT coalesce(sum(count), 0) FROM counts WHERE epoch_id = ?', i)[0][0]
               for i in ids), len(ids)
span, n = windows_total(since, until)
check(report_total(f'{out}/span.csv') == span and n >= 3,
      f'--since/--until: report {report_total(f"{out}/span.csv")} = {n} windows summed {span}')
check(report_total(f'{out}/all.csv') == stored,
      f'--since before the start: report {report_total(f"{out}/all.csv")} = every window {stored}')
sys.exit(0 if ok else 1)
PY
