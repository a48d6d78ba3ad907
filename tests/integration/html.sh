#!/usr/bin/env bash
# html.sh - lcpiprof's HTML report in a real browser (label "interop"):
# Debian's chromium, headless, opens the page written from the tools
# fixture's database with no network, and
#   check   the DOM holds the fixture's procedures (hot_loop, warm) and the
#           sections (images, procedures, listings), the page has no script
#           and names no URL, a screenshot is written and not empty, and the
#           browser logs no console message (an uncaught error, a request the
#           page's Content-Security-Policy refused);
#   control the console check itself: a page with an uncaught error and an
#           external image must be refused by the same check.
#
#   html.sh check   DIR LCPIPROF DB   (writes DIR/lcpiprof.html, DIR/lcpiprof.png)
#   html.sh control DIR
set -euo pipefail

mode=$1 dir=$2
mkdir -p "$dir"

fail() { echo "html.sh: FAIL: $*" >&2; exit 1; }

# chromium ARGS... : headless, no network of its own, a fresh profile; the
# console goes to $dir/console.log.
chromium_run() {
  local profile
  profile=$(mktemp -d "$dir/chromium-XXXXXX")
  local rc=0
  timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@" 2>"$dir/console.log" || rc=$?
  rm -rf "$profile"
  return $rc
}

# The page logged nothing to its console: no uncaught error, no refused
# request (the page has no script, so any console line is a fault).
console_clean() {
  if grep -E ':CONSOLE[:(]|Uncaught|Refused to' "$dir/console.log" >"$dir/console.bad"; then
    cat "$dir/console.bad" >&2
    return 1
  fi
}

case $mode in
  check)
    tool=$3 db=$4
    page=$dir/lcpiprof.html png=$dir/lcpiprof.png
    rm -f "$page" "$png"
    "$tool" --db "$db" --epoch all --format html -o "$page" 2>"$dir/lcpiprof.stderr" ||
      fail "lcpiprof --format html: exit status $? ($(cat "$dir/lcpiprof.stderr"))"
    [ -s "$page" ] || fail "no page written to $page"
    grep -qi '<script' "$page" && fail "the page has a script"
    grep -Eiq '(https?|ftp)://|src=|url\(' "$page" && fail "the page names a URL or a resource"
    chromium_run --dump-dom "file://$page" >"$dir/dom.html" || fail "chromium --dump-dom failed"
    console_clean || fail "console messages while loading the page"
    for want in '<html lang="en"' '<caption' 'scope="col"' 'hot_loop' 'warm' \
        'id="images"' 'id="procedures"' 'id="listings"' 'prog.c:6'; do
      grep -qF "$want" "$dir/dom.html" || fail "the DOM has no $want"
    done
    chromium_run --screenshot="$png" --window-size=1280,2000 --hide-scrollbars "file://$page" \
      >/dev/null || fail "chromium --screenshot failed"
    console_clean || fail "console messages while taking the screenshot"
    [ -s "$png" ] || fail "no screenshot at $png"
    [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
      fail "$png is not a PNG"
    echo "html.sh: ok: $page, $png"
    ;;
  control)
    page=$dir/control.html
    printf '%s\n' '<!doctype html><html lang="en"><head><title>control</title></head>' \
      '<body><p>x</p><script>no_such_function();</script></body></html>' >"$page"
    chromium_run --dump-dom "file://$page" >/dev/null || fail "chromium --dump-dom failed"
    console_clean && fail "an uncaught error in the page went unnoticed"
    echo "html.sh: ok: the console check sees an uncaught error"
    ;;
  *)
    fail "unknown mode $mode"
    ;;
esac
