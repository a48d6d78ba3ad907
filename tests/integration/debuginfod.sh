#!/usr/bin/env bash
# debuginfod.sh - the tools against a real debuginfod server (Debian's
# `debuginfod`) on a loopback port. tests/integration/debuginfod.cmake runs:
#
#   debuginfod.sh setup DIR FIXTURE     the report fixture's database in DIR,
#                                       its program stripped (build-id kept),
#                                       the debug file alone in DIR/server/
#   debuginfod.sh fetch DIR PROF LIST   server up: lcpiprof -p names the
#                                       procedures, lcpilist --source/--lines
#                                       shows source lines, the file is cached
#   debuginfod.sh off DIR PROF LIST     server up, but no DEBUGINFOD_URLS, or
#                                       --no-debuginfod: offset ranges, and the
#                                       client cache stays empty
#   debuginfod.sh unreachable DIR PROF LIST
#                                       a closed port: one clear warning, the
#                                       report printed, well within the timeout
#   debuginfod.sh silent DIR PROF LIST  a server that accepts and never answers:
#                                       DEBUGINFOD_TIMEOUT bounds each attempt
#
# A server started here is stopped on every exit (trap), and runs under
# `timeout` so that even a killed script cannot leave it behind.
set -euo pipefail

mode=$1
dir=$2
server=""
work=""

fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log "$work"/*.err; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }
  done
  exit 1
}

cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  if [ -n "$work" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts debuginfod over DIR/server on a free port and waits for its first
# scan: until the build-id's debuginfo is served (HTTP 200).
start_server() {
  command -v debuginfod >/dev/null || fail "debuginfod not installed (run scripts/setup.sh)"
  port=$(free_port)
  timeout 300 debuginfod -p "$port" -d "$work/server.sqlite" -t 0 -g 0 -F "$dir/server" \
    >"$work/server.log" 2>&1 &
  server=$!
  local id code
  id=$(cat "$dir/build-id")
  for _ in $(seq 1 200); do
    kill -0 "$server" 2>/dev/null || fail "debuginfod exited"
    code=$(curl -s -o /dev/null -w '%{http_code}' \
      "http://127.0.0.1:$port/buildid/$id/debuginfo" || true)
    [ "$code" = 200 ] && return 0
    sleep 0.1
  done
  fail "debuginfod on port $port did not serve $id within 20 s (last HTTP $code)"
}

# run NAME TOOL ARGS...: the tool's stdout in $work/NAME.out, stderr in
# $work/NAME.err, exit status in $rc. The environment is the caller's.
run() {
  local name=$1
  shift
  rc=0
  "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
}

expect() {  # expect FILE REGEX WHAT
  grep -Eq -- "$2" "$work/$1" || fail "$3: /$2/ not in $1: $(head -c 2000 "$work/$1")"
}
expect_not() {
  if grep -Eq -- "$2" "$work/$1"; then fail "$3: /$2/ in $1"; fi
}

if [ "$mode" = setup ]; then
  fixture=$3
  rm -rf "$dir"
  mkdir -p "$dir/server"
  "$fixture" "$dir" >/dev/null
  objcopy --only-keep-debug "$dir/prog" "$dir/server/prog.debug"
  strip --strip-all "$dir/prog"
  id=$(readelf -n "$dir/prog" | awk '/Build ID:/ { print $3 }')
  [ -n "$id" ] || fail "the stripped program has no build-id"
  echo "$id" >"$dir/build-id"
  # hot_loop's addresses, for --range: the listing of a stripped file
  lo=$(nm "$dir/server/prog.debug" | awk '$3 == "hot_loop" { print $1 }')
  hi=$(nm "$dir/server/prog.debug" | awk '$3 == "warm" { print $1 }')
  [ -n "$lo" ] && [ -n "$hi" ] || fail "no hot_loop or warm in the debug file"
  echo "prog:0x$lo-0x$hi" >"$dir/hot-range"
  if readelf -S "$dir/prog" | grep -Eq '\.symtab|\.debug_info|\.gnu_debuglink'; then
    fail "$dir/prog still has symbols, DWARF or a debuglink"
  fi
  exit 0
fi

prof=$3
list=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/lcpi-debuginfod-XXXXXX")
db=(--db "$dir/profiles.db" --epoch base)
# A row for samples of prog no symbol covers (prog+0x0-0x10 is one in any case).
ranges=' prog\+0x[1-9a-f][0-9a-f]*-0x[0-9a-f]+ +/\S*/prog$'
mkdir "$work/cache"
# Only what each case sets: nothing from the caller's environment.
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_CACHE_PATH DEBUGINFOD_RETRY_LIMIT \
  DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
export DEBUGINFOD_CACHE_PATH="$work/cache"

case "$mode" in
  fetch)
    start_server
    export DEBUGINFOD_URLS="http://127.0.0.1:$port"
    run prof "$prof" "${db[@]}" -p --width 200
    [ "$rc" = 0 ] || fail "lcpiprof -p exited $rc"
    expect prof.out ' hot_loop +/\S*/prog$' "lcpiprof -p names hot_loop"
    expect prof.out ' warm +/\S*/prog$' "lcpiprof -p names warm"
    expect prof.out ' cold +/\S*/prog$' "lcpiprof -p names cold"
    expect_not prof.err 'debuginfod' "no debuginfod warning"
    id=$(cat "$dir/build-id")
    [ -s "$work/cache/$id/debuginfo" ] || fail "not in the client cache: $work/cache/$id/debuginfo"
    run list "$list" "${db[@]}" hot_loop prog --source
    [ "$rc" = 0 ] || fail "lcpilist --source exited $rc"
    expect list.out 'prog\.c:6: +s \+= \(i \* i\)' "lcpilist --source shows the loop body"
    run lines "$list" "${db[@]}" hot_loop prog --lines --format json
    [ "$rc" = 0 ] || fail "lcpilist --lines exited $rc"
    expect lines.out '"line": 6' "lcpilist --lines has line 6"
    run range "$list" "${db[@]}" --source --range "$(cat "$dir/hot-range")"
    [ "$rc" = 0 ] || fail "lcpilist --source --range exited $rc"
    expect range.out 'prog\.c:' "source lines for the range (the same command as in 'off')"
    ;;
  off)
    start_server
    run prof "$prof" "${db[@]}" -p --width 200
    [ "$rc" = 0 ] || fail "lcpiprof -p without DEBUGINFOD_URLS exited $rc"
    expect_not prof.out 'hot_loop' "no names without DEBUGINFOD_URLS"
    expect prof.out "$ranges" "ranges without DEBUGINFOD_URLS"
    export DEBUGINFOD_URLS="http://127.0.0.1:$port"
    run noprof "$prof" "${db[@]}" -p --width 200 --no-debuginfod
    [ "$rc" = 0 ] || fail "lcpiprof -p --no-debuginfod exited $rc"
    expect_not noprof.out 'hot_loop' "no names with --no-debuginfod"
    expect noprof.out "$ranges" "ranges with --no-debuginfod"
    run nolist "$list" "${db[@]}" --no-debuginfod --source --range "$(cat "$dir/hot-range")"
    [ "$rc" = 0 ] || fail "lcpilist --no-debuginfod --source --range exited $rc"
    expect_not nolist.out 'prog\.c:' "no source lines with --no-debuginfod"
    [ -z "$(ls -A "$work/cache")" ] || fail "the client cache was used: $(ls -A "$work/cache")"
    ;;
  unreachable | silent)
    port=$(free_port)
    if [ "$mode" = silent ]; then
      # Accepts connections (a backlog, never accept()ed) and never answers.
      python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); time.sleep(300)' \
        "$port" &
      server=$!
      sleep 0.5
      # Three attempts (libdebuginfod retries twice by default) of 2 s each:
      # about 6 s. lcpiprof is killed after 40 s (ctest stops the test at
      # 60): only a timeout that is not honoured (libdebuginfod's own
      # default, 90 s a try, 270 s in all) reaches that, however loaded or
      # sanitized the run.
      export DEBUGINFOD_TIMEOUT=2
    fi
    # A closed port fails at once; the tools' own 10 s timeout applies there.
    export DEBUGINFOD_URLS="http://127.0.0.1:$port"
    run prof timeout 40 "$prof" "${db[@]}" -p --width 200
    [ "$rc" != 124 ] || fail "lcpiprof still waiting for an unreachable server after 40 s"
    [ "$rc" = 0 ] || fail "lcpiprof -p with an unreachable server exited $rc"
    expect prof.err "lcpiprof: warning: debuginfod: no answer from http://127\.0\.0\.1:$port" \
      "a clear warning"
    [ "$(grep -c debuginfod "$work/prof.err")" = 1 ] || fail "more than one debuginfod warning"
    expect prof.out '^# ' "the report's header"
    expect prof.out "$ranges" "ranges when the server is unreachable"
    ;;
  *)
    fail "unknown mode $mode"
    ;;
esac
echo "ok: $mode"
