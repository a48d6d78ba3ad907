#!/usr/bin/env python3
"""flame_check.py - the HTML report's flame graph and icicle in headless
chromium.

    flame_check.py LCPIPROF DB WORKDIR [SCREENSHOT]

DB is the tools fixture's stacks.db (tools_fixture.cpp, MakeStacks): leaf is
called 60 times through mid_a and 40 through mid_b, both from top from main;
a procedure of a 256-character name 20 times from main. The page lcpiprof
--format html writes is opened in Debian's chromium (no script, no network),
and the DOM it holds must have
  flame graph  (svg#flame-graph) a frame per procedure per path, each a
               <title> (name, image, stack samples, share), a <rect> whose
               width is its share of the widest, and a text label: main 120,
               top 100, mid_a 60, mid_b 40, leaf 60 and 40, the long name 20;
  icicle       (svg#icicle) the hottest procedure, leaf, at the top, mid_a
               and mid_b under it at 60 % and 40 % of its width;
  long names   whole in the <title>, cut in the middle in the label;
and the page is no wider than a 1280-pixel window (a probe copy with a
script measures it). A screenshot is written (WORKDIR/flame.png, or
SCREENSHOT) and must be a PNG.
lcpiprof --callers leaf and --callees main --format html are pages of one
table each: leaf's callers mid_a 60 % and mid_b 40 %, main's callees top
and the long name, whole in a cell that wraps (td.name), on a page no wider
than the window.
"""
import html as htmllib
import os
import re
import shutil
import subprocess
import sys

from page_fit import chromium as run_chromium, page_width

lcpiprof, db, work = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
shot = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else os.path.join(work, "flame.png")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
LONG = "lcpi::fixture::" + "v" * (256 - 15 - 27) + "::push_the_long_named_frame"

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def chromium(*args):
    rc, out, err = run_chromium(work, *args)
    if rc != 0:
        fail(f"chromium {' '.join(args)}: exit status {rc}: {err[-400:]}")
    return out


def frames(dom, svg_id):
    """[(name, count, x, y, width, label)] of the frames in svg#svg_id."""
    m = re.search(r'<svg[^>]*id="' + svg_id + r'".*?</svg>', dom, re.S)
    if not m:
        fail(f"the DOM has no svg#{svg_id}")
        return []
    out = []
    for g in re.finditer(r'<g class="frame">(.*?)</g>', m.group(0), re.S):
        t = re.search(r"<title>(.*?) in (\S+): (\d+) stack samples", g.group(1), re.S)
        r = re.search(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"', g.group(1))
        label = re.search(r"<text[^>]*>(.*?)</text>", g.group(1), re.S)
        if not (t and r):
            fail(f"svg#{svg_id}: a frame without a title or a rect: {g.group(1)[:200]}")
            continue
        out.append((htmllib.unescape(t.group(1)), int(t.group(3)), float(r.group(1)),
                    float(r.group(2)), float(r.group(3)),
                    htmllib.unescape(label.group(1)) if label else ""))
    return out


page = os.path.join(work, "stacks.html")
r = subprocess.run([lcpiprof, "--db", db, "--epoch", "stacks", "--format", "html", "-o", page],
                   capture_output=True, text=True, timeout=120)
if r.returncode != 0:
    print(f"FAIL: lcpiprof --format html: exit status {r.returncode}: {r.stderr}", file=sys.stderr)
    sys.exit(1)
text = open(page, encoding="utf-8").read()
if "<script" in text.lower():
    fail("the page has a script")
dom = chromium("--dump-dom", "file://" + page)

flame = frames(dom, "flame-graph")
counts = sorted((name, n) for name, n, *_ in flame)
want = sorted([("main", 120), ("top", 100), ("mid_a", 60), ("mid_b", 40), ("leaf", 60),
               ("leaf", 40), (LONG, 20)])
if counts != want:
    fail(f"flame graph: frames {counts}, want {want}")
widths = {(name, n): w for name, n, _, _, w, _ in flame}
main_w = widths.get(("main", 120), 0)
for key, w in widths.items():
    if main_w and abs(w / main_w - key[1] / 120) > 0.005:
        fail(f"flame graph: {key[0]} is {w / main_w:.4f} of main's width, want {key[1] / 120:.4f}")
# Roots at the bottom: a callee is drawn above its caller.
ys = {(name, n): y for name, n, _, y, _, _ in flame}
if flame and not ys[("leaf", 60)] < ys[("mid_a", 60)] < ys[("top", 100)] < ys[("main", 120)]:
    fail(f"flame graph: leaf, mid_a, top, main are not stacked upward: {ys}")
for name, n, _, _, w, label in flame:
    if name in ("main", "top", "mid_a", "mid_b", "leaf") and label != name:
        fail(f"flame graph: {name}'s label is {label!r}")
    if name == LONG:
        if not (label.startswith("lcpi::") and "..." in label and len(label) < len(LONG)):
            fail(f"flame graph: the long name's label is not cut in the middle: {label!r}")

icicle = frames(dom, "icicle")
ic = {(name, n): (y, w) for name, n, _, y, w, _ in icicle}
if ("leaf", 100) not in ic or ("mid_a", 60) not in ic or ("mid_b", 40) not in ic:
    fail(f"icicle: want leaf 100 over mid_a 60 and mid_b 40: {sorted(ic)}")
else:
    leaf_y, leaf_w = ic[("leaf", 100)]
    for key in (("mid_a", 60), ("mid_b", 40)):
        y, w = ic[key]
        if not y > leaf_y or abs(w / leaf_w - key[1] / 100) > 0.005:
            fail(f"icicle: {key[0]} at y {y} width {w / leaf_w:.4f} of leaf's (y {leaf_y}), "
                 f"want below it at {key[1] / 100}")

# The page fits a 1280-pixel window.
fit = page_width(text, work)
if not fit:
    fail("the probe did not run")
elif fit[0] > fit[1]:
    fail(f"the page is {fit[0]} pixels wide in a {fit[1]}-pixel window")

chromium("--screenshot=" + shot, "--hide-scrollbars", "file://" + page + "#stacks")
if not os.path.exists(shot) or open(shot, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
    fail(f"no PNG screenshot at {shot}")



def neighbours(flag, symbol, want):
    """lcpiprof FLAG SYMBOL --format html: a table whose rows are `want`
    ({name: percent}), names in cells that wrap, the page within the window."""
    out = os.path.join(work, flag.strip("-") + ".html")
    r = subprocess.run([lcpiprof, "--db", db, "--epoch", "stacks", flag, symbol, "--format",
                        "html", "-o", out], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"lcpiprof {flag} {symbol} --format html: exit status {r.returncode}: {r.stderr}")
        return
    page_text = open(out, encoding="utf-8").read()
    if "<script" in page_text.lower():
        fail(f"{flag}: the page has a script")
    got = {}
    for row in re.finditer(r"<tr>(.*?)</tr>", chromium("--dump-dom", "file://" + out), re.S):
        name = re.search(r'<t[hd][^>]*class="name"[^>]*>(.*?)</t[hd]>', row.group(1), re.S)
        numbers = re.findall(r'<td class="n">([\d.]+)</td>', row.group(1))  # stacks, %
        if name and len(numbers) == 2:
            got[htmllib.unescape(re.sub(r"<[^>]*>", "", name.group(1)))] = float(numbers[1])
    if {k: round(v) for k, v in got.items()} != want:
        fail(f"{flag} {symbol} in HTML: rows {got}, want {want}")
    fit = page_width(page_text, work)
    if not fit or fit[0] > fit[1]:
        fail(f"{flag} {symbol}: the page is not within the window: {fit}")


neighbours("--callers", "leaf", {"mid_a": 60, "mid_b": 40})
neighbours("--callees", "main", {"top": 83, LONG: 17})

if failures:
    sys.exit(1)
print(f"flame_check.py: ok: {len(flame)} flame frames, {len(icicle)} icicle frames, {shot}")
