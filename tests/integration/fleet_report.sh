#!/usr/bin/env bash
# fleet_report.sh LCPIPROF SHIP LCPID LCPICTL TINY LCPIDIFF - lcpiprof --fleet over
# two clickhouse-server shards (clickhouse_server.sh; Debian 12's 18.16):
#  - two hosts, each a real short lcpid run (its own database), each shipped
#    by lcpi-ship into the `lcpi` tables of its own shard; the first host's
#    workload relabelled into a unit (its process rows' cgroup);
#  - `lcpi-ship --create-distributed` makes the Distributed tables over both
#    shards (database `fleet`, cluster lcpi_test of the servers' config);
#  - lcpiprof --fleet through them, per image and per procedure (CSV),
#    equals the sum of lcpiprof over the two databases, counts and names;
#    per shard (one host), each equals that host's own report;
#  - --label unit=UNIT keeps exactly the first host's workload: per image its
#    samples, --by unit that one unit, -P exactly its pids;
#  - periods weighed as locally (images, -p, -P, --by), a hostile host's
#    periods 2^64-1 and 0 refused;
#  - a hostile host's names for another's identity: not read for --host, nor,
#    with one count row of it, without --host (the hosts' disagreement warned);
#  - lcpidiff --fleet: its sides A and B are lcpiprof --fleet over their time
#    ranges, per image and procedure;
#  - --format pprof read by go tool pprof, per function as -p;
#  - --host, JSON/HTML/text render, and views not fleet-capable refused.
set -euo pipefail
prof=$1 ship=$2 lcpid=$3 lcpictl=$4 tiny=$5 diff=$6
command -v clickhouse-server >/dev/null || { echo "SKIP: clickhouse-server not installed (scripts/setup.sh installs it)"; exit 77; }
command -v go >/dev/null || { echo "SKIP: go not installed (go tool pprof reads the fleet's pprof; scripts/setup.sh installs golang-go)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (system-wide perf events for lcpid)"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/clickhouse_server.sh"
dir=$(mktemp -d /tmp/lcpi-fleetrep-XXXXXX)
daemon= pid_a= pid_b=
cleanup() {
  [ -z "$daemon" ] || kill $daemon 2>/dev/null || true
  for p in $pid_a $pid_b; do CH_PID=$p; ch_stop; done
  [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
t_start=$(date +%s.%N)

# --- two servers, two shards of cluster lcpi_test (each knows both)
http_a=$(ch_free_port) tcp_a=$(ch_free_port) http_b=$(ch_free_port) tcp_b=$(ch_free_port)
export CH_EXTRA_CONFIG="<remote_servers><lcpi_test>
  <shard><replica><host>127.0.0.1</host><port>$tcp_a</port></replica></shard>
  <shard><replica><host>127.0.0.1</host><port>$tcp_b</port></replica></shard>
</lcpi_test></remote_servers>"
CH_DIR=$dir/ch_a CH_HTTP_PORT=$http_a CH_TCP_PORT=$tcp_a CH_URL=http://127.0.0.1:$http_a
ch_write_config "$CH_DIR"; ch_launch; pid_a=$CH_PID url_a=$CH_URL
CH_DIR=$dir/ch_b CH_HTTP_PORT=$http_b CH_TCP_PORT=$tcp_b CH_URL=http://127.0.0.1:$http_b
ch_write_config "$CH_DIR"; ch_launch; pid_b=$CH_PID url_b=$CH_URL
CH_URL=$url_a
echo "two shards: clickhouse-server $(ch_query 'SELECT version()') on $url_a and $url_b"

# --- two hosts from one short lcpid run (four windows): each keeps two of
# them, its own samples (two lcpid runs cost 8 s more on a busy machine)
"$lcpid" --foreground --max-overhead 0 --db "$dir/run.db" --socket "$dir/s" --events cpu-clock --frequency 2000 \
  --log-level warn 2>"$dir/lcpid.log" &
daemon=$!
for _ in $(seq 100); do "$lcpictl" --socket "$dir/s" status >/dev/null 2>&1 && break; sleep 0.1; done
for w in 1 2 3 4; do "$tiny" 150; "$lcpictl" --socket "$dir/s" epoch >/dev/null; done
"$lcpictl" --socket "$dir/s" stop >/dev/null
wait $daemon; daemon=
# the open epoch closed too: local --epoch all and the shipped windows are the same set
sqlite3 "$dir/run.db" "UPDATE epochs SET ended = max(started, CAST(strftime('%s','now') AS INTEGER)) WHERE ended IS NULL"
# known figures of what each window cost and of its unknown and lost
# samples (the run is too short for lcpid's calibration): the header reads
# them from the shipped windows, summed over the hosts
sqlite3 "$dir/run.db" "INSERT OR REPLACE INTO window_costs (epoch_id, samples, cpu_ns, interrupt_ns,
    interrupt_ci95_ns, daemon_ns, module_samples, module_handler_ns, stack_samples)
  SELECT id, 1000 * id, 2000000000, 8000000 * id * id, 900000 * id, 500000 * id, 0, 0, 100 * id
  FROM epochs;
  INSERT OR REPLACE INTO stats (epoch_id, name, value) SELECT id, 'unknown', 7 * id FROM epochs;
  INSERT OR REPLACE INTO stats (epoch_id, name, value) SELECT id, 'lost', 3 * id FROM epochs;"
half=$(sqlite3 "$dir/run.db" "SELECT id FROM epochs ORDER BY id LIMIT 1 OFFSET 1")
keep_epochs() {  # keep_epochs HOST CONDITION: HOST.db holds the run's epochs where id CONDITION
  cp "$dir/run.db" "$dir/$1.db"
  local sql="" t
  for t in $(sqlite3 "$dir/$1.db" "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
             WHERE m.type = 'table' AND c.name = 'epoch_id'"); do
    sql+="DELETE FROM $t WHERE NOT (epoch_id $2);"
  done
  sqlite3 "$dir/$1.db" "$sql DELETE FROM epochs WHERE NOT (id $2);"
}
keep_epochs alpha "<= $half"
keep_epochs beta "> $half"
echo "two hosts made (at ${SECONDS}s)"
# host alpha's workload in a unit of its own (as lcpid records a unit's cgroup)
unit=lcpi-fleet-test.service
sqlite3 "$dir/alpha.db" "INSERT INTO cgroups (path) VALUES ('/system.slice/$unit');
  UPDATE process_counts SET cgroup_id = (SELECT id FROM cgroups WHERE path = '/system.slice/$unit')
  WHERE comm = 'tiny'"
"$ship" --once --url "$url_a" --db "$dir/alpha.db" --state "$dir/alpha.state" --host alpha 2>"$dir/ship-alpha.log"
"$ship" --once --url "$url_b" --db "$dir/beta.db" --state "$dir/beta.state" --host beta 2>"$dir/ship-beta.log"
echo "shipped (at ${SECONDS}s)"
"$ship" --url "$url_a" --database fleet --create-distributed lcpi_test 2>"$dir/dist.log" ||
  { echo "FAIL: lcpi-ship --create-distributed: $(tail -2 "$dir/dist.log")"; exit 1; }

# sum NAMECOLS CSV...: the CSVs' rows summed by their first NAMECOLS columns
# (name, image...). The samples no symbol covers are grouped into ranges
# over the offsets sampled (kRangeGap), and two hosts' offsets together may
# join ranges each had apart: those are compared per image, summed; every
# named procedure row is compared as it is.
sum_csv() {
  local names=$1; shift
  python3 - "$names" "$@" <<'PY'
import csv, sys, collections, re
n = int(sys.argv[1]); sums = collections.Counter()
ranged = re.compile(r'\+0x[0-9a-f]+(-0x[0-9a-f]+)?$')
for path in sys.argv[2:]:
    rows = list(csv.reader(open(path, newline='', encoding='utf-8', errors='surrogateescape')))
    head = rows[0]; c = head.index('cpu-clock')
    for r in rows[1:]:
        key = r[:n]
        if ranged.search(key[0]): key[0] = '[offset ranges]'
        sums[tuple(key)] += int(r[c])
for k in sorted(sums): print('\t'.join(k) + '\t' + str(sums[k]))
PY
}
fleet="--fleet $url_a --database fleet"
compare() {  # compare WHAT NAMECOLS 'LOCAL ARGS' 'FLEET ARGS' DB...
  local what=$1 n=$2 largs=$3 fargs=$4; shift 4
  local files=()
  for db in "$@"; do
    # --observer-inline: --fleet has no [lcpi: observer] line yet
    if ! "$prof" --db "$dir/$db.db" --epoch all --observer-inline --format csv $largs >"$dir/local-$db.csv" 2>"$dir/prof.err"; then
      # a time range may hold none of this host's windows: it adds nothing
      grep -q "no epoch or window" "$dir/prof.err" && continue
      echo "FAIL ($what): lcpiprof --db $db.db: $(tail -1 "$dir/prof.err")"; exit 1
    fi
    files+=("$dir/local-$db.csv")
  done
  if ! "$prof" $fargs --format csv >"$dir/fleet.csv" 2>"$dir/fleet.err"; then
    echo "FAIL ($what): lcpiprof --fleet: $(tail -2 "$dir/fleet.err")"; exit 1
  fi
  sum_csv $n "${files[@]}" >"$dir/want"
  sum_csv $n "$dir/fleet.csv" >"$dir/got"
  if ! diff "$dir/want" "$dir/got" >"$dir/diff"; then
    echo "FAIL ($what): the fleet report differs from the local ones summed"; head -20 "$dir/diff"; exit 1
  fi
  [ -s "$dir/want" ] || { echo "FAIL ($what): nothing to compare"; exit 1; }
  echo "ok ($what): $(wc -l <"$dir/got") rows equal (at ${SECONDS}s)"
}
compare "images, two shards" 2 "" "$fleet" alpha beta
compare "procedures, two shards" 2 "-p" "$fleet -p" alpha beta
! grep "disagree" "$dir/fleet.err" || { echo "FAIL: hosts of one run disagree on symbols"; exit 1; }
grep -q tiny_spin "$dir/got" || { echo "FAIL: no tiny_spin among the procedures"; exit 1; }
# (per image: each local -p reads the symbols of every image the host ran,
# a compiler's among them on a busy machine: seconds each)
compare "one shard, its own tables (GLOBAL IN on a plain table)" 2 "--since @0" "--fleet $url_b --since @0" beta
compare "one host through the shards" 2 "" "$fleet --host alpha" alpha
# the header's unknown, lost and cost lines: the shipped windows' statistics
# and costs summed, as a local report over the same windows sums them (run.db
# holds both hosts' windows)
header_facts() {  # header_facts JSON-FILE: the header's figures compared
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); c = d["cost"]
# the sums themselves too: every ratio would stay the same with each row counted twice
print(json.dumps({"stats": {k: d["stats"].get(k, 0) for k in ("attributed", "unknown", "lost", "dropped")},
                  "unknown": d["unknown_percent"], "lost": d["lost_percent"],
                  "cost": {k: c.get(k) for k in ("measured", "percent", "ci95_percent",
                           "interrupt_ns_per_sample", "daemon_ns_per_sample",
                           "samples_per_s_per_cpu", "stacks_per_s_per_cpu", "text")}},
                 sort_keys=True))' "$1"
}
for pair in "run|$fleet" "alpha|$fleet --host alpha"; do
  db=${pair%%|*} fargs=${pair#*|}
  "$prof" --db "$dir/$db.db" --epoch all --format json >"$dir/hl.json"
  "$prof" $fargs --format json >"$dir/hf.json" 2>"$dir/hf.err"
  want=$(header_facts "$dir/hl.json") got=$(header_facts "$dir/hf.json")
  [ "$want" = "$got" ] && [[ $want == *'"measured": true'* ]] && [[ $want != *'"unknown": 0.0}'* ]] &&
    [[ $want == *'stacks/s/CPU'* ]] ||
    { echo "FAIL: the fleet header ($fargs) against $db.db's:"; echo " want $want"; echo " got  $got"; cat "$dir/hf.err"; exit 1; }
done
echo "ok (the header's unknown, lost and cost lines: the local ones, $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cost"]["text"])' "$dir/hf.json"))"
# --since/--until: the windows that overlap, as one database selects its epochs
since=$(sqlite3 "$dir/alpha.db" "SELECT max(started) FROM epochs")
compare "--since, one host through the shards" 2 "--since @$since" "$fleet --host alpha --since @$since" alpha
until=$(sqlite3 "$dir/beta.db" "SELECT min(ended) FROM epochs")
compare "--until, two shards" 2 "--until @$until" "$fleet --until @$until" alpha beta
# lcpidiff --fleet: A up to $until, B from $since; each side's counts are
# lcpiprof --fleet's over its range, per image (by path) and procedure
for view in "" "-p"; do
  "$diff" $fleet $view --since @0 --until @$until --since @$since --format csv >"$dir/diff.csv" 2>"$dir/diff.err" ||
    { echo "FAIL: lcpidiff --fleet $view: $(tail -2 "$dir/diff.err")"; exit 1; }
  "$prof" $fleet $view --until @$until --format csv >"$dir/diff-a.csv"
  "$prof" $fleet $view --since @$since --format csv >"$dir/diff-b.csv"
  python3 - "$dir/diff.csv" "$dir/diff-a.csv" "$dir/diff-b.csv" "$view" <<'PY' || { echo "FAIL: lcpidiff --fleet $view"; exit 1; }
import csv, sys, collections
diff, a, b, procs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "-p"
key = (lambda r: (r["procedure"], r["image"])) if procs else (lambda r: r["image"])
def side(path):
    s = collections.Counter()
    for r in csv.DictReader(open(path, newline='', encoding='utf-8', errors='surrogateescape')):
        s[key(r)] += int(r["cpu-clock"])
    return {k: v for k, v in s.items() if v}
rows = list(csv.DictReader(open(diff, newline='', encoding='utf-8', errors='surrogateescape')))
got_a = {key(r): int(r["count_a"]) for r in rows if int(r["count_a"])}
got_b = {key(r): int(r["count_b"]) for r in rows if int(r["count_b"])}
want_a, want_b = side(a), side(b)
assert got_a == want_a, f"A: {sorted(set(got_a.items()) ^ set(want_a.items()))[:5]}"
assert got_b == want_b, f"B: {sorted(set(got_b.items()) ^ set(want_b.items()))[:5]}"
assert got_a != got_b, "A and B are the same"
print(f"ok (lcpidiff --fleet {sys.argv[4] or 'images'}): {len(rows)} rows, A {sum(got_a.values())} and B {sum(got_b.values())} samples as lcpiprof --fleet's")
PY
done
rc=0; "$diff" $fleet --epoch all 2>"$dir/diff.err" >/dev/null || rc=$?
[ $rc = 2 ] && grep -q "two time ranges" "$dir/diff.err" || { echo "FAIL: lcpidiff --fleet --epoch: exit $rc $(cat "$dir/diff.err")"; exit 1; }
compare "label, images" 2 "--label unit=$unit" "$fleet --label unit=$unit" alpha beta
compare "by unit" 1 "--by unit --label unit=$unit" "$fleet --by unit --label unit=$unit" alpha beta
[ "$(wc -l <"$dir/got")" = 1 ] && grep -q "^$unit" "$dir/got" || { echo "FAIL: --by unit shows more than the unit"; cat "$dir/got"; exit 1; }
compare "by unit, --since, two shards (GLOBAL IN within GLOBAL JOIN)" 1 "--by unit --since @$since" "$fleet --by unit --since @$since" alpha beta
# -P: exactly the pids of the unit's processes
want=$(sqlite3 "$dir/alpha.db" "SELECT DISTINCT pc.pid FROM process_counts pc JOIN cgroups c ON c.id = pc.cgroup_id
  WHERE c.path = '/system.slice/$unit' ORDER BY 1" | tr '\n' ' ')
"$prof" $fleet -P --label unit=$unit --format csv >"$dir/P.csv"
got=$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(' '.join(sorted({x['pid'] for x in r}, key=int)) + ' ')" "$dir/P.csv")
[ -n "${want// }" ] && [ "$want" = "$got" ] || { echo "FAIL (-P --label): pids '$got', want '$want'"; exit 1; }
echo "ok (-P --label unit=$unit): exactly the unit's pids: $got"

# --- windows sampled at different periods (the governor's): host gamma's
# two windows recorded at periods 1000 and 2000; the fleet weighs each
# window's counts by its period over the newest's, as the local report does
first2=$(sqlite3 "$dir/run.db" "SELECT group_concat(id, ' ') FROM (SELECT id FROM epochs ORDER BY id LIMIT 2)")
keep_epochs gamma "IN (${first2// /,})"
sqlite3 "$dir/gamma.db" "UPDATE epoch_events SET period = CASE WHEN epoch_id = (SELECT min(id) FROM epochs) THEN 1000 ELSE 2000 END"
# both windows in one second, as short ones often are: the newest is still
# the second (a tie of starts once made the fleet take either)
sqlite3 "$dir/gamma.db" "UPDATE epochs SET started = (SELECT min(started) FROM epochs), ended = (SELECT min(started) FROM epochs) + 1"
"$ship" --once --url "$url_a" --database periods --db "$dir/gamma.db" --state "$dir/gamma.state" --host gamma 2>"$dir/ship-gamma.log"
compare "periods 1000 and 2000, images" 2 "" "--fleet $url_a --database periods" gamma
compare "periods 1000 and 2000, procedures" 2 "-p" "--fleet $url_a --database periods -p" gamma
# a hostile host ships a window of its own far in the future, its counts of
# gamma's workload at periods 2^64-1 and 0: refused (not counted, warned),
# so neither its period nor its window's start reweighs gamma's counts
gamma_id=$(sqlite3 "$dir/gamma.db" "SELECT i.identity FROM images i JOIN counts c ON c.image_id = i.id LIMIT 1")
case $gamma_id in *"'"* | *\\*) echo "FAIL: an identity to quote: $gamma_id"; exit 1 ;; esac
ch_query "INSERT INTO periods.counts (host, window_id, attempt, started, identity, event, used, period, offset, count)
  SELECT '!mallory', 1, 1, toDateTime('2100-01-01 00:00:00'), identity, event, used, p, offset, 1000
  FROM periods.counts ARRAY JOIN [toUInt64(18446744073709551615), toUInt64(0)] AS p
  WHERE identity = '$gamma_id' LIMIT 2"
ch_query "INSERT INTO periods.windows (host, window_id, attempt, kind, tag, started, ended, shipped, count_rows, process_rows, samples)
  VALUES ('!mallory', 1, 1, 'window', '', '2100-01-01 00:00:00', '2100-01-01 01:00:00', now(), 2, 0, 2000)"
compare "periods, with a hostile host's periods 2^64-1 and 0 in the far future" 2 "" "--fleet $url_a --database periods" gamma
grep -q "2000 samples of cpu-clock shipped at a period of 0 or beyond 2^62 .*(!mallory): not counted" "$dir/fleet.err" ||
  { echo "FAIL: no warning of the refused periods: $(cat "$dir/fleet.err")"; exit 1; }
compare "periods, procedures, with a hostile host's periods" 2 "-p" "--fleet $url_a --database periods -p" gamma
# -P and --by weighed as the other views: their rows carry no period, each
# window's is read from its count rows. A local report rounds each
# process's weighed count per image (ProfileDb::ProcessTotals) before it
# sums them per pid or label, the fleet once per pid or label: they may
# differ by up to 1/2 per (process, image) row and 1/2 for the fleet's own
# rounding, and by no more (without the fleet's 1/2, a pid of 5 rows 3
# apart failed once in a fresh clone's run).
per_key() {  # per_key CSV COLUMN: {key: samples} summed per COLUMN, as JSON
  python3 -c "import csv, sys, collections, json
s = collections.Counter()
for r in csv.DictReader(open(sys.argv[1])): s[r[sys.argv[2]]] += int(r['cpu-clock'])
print(json.dumps(s, sort_keys=True))" "$1" "$2"
}
# per_pid_sql SELECT-LIST: gamma's process rows per pid, as JSON {pid: value}
per_pid_sql() {
  sqlite3 "$dir/gamma.db" "SELECT json_group_object(pid, v) FROM (SELECT pid, $1 AS v FROM process_counts GROUP BY pid)"
}
near() {  # near WHAT LOCAL-CSV FLEET-CSV COLUMN (pid, or unit: gamma has none)
  local want got rows raw apart
  want=$(per_key "$2" "$4") got=$(per_key "$3" "$4")
  # per key, its (pid, image, event) rows, each rounded apart locally, and
  # its samples as stored, not weighed
  rows=$(per_pid_sql "count(DISTINCT image_id || ',' || event_id)") raw=$(per_pid_sql "sum(count)")
  apart=$(python3 - "$want" "$got" "$rows" "$raw" "$4" <<'PY'
import json, sys
want, got, rows, raw = (json.loads(a) for a in sys.argv[1:5])
if sys.argv[5] != "pid":  # one key for all: gamma's processes carry no unit
    rows, raw = {k: sum(rows.values()) for k in want}, {k: sum(raw.values()) for k in want}
assert want and want.keys() == got.keys(), "not the same keys"
for k in want:
    # each local row rounded (1/2 each at most), and the fleet's sum once (1/2)
    assert 2 * abs(want[k] - got[k]) <= rows[k] + 1, f"{k}: {abs(want[k] - got[k])} apart, over half of its {rows[k]} rows and one"
# the check tells weighed from not: the counts as stored are further off
assert any(2 * abs(want[k] - raw[k]) > rows[k] for k in want), "not weighed locally either"
off = sum(abs(want[k] - got[k]) for k in want)
print(f"{len(want)} values, {off} samples apart of {sum(want.values())} ({sum(raw.values())} as stored)")
PY
) || { echo "FAIL ($1): per $4, local '$want', fleet '$got'"; exit 1; }
  echo "ok ($1): per $4, $apart (at ${SECONDS}s)"
}
near_both() {  # near_both WHAT: --by unit and -P, local and fleet
  "$prof" --db "$dir/gamma.db" --epoch all --observer-inline --by unit --format csv >"$dir/by-local.csv"
  "$prof" --fleet "$url_a" --database periods --by unit --format csv >"$dir/by-fleet.csv" 2>"$dir/fleet.err"
  near "$1, by unit" "$dir/by-local.csv" "$dir/by-fleet.csv" unit
  "$prof" --db "$dir/gamma.db" --epoch all --observer-inline -P --format csv >"$dir/P-local.csv"
  "$prof" --fleet "$url_a" --database periods -P --format csv >"$dir/P-fleet.csv" 2>"$dir/fleet.err"
  near "$1, -P" "$dir/P-local.csv" "$dir/P-fleet.csv" pid
}
near_both periods
# forged rows of 0 and 1 sample at period 1 in gamma's own window (any host
# may insert any row): a window's period is that of most of its samples, so
# gamma's process rows keep their weight (weighed by the least period, or
# refused for having two, they would not)
ch_query "INSERT INTO periods.counts (host, window_id, attempt, started, identity, event, used, period, offset, count)
  SELECT host, window_id, attempt, started, identity, event, used, 1, offset, c FROM periods.counts
  ARRAY JOIN [toUInt64(0), toUInt64(1)] AS c WHERE host = 'gamma' LIMIT 2"
near_both "periods, forged rows of 0 and 1 sample at period 1"
# a hostile host's process rows in its window of refused periods only: not
# counted, and warned
ch_query "INSERT INTO periods.processes (host, window_id, attempt, started, pid, comm, cgroup, unit, container, pod, identity, event, count)
  SELECT '!mallory', 1, 1, toDateTime('2100-01-01 00:00:00'), 4242, 'evil', '', '', '', '', identity, event, 777
  FROM periods.counts WHERE host = 'gamma' LIMIT 1"
near_both "periods, a hostile host's process rows in a window of refused periods"
grep -q "^lcpiprof: warning: 777 samples of process rows in windows whose count rows have no valid period: not counted" "$dir/fleet.err" ||
  { echo "FAIL: no warning of the refused process rows: $(cat "$dir/fleet.err")"; exit 1; }

# --- a hostile host's counts that a UInt64 sum would wrap: two rows of
# 2^63 samples of gamma's image, at its window's period. Summed as UInt64
# they add 2^64, nothing: the report would show gamma's honest count. The
# fleet sums as doubles: the image's count saturates, with a warning.
"$ship" --once --url "$url_a" --database wrap --db "$dir/gamma.db" --state "$dir/gamma-wrap.state" --host gamma 2>"$dir/ship-wrap.log"
"$prof" --fleet "$url_a" --database wrap --format csv >"$dir/wrap-honest.csv"
wrap_id=$(ch_query "SELECT identity FROM wrap.counts WHERE period = 2000 AND count > 0 ORDER BY identity LIMIT 1")
case $wrap_id in '' | *"'"* | *\\*) echo "FAIL: no identity to wrap, or one to quote: '$wrap_id'"; exit 1 ;; esac
ch_query "INSERT INTO wrap.counts (host, window_id, attempt, started, identity, event, used, period, offset, count)
  SELECT '!wrap', 1, 1, started, identity, event, used, period, offset + n, toUInt64(9223372036854775808)
  FROM wrap.counts ARRAY JOIN [1, 2] AS n WHERE identity = '$wrap_id' AND period = 2000 LIMIT 2"
[ "$(ch_query "SELECT count() FROM wrap.counts WHERE host = '!wrap'")" = 2 ] ||
  { echo "FAIL: the two hostile rows were not inserted"; exit 1; }
ch_query "INSERT INTO wrap.windows (host, window_id, attempt, kind, tag, started, ended, shipped, count_rows, process_rows, samples)
  SELECT '!wrap', 1, 1, 'window', '', started, ended, now(), 2, 0, 0 FROM wrap.windows WHERE host = 'gamma' ORDER BY started DESC LIMIT 1"
"$prof" --fleet "$url_a" --database wrap --format csv >"$dir/wrap.csv" 2>"$dir/fleet.err"
python3 - "$dir/wrap-honest.csv" "$dir/wrap.csv" "$wrap_id" <<'PY' || { echo "FAIL: a hostile host's counts wrapped the sum"; cat "$dir/fleet.err"; exit 1; }
import csv, sys
def of(path):
    return {r["identity"]: int(r["cpu-clock"]) for r in csv.DictReader(open(path))}
honest, got, ident = of(sys.argv[1]), of(sys.argv[2]), sys.argv[3]
print(f"gamma's image: {honest[ident]} samples; with two hostile rows of 2^63: {got[ident]}")
assert got[ident] == 2**64 - 1, "not saturated"
# the header's total saturates too: the image is 100 %, not a wrapped total's
share = {r["identity"]: float(r["cpu-clock_percent"]) for r in csv.DictReader(open(sys.argv[2]))}[ident]
assert 99.9 <= share <= 100, f"{share} % of the header's total"
PY
grep -q "a weighed count beyond 2^64-1 .* is shown as 18446744073709551615" "$dir/fleet.err" ||
  { echo "FAIL: no warning of the saturated count: $(cat "$dir/fleet.err")"; exit 1; }
# per procedure: the two rows (two offsets next to each other, one
# procedure) add up there, in the report's own sums
"$prof" --fleet "$url_a" --database wrap -p --format csv >"$dir/wrap-p.csv" 2>/dev/null
python3 - "$dir/wrap-p.csv" <<'PY' || { echo "FAIL: a procedure's sum of two hostile rows wrapped"; exit 1; }
import csv, sys
top = max(int(r["cpu-clock"]) for r in csv.DictReader(open(sys.argv[1])))
print(f"the largest procedure: {top} samples")
assert top == 2**64 - 1, "not saturated"
PY
echo "ok (a hostile host's counts of 2^63 twice: saturated and warned, not wrapped)"
# the same two rows at a refused period (0), read beside gamma alone: the
# refused samples' sum saturates, and the warning says so as for a count
ch_query "INSERT INTO wrap.counts (host, window_id, attempt, started, identity, event, used, period, offset, count)
  SELECT '!refused', 1, 1, started, identity, event, used, 0, offset + n, toUInt64(9223372036854775808)
  FROM wrap.counts ARRAY JOIN [1, 2] AS n WHERE identity = '$wrap_id' AND host = 'gamma' AND period = 2000 LIMIT 2"
ch_query "INSERT INTO wrap.windows (host, window_id, attempt, kind, tag, started, ended, shipped, count_rows, process_rows, samples)
  SELECT '!refused', 1, 1, 'window', '', started, ended, now(), 2, 0, 0 FROM wrap.windows WHERE host = 'gamma' ORDER BY started DESC LIMIT 1"
"$prof" --fleet "$url_a" --database wrap --host gamma --host '!refused' --format csv >"$dir/refused.csv" 2>"$dir/fleet.err"
grep -q "18446744073709551615 samples of cpu-clock shipped at a period of 0 .*(!refused): not counted" "$dir/fleet.err" &&
  grep -q "a weighed count beyond 2^64-1 .* is shown as 18446744073709551615" "$dir/fleet.err" ||
  { echo "FAIL: the refused samples' saturated sum is not warned as saturated: $(cat "$dir/fleet.err")"; exit 1; }
echo "ok (a hostile host's refused-period counts of 2^63 twice: saturated and warned)"

# --- a hostile shipper (insert rights, as every host has) sends an images
# row and symbols for alpha's workload's identity: alpha's report keeps
# alpha's names (images and symbols are read from a host of the selection)
tiny_id=$(sqlite3 "$dir/alpha.db" "SELECT i.identity FROM images i JOIN counts c ON c.image_id = i.id
  WHERE i.path LIKE '%tiny%' LIMIT 1")
[ -n "$tiny_id" ] || { echo "FAIL: no identity of the tiny workload in alpha.db"; exit 1; }
has_host=$(ch_query "SELECT count() FROM system.columns WHERE database = 'lcpi' AND table = 'symbols' AND name = 'host'")
case $tiny_id in *"'"* | *\\*) echo "FAIL: an identity to quote: $tiny_id"; exit 1 ;; esac
esc_id=$tiny_id
# its symbols: alpha's, renamed, at the same offsets (one sorting before the
# real name, one after), and its image row, which the next merge keeps
# (ReplacingMergeTree keeps the last row inserted of a key)
for pre in AAA_HIJACKED_ zzz_HIJACKED_; do
  if [ "$has_host" = 1 ]; then
    ch_query "INSERT INTO lcpi.symbols (identity, host, offset, size, name)
      SELECT identity, 'mallory', offset, size, concat('$pre', name) FROM lcpi.symbols WHERE identity = '$esc_id'"
  else
    ch_query "INSERT INTO lcpi.symbols (identity, offset, size, name)
      SELECT identity, offset, size, concat('$pre', name) FROM lcpi.symbols WHERE identity = '$esc_id'"
  fi
done
ch_query "INSERT INTO lcpi.images (identity, kind, path, host, symbols) VALUES ('$esc_id', 'module', '[evil]', 'mallory', 1)"
ch_query "OPTIMIZE TABLE lcpi.images FINAL"
compare "procedures after a hostile host's symbols for alpha's identity" 2 "-p" "--fleet $url_a -p --host alpha" alpha
if grep -q "HIJACKED\|\[evil\]" "$dir/got"; then echo "FAIL: another host's names in alpha's report"; exit 1; fi
compare "images after a hostile host's row for alpha's identity" 2 "" "--fleet $url_a --host alpha" alpha
# without --host every host is selected: the hostile host names itself to
# sort first ('!mallory' < 'alpha'), ships its own symbols and image row for
# alpha's identity and ONE count row of it (a committed window of its own).
# alpha, with the most samples of the identity, still names it; the report
# warns that the hosts disagree on its symbols, naming both.
ch_query "INSERT INTO lcpi.symbols (identity, host, offset, size, name)
  SELECT identity, '!mallory', offset, size, concat('AAA_HIJACKED_', name) FROM lcpi.symbols
  WHERE identity = '$esc_id' AND host = 'alpha'"
ch_query "INSERT INTO lcpi.images (identity, kind, path, host, symbols) VALUES ('$esc_id', 'module', '[evil]', '!mallory', 1)"
ch_query "INSERT INTO lcpi.counts (host, window_id, attempt, started, identity, event, used, period, offset, count)
  SELECT '!mallory', 1, 1, started, identity, event, used, period, offset, 1 FROM lcpi.counts
  WHERE identity = '$esc_id' AND host = 'alpha' LIMIT 1"
ch_query "INSERT INTO lcpi.windows (host, window_id, attempt, kind, tag, started, ended, shipped, count_rows, process_rows, samples)
  SELECT '!mallory', 1, 1, kind, tag, started, ended, shipped, 1, 0, 1 FROM lcpi.windows WHERE host = 'alpha' LIMIT 1"
for view in "-p" ""; do
  "$prof" --fleet "$url_a" $view --format csv >"$dir/nohost.csv" 2>"$dir/nohost$view.err" ||
    { echo "FAIL: lcpiprof --fleet $view: $(tail -2 "$dir/nohost$view.err")"; exit 1; }
  grep -q "tiny" "$dir/nohost.csv" || { echo "FAIL ($view): no tiny workload in the report"; exit 1; }
  if grep -q "HIJACKED\|\[evil\]" "$dir/nohost.csv"; then
    echo "FAIL ($view): one count row let '!mallory' name alpha's identity for every host:"
    grep "HIJACKED\|\[evil\]" "$dir/nohost.csv" | head -3; exit 1
  fi
done
warned=$(grep "disagree on the symbols of $tiny_id (2 hosts: !mallory, alpha)" "$dir/nohost-p.err") ||
  { echo "FAIL: no warning that !mallory and alpha disagree on $tiny_id's symbols"; cat "$dir/nohost-p.err"; exit 1; }
echo "ok (one hostile count row does not rename alpha's identity without --host; warned: $warned)"

# the other formats render the same model
"$prof" $fleet -p --top 3 --format text --width 120 >"$dir/text"
grep -q "^# database: .*fleet" "$dir/text" || { echo "FAIL: text header"; head -5 "$dir/text"; exit 1; }
"$prof" $fleet --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["rows"], d'
"$prof" $fleet -p --format html -o "$dir/p.html" && grep -q "tiny_spin" "$dir/p.html" || { echo "FAIL: html"; exit 1; }
# hostile input goes through the escaping: a host with a quote selects nothing, errors not
"$prof" $fleet --host "x' OR '1'='1" --format csv >"$dir/evil.csv" 2>"$dir/evil.err" || true
[ "$(wc -l <"$dir/evil.csv")" -le 1 ] || { echo "FAIL: a quoted host selected rows"; cat "$dir/evil.csv"; exit 1; }
# the URL from a file only its owner reads; one others may read is refused
(umask 077; echo "$url_a" >"$dir/url")
"$prof" --fleet-url-file "$dir/url" --database fleet --format csv >"$dir/file.csv"
cmp -s "$dir/file.csv" <("$prof" $fleet --format csv) || { echo "FAIL: --fleet-url-file reads another report"; exit 1; }
chmod 644 "$dir/url"
rc=0; "$prof" --fleet-url-file "$dir/url" 2>"$dir/url.err" >/dev/null || rc=$?
[ $rc = 2 ] && grep -q "others may read" "$dir/url.err" || { echo "FAIL: a readable URL file: exit $rc $(cat "$dir/url.err")"; exit 1; }
rc=0; "$prof" $fleet --epoch all 2>"$dir/epoch.err" >/dev/null || rc=$?
[ $rc = 1 ] && grep -q "epoch names one host" "$dir/epoch.err" || { echo "FAIL: --epoch over --fleet: exit $rc"; exit 1; }
echo "ok (--fleet-url-file, refused: $(cut -c1-60 "$dir/url.err")...)"
# pprof over the fleet, read by go tool pprof: its figures per function are
# lcpiprof --fleet -p's, through the shards and weighed by period (gamma's)
for db in fleet periods; do
  python3 "$here/pprof_check.py" "$prof" "$dir/pprof-$db" --fleet "$url_a" --database $db >"$dir/pprof.log" 2>&1 ||
    { echo "FAIL: pprof over --fleet, database $db:"; cat "$dir/pprof.log"; exit 1; }
  echo "ok (pprof over --fleet, database $db, go tool pprof): $(grep -c "procedures agree" "$dir/pprof.log") selections agree with -p"
done
rc=0; "$prof" $fleet --callers main 2>"$dir/callers.err" >/dev/null || rc=$?
[ $rc = 2 ] && grep -q "not yet .*fleet\|fleet.*not yet" "$dir/callers.err" || { echo "FAIL: --callers over --fleet: exit $rc $(cat "$dir/callers.err")"; exit 1; }
echo "ok (refused): $(cat "$dir/callers.err")"
# an image sampled in B's range only (a library deployed since: in a window
# of beta's far later): lcpidiff --fleet -i shows it new, as lcpidiff over
# two databases would; an image the fleet never heard of is an error
CH_URL=$url_b ch_query "INSERT INTO lcpi.counts (host, window_id, attempt, started, identity, event, used, period, offset, count)
  SELECT host, 1000, 1, toDateTime('2100-01-01 00:00:00'), 'build-id:0123456789abcdef', event, used, period, 4096, 50
  FROM lcpi.shipped_counts WHERE host = 'beta' LIMIT 1"
CH_URL=$url_b ch_query "INSERT INTO lcpi.windows (host, window_id, attempt, kind, tag, started, ended, shipped, count_rows, process_rows, samples)
  VALUES ('beta', 1000, 1, 'window', '', '2100-01-01 00:00:00', '2100-01-01 01:00:00', now(), 1, 0, 50)"
CH_URL=$url_b ch_query "INSERT INTO lcpi.images (identity, kind, path, host, symbols) VALUES ('build-id:0123456789abcdef', 'user', '/usr/lib/lcpi-test-new.so', 'beta', 0)"
"$diff" $fleet -p -i lcpi-test-new --since @0 --until @$until --since @$since --format csv >"$dir/new.csv" 2>"$dir/new.err" ||
  { echo "FAIL: lcpidiff --fleet -i of an image in B only: $(cat "$dir/new.err")"; exit 1; }
python3 - "$dir/new.csv" <<'PY' || { echo "FAIL: lcpidiff --fleet -i lcpi-test-new:"; cat "$dir/new.csv"; exit 1; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["image"] == "/usr/lib/lcpi-test-new.so" for r in rows), rows
assert sum(int(r["count_a"]) for r in rows) == 0 and sum(int(r["count_b"]) for r in rows) == 50, rows
assert all(r["status"] == "new" for r in rows), rows
PY
rc=0; "$diff" $fleet -p -i no-such-image.so --since @0 --until @$until --since @$since 2>"$dir/nosuch.err" >/dev/null || rc=$?
[ $rc = 1 ] && grep -q "no such image in the fleet: no-such-image.so" "$dir/nosuch.err" ||
  { echo "FAIL: lcpidiff --fleet -i of no image: exit $rc $(cat "$dir/nosuch.err")"; exit 1; }
echo "ok (lcpidiff --fleet -i: an image of B only is new, one of neither an error)"
echo "fleet-report: $(python3 -c "print(f'{$(date +%s.%N)-$t_start:.1f}')") s"
