#!/usr/bin/env bash
# jit_node.sh LCPID LCPICTL LCPIPROF [map|jitdump] - Node.js, the real peer
# for JIT code: a hot JavaScript function (hotLoopForLcpi) runs for a few
# seconds while V8 names its code, with `node --perf-basic-prof` in
# /tmp/perf-PID.map (map, the default), with `node --perf-prof` in a
# jitdump, ./jit-PID.dump (jitdump), which node maps executable to say where
# it is. lcpid must file node's samples in its JIT code on a JIT image of
# the process and store the names, so that lcpiprof -p, after node exited
# and its file was deleted, shows the function by name holding most of
# those samples.
set -euo pipefail
lcpid=$1 lcpictl=$2 lcpiprof=$3 mode=${4:-map}
[ "$(id -u)" = 0 ] || { echo "needs root (system-wide perf events)"; exit 77; }
command -v node >/dev/null || { echo "node is not installed (nodejs)"; exit 77; }
dir=$(mktemp -d /tmp/lcpi-jit-XXXXXX)
trap 'kill $daemon 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT

"$lcpid" --foreground --max-overhead 0 --db "$dir/p.db" --socket "$dir/s" --events cpu-clock --frequency 2000 \
  --log-level warn 2>"$dir/lcpid.log" &
daemon=$!
for _ in $(seq 100); do "$lcpictl" --socket "$dir/s" status >/dev/null 2>&1 && break; sleep 0.1; done
"$lcpictl" --socket "$dir/s" epoch --tag jit >/dev/null

cat >"$dir/hot.js" <<'JS'
// One hot function, kept out of line so V8 compiles it as itself.
function hotLoopForLcpi(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 1103515245 + i) % 2147483647;
  return x;
}
const end = Date.now() + 4000;
let sink = 0;
while (Date.now() < end) sink ^= hotLoopForLcpi(1000000);
console.log(sink);
JS
# In $dir: node also writes isolate-*-v8.log files (and its jitdump) to its working directory.
case $mode in
  map) flag=--perf-basic-prof ;;
  jitdump) flag=--perf-prof ;;
  *) echo "mode: map or jitdump"; exit 2 ;;
esac
(cd "$dir" && exec node $flag --no-turbo-inlining hot.js >/dev/null) &
node_pid=$!
wait $node_pid
map=/tmp/perf-$node_pid.map
if [ "$mode" = map ]; then
  names=$map
else
  names=$dir/jit-$node_pid.dump
  [ ! -e "$map" ] || { echo "node wrote a perf map too: the jitdump would not be tested"; exit 1; }
fi
grep -aq hotLoopForLcpi "$names" || { echo "node named no code of the function in $names"; exit 1; }

"$lcpictl" --socket "$dir/s" stop >/dev/null
wait $daemon
daemon=
rm -f "$names"  # the tools must not need it: lcpid stored the names
"$lcpiprof" --db "$dir/p.db" --epoch jit -p --format csv >"$dir/procs.csv"

python3 - "$dir/procs.csv" "$node_pid" <<'PY'
import csv, sys
procs, pid = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(procs)))
jit_image = f"[jit node {pid}]"
node_rows = [r for r in rows if r['image'] == jit_image]
total = sum(float(r['cpu-clock']) for r in node_rows)
hot = sum(float(r['cpu-clock']) for r in node_rows if 'hotLoopForLcpi' in r['procedure'])
unknown = sum(float(r['cpu-clock']) for r in rows if r['image'] == '[unknown node]')
# Node's samples in its anonymous executable memory: named ones on its JIT
# image, the rest (code no map line covers) on [unknown node].
anon = total + unknown
print(f"node samples in JIT memory {anon:.0f}: on {jit_image} {total:.0f},"
      f" unknown {unknown:.0f}; hotLoopForLcpi {hot:.0f}"
      f" ({100 * hot / anon if anon else 0:.1f} %)")
for r in sorted(node_rows, key=lambda r: -float(r['cpu-clock']))[:5]:
    print(f"  {float(r['cpu-clock']):8.0f}  {r['procedure']}")
assert anon >= 500, f"too few of node's samples in JIT memory: {anon}"
assert hot > 0.5 * anon, "hotLoopForLcpi does not hold most of node's JIT samples"
PY
