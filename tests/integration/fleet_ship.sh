#!/usr/bin/env bash
# fleet_ship.sh SHIP LCPID LCPICTL TINY - lcpi-ship's guarantees against a
# real clickhouse-server (clickhouse_server.sh starts one of the test's own):
#  exact     the counts per image identity and event, per process, and each
#            statistic of the windows (window_facts) in ClickHouse (the views
#            of committed windows) equal the sums over the database's closed
#            windows, names byte for byte
#  twice     a second run sends nothing; one windows row per window
#  killed    SIGKILL after a window's rows (before its commit), and after its
#            commit (before the shipper's bookkeeping): the rerun ships each
#            window once
#  many      4,000 new images in one window: asked about in lists under
#            max_query_size, every window shipped
#  life      a recreated database's windows (same ids, other start times)
#            retried: the first life's committed rows are kept
#  two       a second shipper (another state file) on the same database
#            refuses to start
#  away      the server killed mid-ship: the shipper retries, --status shows
#            the error; restarted, every window arrives, none twice
# Each case ships into a ClickHouse database of its own, from a state file
# of its own.
set -euo pipefail
ship=$1 lcpid=$2 lcpictl=$3 tiny=$4
command -v clickhouse-server >/dev/null || { echo "SKIP: clickhouse-server not installed (scripts/setup.sh installs it)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (system-wide perf events for lcpid)"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/clickhouse_server.sh"
dir=$(mktemp -d /tmp/lcpi-fleet-XXXXXX)
daemon= shipper=
cleanup() {
  [ -z "$daemon" ] || kill $daemon 2>/dev/null || true
  [ -z "$shipper" ] || kill $shipper 2>/dev/null || true
  ch_stop
  [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
t_start=$(date +%s.%N)

ch_start "$dir/ch"
echo "clickhouse-server $(ch_query 'SELECT version()') answered in ${CH_START_SECONDS} s"

# --- a database with closed windows, one program named with hostile bytes
"$lcpid" --foreground --max-overhead 0 --db "$dir/p.db" --socket "$dir/s" --events cpu-clock --frequency 2000 \
  --log-level warn 2>"$dir/lcpid.log" &
daemon=$!
for _ in $(seq 100); do "$lcpictl" --socket "$dir/s" status >/dev/null 2>&1 && break; sleep 0.1; done
evil="$dir/"$'t\tb\\n\nx\xff'
cp "$tiny" "$evil"
for w in 1 2 3; do
  "$tiny" 200 & a=$!
  "$evil" 200 & b=$!
  wait $a $b
  "$lcpictl" --socket "$dir/s" epoch >/dev/null
done
"$lcpictl" --socket "$dir/s" stop >/dev/null
wait $daemon
daemon=

# What the database's closed windows hold, hex for names: the answer.
local_sums() {
  sqlite3 -separator $'\t' "$dir/p.db" \
    "SELECT hex(i.identity), e.name, sum(c.count) FROM counts c JOIN images i ON i.id = c.image_id
     JOIN events e ON e.id = c.event_id JOIN epochs p ON p.id = c.epoch_id
     WHERE p.ended IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2"
}
local_procs() {
  sqlite3 -separator $'\t' "$dir/p.db" \
    "SELECT CASE pc.pid WHEN -1 THEN 4294967295 ELSE pc.pid END, hex(pc.comm), hex(i.identity),
            sum(pc.count) FROM process_counts pc
     JOIN images i ON i.id = pc.image_id JOIN epochs p ON p.id = pc.epoch_id
     WHERE p.ended IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
}
local_facts() {  # each statistic of the closed windows, summed, as window_facts names it
  sqlite3 -separator $'\t' "$dir/p.db" \
    "SELECT 'stat.' || s.name, sum(s.value) FROM stats s JOIN epochs p ON p.id = s.epoch_id
     WHERE p.ended IS NOT NULL GROUP BY 1"
}
# (pid -1, the rolled-up rows and perf's samples of no task, ships as
# UInt32 4294967295, the fleet's rolled-up pid; sorted by sort: ClickHouse
# 18.16 reads ORDER BY 1 as a constant)
local_sums | LC_ALL=C sort >"$dir/want.counts"
local_procs | LC_ALL=C sort >"$dir/want.procs"
local_facts | LC_ALL=C sort >"$dir/want.facts"
[ -s "$dir/want.facts" ] || { echo "FAIL: the windows hold no statistics"; exit 1; }
windows=$(sqlite3 "$dir/p.db" "SELECT count(*) FROM epochs WHERE ended IS NOT NULL")
echo "database: $windows closed windows, $(wc -l <"$dir/want.counts") image-event sums"
grep -q "$(printf '%s' $'t\tb\\n\nx\xff' | xxd -p -u | cut -c1-14)" "$dir/want.procs" ||
  { echo "FAIL: the hostile program has no samples"; exit 1; }

# check DB: ClickHouse's committed rows equal the database's, one windows row each
check() {
  local db=$1 what=$2
  ch_query "SELECT hex(identity), event, sum(count) FROM $db.shipped_counts
            GROUP BY identity, event" | LC_ALL=C sort >"$dir/got.counts"
  ch_query "SELECT pid, hex(comm), hex(identity), sum(count) FROM $db.shipped_processes
            GROUP BY pid, comm, identity" | LC_ALL=C sort >"$dir/got.procs"
  ch_query "SELECT name, sum(value) FROM $db.shipped_window_facts WHERE name LIKE 'stat.%'
            GROUP BY name" | LC_ALL=C sort >"$dir/got.facts"
  local rows dup
  rows=$(ch_query "SELECT count() FROM $db.windows")
  dup=$(ch_query "SELECT count() FROM (SELECT host, window_id FROM $db.windows GROUP BY host, window_id HAVING count() > 1)")
  if ! diff "$dir/want.counts" "$dir/got.counts" >"$dir/diff" || ! diff "$dir/want.procs" "$dir/got.procs" >>"$dir/diff" ||
     ! diff "$dir/want.facts" "$dir/got.facts" >>"$dir/diff" ||
     [ "$rows" != "$windows" ] || [ "$dup" != 0 ]; then
    echo "FAIL ($what): windows rows $rows (want $windows), windows sent twice: $dup"
    head -20 "$dir/diff"
    exit 1
  fi
  echo "ok ($what): $rows windows, $(wc -l <"$dir/got.counts") sums equal"
}
mutations_done() {  # mutations_done DB: waits up to 60 s for DB's deletes to be done
  for _ in $(seq 600); do
    [ "$(ch_query "SELECT count() FROM system.mutations WHERE database = '$1' AND is_done = 0")" = 0 ] && return
    sleep 0.1
  done
  echo "FAIL: $1's deletes (ALTER TABLE ... DELETE) not done after 60 s"; exit 1
}

run() {  # run DB [ENV...]: lcpi-ship --once into DB; its status in $rc
  local db=$1; shift
  rc=0
  # a refused insert is retried (the operator may fix the server): bounded here
  timeout 30 env "$@" "$ship" --once --url "$CH_URL" --db "${DBFILE:-$dir/p.db}" --state "${STATE:-$dir/$db.state}" --database "$db" \
    --host "test-host" 2>>"$dir/$db.log" || rc=$?
}

# --- exact, then twice
run exact
[ $rc = 0 ] || { echo "FAIL: lcpi-ship exited $rc"; head -3 "$dir/exact.log"; exit 1; }
check exact "shipped once"
# each image once, with its symbols: the workload's own (from its file) and
# the kernel's (stored by lcpid)
bid=$(readelf -n "$tiny" | sed -n 's/.*Build ID: *//p')
tiny_id=$(sqlite3 "$dir/p.db" "SELECT hex(identity) FROM images WHERE identity LIKE 'build-id:$bid%'")
spin=$(ch_query "SELECT count() FROM exact.symbols WHERE hex(identity) = '$tiny_id' AND name = 'tiny_spin'")
kernel=$(ch_query "SELECT count() FROM exact.symbols WHERE identity LIKE 'kernel:%'")
symbols=$(ch_query "SELECT count() FROM exact.symbols")
echo "symbols: $symbols rows, the kernel's $kernel, tiny_spin $spin"
[ "$spin" = 1 ] && [ "$kernel" -gt 1000 ] || { echo "FAIL: symbols missing"; exit 1; }
# the mark lcpid's --hold-unshipped reads: at the newest window shipped or
# past it (the open window may have started in the same second)
mark=$(cat "$dir/exact.state.mark")
newest=$(sqlite3 "$dir/p.db" "SELECT max(started) FROM epochs WHERE ended IS NOT NULL")
oldest=$(sqlite3 "$dir/p.db" "SELECT min(started) FROM epochs")
[ "$mark" -ge "$newest" ] && [ "$mark" -gt "$oldest" ] ||
  { echo "FAIL: the ship mark $mark is not at the newest window shipped ($newest)"; exit 1; }
echo "ok (mark): $mark, at or past the newest window shipped ($newest)"
run exact
check exact "shipped twice"
images=$(ch_query "SELECT count(), uniqExact(identity) FROM exact.images")
[ "$(ch_query "SELECT count() FROM exact.symbols")" = "$symbols" ] && [ "${images%%$'\t'*}" = "${images##*$'\t'}" ] ||
  { echo "FAIL: images or symbols sent again: images $images"; exit 1; }
# (counted, not by line number: a run may also log an image it cannot read)
[ "$(grep -c ' shipped: ' "$dir/exact.log")" = "$windows" ] ||
  { echo "FAIL: the second run sent windows again"; cat "$dir/exact.log"; exit 1; }

# --- many images: one window naming 4,000 new images (a CI host running
# fresh test binaries), ~600 KB when asked about in one list, more than
# ClickHouse's max_query_size (256 KiB)
cp "$dir/p.db" "$dir/many.db"
sqlite3 "$dir/many.db" "
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
  INSERT INTO images (identity, path, kind, first_seen)
    SELECT printf('unknown:test-binary-%064d', i), '/nonexistent', 'unknown', 0 FROM n;
  INSERT INTO counts (epoch_id, image_id, event_id, image_offset, count)
    SELECT (SELECT min(id) FROM epochs WHERE ended IS NOT NULL), id, (SELECT min(id) FROM events), 0, 1
    FROM images WHERE path = '/nonexistent';"
rc=0
timeout 60 "$ship" --once --url "$CH_URL" --db "$dir/many.db" --state "$dir/many.state" --database many \
  --host test-host 2>>"$dir/many.log" || rc=$?
images=$(ch_query "SELECT count() FROM many.images WHERE identity LIKE 'unknown:test-binary-%'")
[ $rc = 0 ] && [ "$(ch_query "SELECT count() FROM many.windows")" = "$windows" ] && [ "$images" = 4000 ] ||
  { echo "FAIL (many images): lcpi-ship exited $rc, $images of 4000 images"; grep -m1 "HTTP" "$dir/many.log" | cut -c1-160; exit 1; }
echo "ok (many images): 4000 new images in one window, $windows windows shipped"

# --- killed after its rows, before the commit; then after the commit
for point in rows marker; do
  run "kill_$point" LCPI_SHIP_TEST_HOOK=kill-after-$point
  [ $rc = 137 ] || { echo "FAIL: the hook did not kill lcpi-ship (exit $rc)"; exit 1; }
  if [ $point = rows ]; then
    # the first window's rows are in, its windows row is not: none counts
    sent=$(ch_query "SELECT count() FROM kill_rows.counts") counted=$(ch_query "SELECT count() FROM kill_rows.shipped_counts")
    [ "$sent" -gt 0 ] && [ "$counted" = 0 ] ||
      { echo "FAIL (killed after its rows): $sent rows sent, $counted counted before the commit (want 0)"; exit 1; }
  fi
  run "kill_$point"
  [ $rc = 0 ] || { echo "FAIL: rerun exited $rc"; cat "$dir/kill_$point.log"; exit 1; }
  check "kill_$point" "killed after its $point, rerun"
done
grep -q "in ClickHouse already" "$dir/kill_marker.log" ||
  { echo "FAIL: after the commit the rerun did not find the window"; exit 1; }

# --- killed after its rows, then a second try killed after its commit: the
# run that finds the window committed deletes the first try's rows, and only
# those (the sums still equal the database's once the deletes are done)
run kill_both LCPI_SHIP_TEST_HOOK=kill-after-rows
[ $rc = 137 ] || { echo "FAIL: the rows hook did not kill lcpi-ship (exit $rc)"; exit 1; }
run kill_both LCPI_SHIP_TEST_HOOK=kill-after-marker
[ $rc = 137 ] || { echo "FAIL: the marker hook did not kill lcpi-ship (exit $rc)"; exit 1; }
run kill_both
[ $rc = 0 ] || { echo "FAIL: rerun exited $rc"; cat "$dir/kill_both.log"; exit 1; }
grep -q "in ClickHouse already" "$dir/kill_both.log" ||
  { echo "FAIL: the rerun did not find the committed window"; exit 1; }
mutations_done kill_both
check kill_both "killed after its rows, then after its commit, rerun"
sent=$(ch_query "SELECT count() FROM kill_both.counts") counted=$(ch_query "SELECT count() FROM kill_both.shipped_counts")
[ "$sent" = "$counted" ] ||
  { echo "FAIL: the first try's rows were left: $sent count rows, $counted counted"; exit 1; }
echo "ok (a try's rows deleted by the run that found a later try committed): $sent count rows"

# --- a forged windows row (attempt 0, which no shipper sends) for a window
# not shipped yet, written by any host with insert rights: passed over, the
# window shipped, not held behind it for good
run forged LCPI_SHIP_TEST_HOOK=kill-after-rows  # the tables, and the first window's rows
first=$(sqlite3 "$dir/p.db" "SELECT id || ' ' || started FROM epochs WHERE ended IS NOT NULL ORDER BY id LIMIT 1")
ch_query "INSERT INTO forged.windows (host, window_id, attempt, kind, tag, started, ended, shipped, count_rows, process_rows, samples)
  SELECT 'test-host', ${first% *}, 0, 'window', '', toDateTime(${first#* }), toDateTime(${first#* }), now(), 0, 0, 0"
run forged
[ $rc = 0 ] || { echo "FAIL: a forged windows row of attempt 0 stopped the shipping (exit $rc)"; tail -3 "$dir/forged.log"; exit 1; }
ch_query "ALTER TABLE forged.windows DELETE WHERE attempt = 0"
mutations_done forged
check forged "a forged windows row of attempt 0 passed over"

# --- another life: a recreated profile database (window ids from 1 again,
# other start times) shipped as the same host into the same tables; its
# retried windows' clean-up must not delete the first life's committed rows
run life
[ $rc = 0 ] || { echo "FAIL: lcpi-ship exited $rc"; exit 1; }
first=$(ch_query "SELECT count() FROM life.shipped_counts")
cp "$dir/p.db" "$dir/life2.db"
sqlite3 "$dir/life2.db" "UPDATE epochs SET started = started - 2592000, ended = ended - 2592000"
DBFILE=$dir/life2.db STATE=$dir/life2.state run life LCPI_SHIP_TEST_HOOK=kill-after-rows
DBFILE=$dir/life2.db STATE=$dir/life2.state run life
[ $rc = 0 ] || { echo "FAIL: lcpi-ship exited $rc"; cat "$dir/life.log"; exit 1; }
mutations_done life
both=$(ch_query "SELECT count() FROM life.shipped_counts")
[ "$both" = $((2 * first)) ] ||
  { echo "FAIL (another life): $both committed count rows, want $((2 * first)) (the first life's $first and as many again)"; exit 1; }
echo "ok (another life): same window ids, other start times: $both committed count rows kept"

# --- two shippers with two state files on one database: the second refuses
LCPI_SHIP_TEST_HOOK=pause-ms=3000 "$ship" --once --url "$CH_URL" --db "$dir/p.db" --state "$dir/two_a.state" \
  --database two --host test-host 2>"$dir/two_a.log" &
shipper=$!
for _ in $(seq 200); do grep -q "shipped" "$dir/two_a.log" && break; sleep 0.05; done
rc=0
timeout 30 "$ship" --once --url "$CH_URL" --db "$dir/p.db" --state "$dir/two_b.state" --database two \
  --host test-host 2>"$dir/two_b.log" || rc=$?
kill $shipper; wait $shipper || true; shipper=
[ $rc = 1 ] && grep -q "another lcpi-ship ships" "$dir/two_b.log" ||
  { echo "FAIL (two shippers): the second exited $rc: $(tail -1 "$dir/two_b.log")"; exit 1; }
echo "ok (two shippers): the second refused: $(tail -1 "$dir/two_b.log")"

# --- the server away mid-ship
LCPI_SHIP_TEST_HOOK=pause-ms=2000 "$ship" --once --url "$CH_URL" --db "$dir/p.db" --state "$dir/away.state" \
  --database away --host test-host --backoff-max 1s 2>"$dir/away.log" &
shipper=$!
for _ in $(seq 100); do
  n=$(curl -sf "$CH_URL/" --data-binary "SELECT count() FROM away.windows" 2>/dev/null || echo 0)
  [ "$n" -ge 1 ] && break; sleep 0.05
done
[ "$n" -ge 1 ] || { echo "FAIL: no window reached ClickHouse before the stop"; exit 1; }
ch_kill
for _ in $(seq 100); do grep -q "cannot reach ClickHouse" "$dir/away.log" && break; sleep 0.1; done
"$ship" --status --db "$dir/p.db" --state "$dir/away.state" >"$dir/away.status"
cat "$dir/away.status"
grep -q "^last error .* ago" "$dir/away.status" && grep -q "cannot reach ClickHouse" "$dir/away.status" ||
  { echo "FAIL: --status does not show the server away"; exit 1; }
grep -Eq "^windows pending +[1-9]" "$dir/away.status" || { echo "FAIL: nothing pending while the server is away"; exit 1; }
ch_restart
wait $shipper || { echo "FAIL: lcpi-ship exited $?"; cat "$dir/away.log"; exit 1; }
shipper=
grep -c "retrying" "$dir/away.log" | sed 's/^/tries while away: /'
check away "server killed and restarted mid-ship"
"$ship" --status --db "$dir/p.db" --state "$dir/away.state" | grep -E "^windows (shipped|pending)"

# --- a database of fleet schema 1 (images and symbols keyed by identity
# alone): refused with what to do, nothing shipped into it
ch_query "CREATE DATABASE old" >/dev/null
ch_query "CREATE TABLE old.symbols (identity String, offset UInt64, size UInt64, name String)
  ENGINE = ReplacingMergeTree() ORDER BY (identity, offset, name)" >/dev/null
# (refused, it is logged and retried like any server's error: stopped once logged)
"$ship" --once --url "$CH_URL" --db "$dir/p.db" --state "$dir/old.state" --database old \
  --host test-host --backoff-max 1s 2>"$dir/old.log" &
shipper=$!
for _ in $(seq 100); do grep -q "schema 1" "$dir/old.log" && break; sleep 0.1; done
kill $shipper; wait $shipper || true; shipper=
grep -q "old.symbols is of fleet schema 1" "$dir/old.log" ||
  { echo "FAIL (schema 1): not refused: $(tail -2 "$dir/old.log")"; exit 1; }
[ "$(ch_query "SELECT count() FROM old.windows")" = 0 ] || { echo "FAIL (schema 1): windows shipped"; exit 1; }
echo "ok (schema 1 refused): $(grep -m1 "schema 1" "$dir/old.log" | cut -c1-110)..."

echo "fleet-ship: $(python3 -c "print(f'{$(date +%s.%N)-$t_start:.1f}')") s"
