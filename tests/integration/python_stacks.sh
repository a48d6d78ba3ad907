#!/usr/bin/env bash
# python_stacks.sh LCPID LCPICTL LCPIPROF WORKLOAD [SECONDS] - lcpid's call
# stacks against `perf record --call-graph dwarf` on Debian's python3
# (/usr/bin/python3.11: no frame pointers, no .symtab; its procedures are
# named from .dynsym by both tools). Both sample the same run of WORKLOAD
# (tests/integration/workloads/python_callers.py), which keeps
# _PyEval_EvalFrameDefault hot through three C callers; the shares of its
# named callers must agree within BOUND points (python_stacks_compare.py
# says why that bound).
#   EXPECT  a comma-separated list of callers that must be among the named
#           ones on both sides (default PyEval_EvalCode,_PyFunction_Vectorcall;
#           a wrong name here is how the test was seen to fail).
set -euo pipefail
lcpid=$1 lcpictl=$2 lcpiprof=$3 workload=$4 seconds=${5:-15}
hot=_PyEval_EvalFrameDefault
python=$(readlink -f /usr/bin/python3 2>/dev/null || true)
[ "$(id -u)" = 0 ] || { echo "needs root (system-wide perf events)"; exit 77; }
command -v perf >/dev/null || { echo "perf is not installed (linux-perf)"; exit 77; }
[ -x "$python" ] || { echo "Debian's python3 is not installed"; exit 77; }
dir=$(mktemp -d /tmp/lcpi-python-stacks-XXXXXX)
trap 'kill $daemon 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT

# The flat profile at a low rate: only the stacks are compared. At 1,000
# stacks/s/CPU a loaded host (every leaf offset a distinct stack) fills the
# default 8,192 distinct stacks of a window within the run: --max-stacks.
# --max-overhead 0: every stack unwound, at whatever CPU (with a budget
# the walks at this rate would be over their CPU allowance).
"$lcpid" --foreground --max-overhead 0 --db "$dir/p.db" --socket "$dir/s" --events cpu-clock --frequency 100 \
  --stack-frequency 1000 --max-stacks 65536 --log-level warn 2>"$dir/lcpid.log" &
daemon=$!
for _ in $(seq 100); do "$lcpictl" --socket "$dir/s" status >/dev/null 2>&1 && break; sleep 0.1; done
kill -0 $daemon 2>/dev/null || { cat "$dir/lcpid.log"; exit 1; }
"$lcpictl" --socket "$dir/s" flush >/dev/null  # the kernel's symbols now, not in the window
"$lcpictl" --socket "$dir/s" epoch --tag python >/dev/null
perf record -q -F 1000 --call-graph dwarf -o "$dir/perf.data" -- \
  "$python" "$workload" "$seconds" 2>"$dir/perf.log"
"$lcpictl" --socket "$dir/s" epoch --tag after >/dev/null
"$lcpictl" --socket "$dir/s" status >"$dir/status"
"$lcpictl" --socket "$dir/s" stop >/dev/null
wait $daemon
daemon=

"$lcpiprof" --db "$dir/p.db" --epoch python --callers "$hot" --top 12
"$lcpiprof" --db "$dir/p.db" --epoch python --callers "$hot" --format csv >"$dir/lcpi.csv"
perf script -i "$dir/perf.data" -F ip,sym,dso 2>/dev/null >"$dir/perf.txt"
grep -E '^(stacks|unwind_)' "$dir/status" || true
python3 "$(dirname "$0")/python_stacks_compare.py" "$dir/perf.txt" "$dir/lcpi.csv" "$hot" \
  "$python" "${EXPECT:-PyEval_EvalCode,_PyFunction_Vectorcall}"
