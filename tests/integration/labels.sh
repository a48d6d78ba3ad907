#!/usr/bin/env bash
# labels.sh LCPID LCPICTL LCPIPROF TINY - one program run twice at once, once
# in a unit's cgroup and once beside it: `lcpiprof -P --label unit=UNIT` must
# show exactly the pid in the unit, and `--by unit` that unit with exactly
# its samples. Where systemd runs, the unit is a scope made by systemd-run
# --scope; elsewhere a cgroup made here under the cgroup v2 hierarchy
# (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host), named as a
# service's would be, and removed at the end.
set -euo pipefail
lcpid=$1 lcpictl=$2 lcpiprof=$3 tiny=$4
[ "$(id -u)" = 0 ] || { echo "needs root (system-wide perf events, cgroups)"; exit 77; }
dir=$(mktemp -d /tmp/lcpi-labels-XXXXXX)
cg=
cleanup() {
  kill $daemon 2>/dev/null || true
  # a cgroup made here goes once its process has ended
  [ -z "$cg" ] || for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
  [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
daemon=
trap cleanup EXIT

state=$(systemctl is-system-running 2>/dev/null || true)
if [ "$state" = running ] || [ "$state" = degraded ]; then
  unit=lcpi-label-test-$$.scope
  run_in_unit() { exec systemd-run --quiet --unit "${unit%.scope}" --scope "$@"; }
else
  if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
    root=/sys/fs/cgroup
  elif [ -d /sys/fs/cgroup/unified ]; then
    root=/sys/fs/cgroup/unified
  else
    echo "no cgroup v2 hierarchy and no systemd: cannot make a unit's cgroup"; exit 77
  fi
  unit=lcpi-label-test-$$.service
  cg=$root/system.slice/$unit
  mkdir -p "$cg"
  # Joins the cgroup, then execs: lcpid reads the cgroup at the exec.
  run_in_unit() { exec sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }
fi
echo "unit: $unit (systemd: ${state:-none})"

"$lcpid" --foreground --max-overhead 0 --db "$dir/p.db" --socket "$dir/s" --events cpu-clock --frequency 2000 \
  --log-level warn 2>"$dir/lcpid.log" &
daemon=$!
for _ in $(seq 100); do "$lcpictl" --socket "$dir/s" status >/dev/null 2>&1 && break; sleep 0.1; done
"$lcpictl" --socket "$dir/s" epoch --tag labels >/dev/null

(run_in_unit "$tiny" 1500) &
inside=$!
"$tiny" 1500 &
outside=$!
wait $inside $outside
"$lcpictl" --socket "$dir/s" status >"$dir/status"
"$lcpictl" --socket "$dir/s" stop >/dev/null
wait $daemon
daemon=
grep '^cgroups' "$dir/status" || echo "lcpid's status has no cgroups lines"

"$lcpiprof" --db "$dir/p.db" --epoch labels -P --by unit --format csv >"$dir/all.csv"
"$lcpiprof" --db "$dir/p.db" --epoch labels -P --label "unit=$unit" --format csv >"$dir/unit.csv"
"$lcpiprof" --db "$dir/p.db" --epoch labels --by unit --format csv >"$dir/units.csv"

python3 - "$dir" "$unit" "$inside" "$outside" <<'PY'
import csv, sys
d, unit, inside, outside = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
rows = lambda name: list(csv.DictReader(open(f"{d}/{name}")))
everything, kept, units = rows("all.csv"), rows("unit.csv"), rows("units.csv")
tiny = {r["pid"]: r for r in everything if r["command"] == "tiny"}
print("tiny processes:", {p: (r["unit"], r["cpu-clock"]) for p, r in tiny.items()})
print("--label kept:", [(r["pid"], r["command"], r["cpu-clock"]) for r in kept])
assert inside in tiny and outside in tiny, "both workloads must have samples"
assert tiny[inside]["unit"] == unit, f"the workload in {unit} is labelled {tiny[inside]['unit']!r}"
assert tiny[outside]["unit"] != unit
# exactly the processes of the unit: the workload's pid, and nothing else
# (its rows before the exec, as sh, may be in the unit too: sh joined it
# before lcpid applied sh's own exec and read its cgroup)
assert {r["pid"] for r in kept} == {inside}, f"--label unit={unit} kept {kept}"
assert any(r["command"] == "tiny" for r in kept)
in_unit = sum(float(r["cpu-clock"]) for r in everything if r["unit"] == unit)
by_unit = {r["unit"]: float(r["cpu-clock"]) for r in units}
print(f"--by unit: {unit} {by_unit.get(unit)}, its processes {in_unit}")
assert by_unit.get(unit) == in_unit and in_unit >= float(tiny[inside]["cpu-clock"]) > 0
PY
