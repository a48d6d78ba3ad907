#!/usr/bin/env bash
# vdso.sh LCPID LCPICTL LCPIPROF CLOCK_LOOP - the vDSO has no file, so lcpid
# stores its names: clock_loop's samples in [vdso] must be named by function
# (the vDSO's clock_gettime), not shown as [vdso]+0x... ranges.
set -euo pipefail
lcpid=$1 lcpictl=$2 lcpiprof=$3 clock_loop=$4
[ "$(id -u)" = 0 ] || { echo "needs root (system-wide perf events)"; exit 77; }
dir=$(mktemp -d /tmp/lcpi-vdso-XXXXXX)
trap 'kill $daemon 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT

"$lcpid" --foreground --max-overhead 0 --db "$dir/p.db" --socket "$dir/s" --events cpu-clock --frequency 2000 \
  --log-level warn 2>"$dir/lcpid.log" &
daemon=$!
for _ in $(seq 100); do "$lcpictl" --socket "$dir/s" status >/dev/null 2>&1 && break; sleep 0.1; done
"$lcpictl" --socket "$dir/s" epoch --tag vdso >/dev/null
"$clock_loop" 3
"$lcpictl" --socket "$dir/s" stop >/dev/null
wait $daemon
daemon=
"$lcpiprof" --db "$dir/p.db" --epoch vdso -p --format csv >"$dir/procs.csv"

python3 - "$dir/procs.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['image'] == '[vdso]']
total = sum(float(r['cpu-clock']) for r in rows)
named = sum(float(r['cpu-clock']) for r in rows if '+0x' not in r['procedure'])
print(f"[vdso] samples {total:.0f}, named {named:.0f}"
      f" ({100 * named / total if total else 0:.1f} %)")
for r in sorted(rows, key=lambda r: -float(r['cpu-clock']))[:5]:
    print(f"  {float(r['cpu-clock']):8.0f}  {r['procedure']}")
assert total >= 500, f"too few samples in [vdso]: {total}"
assert named > 0.9 * total, "the vDSO's samples are not named by function"
assert any('clock_gettime' in r['procedure'] for r in rows), "no clock_gettime in [vdso]"
PY
