#!/usr/bin/env bash
# profile.sh - the main job: builds lcpid and the tools it runs (installing
# what they need), profiles the whole machine while COMMAND runs (or for N
# seconds), then prints the per-image report of that run.
#
#   scripts/profile.sh [--seconds N] [--db PATH] [--events LIST] [-- COMMAND [ARGS...]]
#
# Each run is a new epoch, tagged run-YYYYmmdd-HHMMSS, in the database
# (default build/profiles.db); lcpiprof --db PATH --epoch TAG shows it again.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

seconds=""
db="$top/build/profiles.db"
events="cycles"
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --db) db="$2"; shift 2 ;;
    --events) events="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ] && [ -z "$seconds" ]; then seconds=10; fi

if [ "$(id -u)" -ne 0 ]; then
  exec sudo "$0" ${seconds:+--seconds "$seconds"} --db "$db" --events "$events" -- "$@"
fi

# Only what this job runs (lcpid, lcpictl, lcpiprof), not the test suite:
# scripts/build.sh builds everything. Progress is one line per step
# (apt-get's phases, cmake's percentage); the full output if a step fails.
scripts/setup.sh --minimal
echo "lcpi: configuring build/" >&2
cmake -S . -B build -DLCPI_WERROR=ON >/dev/null
build_log=$(mktemp /tmp/lcpi-build-XXXXXX.log)
echo "lcpi: building lcpid lcpictl lcpiprof" >&2
# "[ 42%] Building CXX object ..." -> "lcpi: build  42%": rewritten in place
# at each new percentage on a terminal, a line per 10 % otherwise. A shell
# loop, not awk: Debian's mawk reads a pipe in large blocks, so the
# percentages would come late and all at once.
progress() {
  local line pct step last=-1 tty=0
  if [ -t 2 ]; then tty=1; fi
  while IFS= read -r line; do
    [[ $line =~ ^\[\ *([0-9]+)%\] ]] || continue
    pct=${BASH_REMATCH[1]}
    step=$pct
    if [ $tty -eq 0 ]; then step=$((pct / 10)); fi
    [ "$step" -eq "$last" ] && continue
    last=$step
    if [ $tty -eq 1 ]; then printf '\rlcpi: build %3d%%' "$pct" >&2; else printf 'lcpi: build %3d%%\n' "$pct" >&2; fi
  done
  if [ $tty -eq 1 ]; then echo >&2; fi
}
if ! cmake --build build -j"$(nproc)" --target lcpi_profile_programs 2>&1 | tee "$build_log" | progress; then
  cat "$build_log" >&2
  exit 1
fi
rm -f "$build_log"
bin="$top/build"
sock=$(mktemp -u /tmp/lcpid-XXXXXX.sock)
log=$(mktemp /tmp/lcpid-XXXXXX.log)
"$bin/daemon/lcpid" --foreground --db "$db" --socket "$sock" --events "$events" \
  --flush-interval 60 2>"$log" &
daemon=$!
trap 'kill $daemon 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  "$bin/tools/lcpictl" --socket "$sock" status >/dev/null 2>&1 && break
  if ! kill -0 $daemon 2>/dev/null; then cat "$log" >&2; exit 1; fi
  sleep 0.1
done
tag="run-$(date +%Y%m%d-%H%M%S)"
"$bin/tools/lcpictl" --socket "$sock" epoch --tag "$tag" >/dev/null
status=0
if [ $# -gt 0 ]; then
  echo "lcpi: profiling the machine while '$*' runs" >&2
  "$@" || status=$?
else
  echo "lcpi: profiling the machine for $seconds s" >&2
  sleep "$seconds"
fi
"$bin/tools/lcpictl" --socket "$sock" status | grep -E '^(source|event|samples |lost|unknown_share)' >&2 || true
"$bin/tools/lcpictl" --socket "$sock" stop >/dev/null
wait $daemon || { cat "$log" >&2; exit 1; }
trap - EXIT
grep -E 'warn|error' "$log" >&2 || true
rm -f "$log"
"$bin/tools/lcpiprof" --db "$db" --epoch "$tag"
exit $status
