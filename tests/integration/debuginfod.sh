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
#                                       report printed, well within the timeout;
#                                       the warning names the tools' default
#                                       DEBUGINFOD_MAXTIME (30 s), as silent's
#   debuginfod.sh silent DIR PROF LIST  a server that accepts and never answers:
#                                       DEBUGINFOD_TIMEOUT bounds each attempt
#   debuginfod.sh huge DIR PROF LIST    a server whose body never ends (no
#                                       Content-Length): DEBUGINFOD_MAXSIZE
#                                       stops it, nothing stays in the cache
#   debuginfod.sh slow DIR PROF LIST    a server that drips 256 KiB a second
#                                       (never a stall): DEBUGINFOD_MAXTIME
#                                       (here 5 s) ends it
#   debuginfod.sh badid DIR PROF LIST   an image with an 80-byte build-id first:
#                                       not sent, and the real server still
#                                       names the stripped program's procedures
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
  # A stripped program whose build-id is 80 bytes (any user can link one).
  longid=$(printf 'ab%.0s' $(seq 1 80))
  echo 'int main(void) { return 0; }' >"$dir/longid.c"
  cc -O1 -o "$dir/longid" "$dir/longid.c" "-Wl,--build-id=0x$longid"
  strip --strip-all "$dir/longid"
  echo "$longid" >"$dir/long-build-id"
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
    # The tools' own bound on a file, which nobody set here (slow sets its
    # own, to keep its wait short): the warning names it.
    expect prof.err "no answer from .*DEBUGINFOD_MAXTIME 30 s per file" \
      "the tools' default DEBUGINFOD_MAXTIME"
    [ "$(grep -c debuginfod "$work/prof.err")" = 1 ] || fail "more than one debuginfod warning"
    expect prof.out '^# ' "the report's header"
    expect prof.out "$ranges" "ranges when the server is unreachable"
    ;;
  huge | slow)
    port=$(free_port)
    # huge: HTTP/1.0, no Content-Length, zeros as fast as the client takes
    # them. slow: a Content-Length of 100 MB and 32 KiB every 1/8 s (256
    # KiB/s), above the 100 KiB/s that libdebuginfod asks over
    # DEBUGINFOD_TIMEOUT, so that timeout never fires.
    # Either stops by itself after 120 s.
    timeout 120 python3 -c 'import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        if sys.argv[2] == "slow":
            self.send_header("Content-Length", "100000000")
        self.end_headers()
        try:
            while True:
                if sys.argv[2] == "slow":
                    self.wfile.write(b"\0" * 32768); self.wfile.flush(); time.sleep(0.125)
                else:
                    self.wfile.write(b"\0" * 65536)
        except OSError:
            pass
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' \
      "$port" "$mode" >"$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 50); do
      python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
        "$port" 2>/dev/null && break
      sleep 0.1
    done
    export DEBUGINFOD_URLS="http://127.0.0.1:$port"
    # huge: the user's bound (the default, 1 GiB, is too much to write here).
    [ "$mode" = huge ] && export DEBUGINFOD_MAXSIZE=4000000
    # slow: the user's bound too (the default, 30 s, took half a minute of
    # each tree's tests; unreachable and silent check the tools set it)
    [ "$mode" = slow ] && export DEBUGINFOD_MAXTIME=5
    start=$(date +%s)
    run prof timeout 50 "$prof" "${db[@]}" -p --width 200
    took=$(($(date +%s) - start))
    [ "$rc" != 124 ] || fail "lcpiprof still downloading after 50 s"
    [ "$rc" = 0 ] || fail "lcpiprof -p with a $mode server exited $rc"
    if [ "$mode" = huge ]; then
      expect prof.err "lcpiprof: warning: debuginfod: the debug file of \S*/prog .* is over DEBUGINFOD_MAXSIZE=4000000 bytes" \
        "a warning for the file over the bound"
    else
      expect prof.err "lcpiprof: warning: debuginfod: no answer from http://127\.0\.0\.1:$port.*DEBUGINFOD_MAXTIME 5 s" \
        "a warning naming the time bound"
      [ "$took" -le 15 ] || fail "lcpiprof took $took s with DEBUGINFOD_MAXTIME 5 s"
    fi
    expect prof.out "$ranges" "ranges for the program"
    # Below the build-id's directory: nothing but libdebuginfod's empty
    # "not found" mark (cache_clean_interval_s beside it is its setting).
    left=$(find "$work/cache" -mindepth 2 -type f -size +0c)
    [ -z "$left" ] || fail "a partial download stayed in the cache: $(ls -lR "$work/cache")"
    echo "lcpiprof with a $mode server: $took s"
    ;;
  badid)
    start_server
    export DEBUGINFOD_URLS="http://127.0.0.1:$port"
    # The fixture's database with the long-id program as image 0, ahead of
    # the others, with the most samples.
    cp "$dir/profiles.db" "$work/bad.db"
    python3 - "$work/bad.db" "$(cat "$dir/long-build-id")" "$dir/longid" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
epoch = db.execute("SELECT id FROM epochs WHERE tag = 'base'").fetchone()[0]
event = db.execute("SELECT id FROM events WHERE name = 'cycles'").fetchone()[0]
db.execute("INSERT INTO images (id, identity, path, kind, first_seen) VALUES (0, ?, ?, 'user', 0)",
           ("build-id:" + sys.argv[2], sys.argv[3]))
db.execute("INSERT INTO counts VALUES (?, 0, ?, 4096, 100000)", (epoch, event))
db.commit()
PY
    run prof "$prof" --db "$work/bad.db" --epoch base -p --width 200
    [ "$rc" = 0 ] || fail "lcpiprof -p with an 80-byte build-id exited $rc"
    expect prof.out '/longid$' "the long-id image is in the report"
    expect prof.out ' hot_loop +/\S*/prog$' "the server still names hot_loop"
    expect_not prof.err 'no more queries' "the server is not given up"
    ;;
  *)
    fail "unknown mode $mode"
    ;;
esac
echo "ok: $mode"
