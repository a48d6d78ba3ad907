#!/usr/bin/env python3
"""long_names.py - a real host's long names in every format.

    long_names.py LCPIPROF DB WORKDIR

DB is the tools fixture's long-names.db (tools_fixture.cpp, MakeLongNames):
the kernel's hottest procedure is a 583-byte Rust v0 symbol that demangles
to 1103 bytes, beside a legacy Rust name, and the first image stored is a
cold memfd. lcpiprof -p must show:
  text   at --width 100: no line past 100 columns; the long name cut in the
         middle, its head and its end (the function) both in view;
  CSV, JSON, pprof: the whole demangled name, the same in each;
  pprof  `go tool pprof -top` names the hottest image ([kernel]) as File:;
  HTML   with --epoch all (an epoch and 29 windows, so the per-window plot
         and its table of 24 columns), in headless chromium at 1280 pixels,
         the page is no wider than the window: names wrap, the table scrolls. The check measures a copy of the page with
         a script added (the report itself has none and forbids them).
"""
import csv
import io
import json
import os
import re
import subprocess
import sys

from page_fit import page_width
from pprof_env import pprof_env

lcpiprof, db, work = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
env = pprof_env(work)

HEAD = "<addr2line::lookup::LoopingLookup<core::result::Result<"
TAIL = ">>::new_lookup"
LEGACY = "hot::engine::Grid<T>::sum_rows"
WIDTH = 100

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(cmd):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: exit status {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def prof(*args):
    return run([lcpiprof, "--db", db, "-p", *args])


# JSON: the whole name, demangled.
rows = json.loads(prof("--format", "json"))["rows"]
names = [r["name"] for r in rows]
long_name = names[0]
if not (long_name.startswith(HEAD) and long_name.endswith(TAIL) and len(long_name) == 1103):
    fail(f"JSON: the hottest name is not the whole demangled name ({len(long_name)} bytes): "
         f"{long_name[:80]}...")
if LEGACY not in names:
    fail(f"JSON: no {LEGACY} among {names}")

# CSV: the same name.
csv_names = [r["procedure"] for r in csv.DictReader(io.StringIO(prof("--format", "csv")))]
if csv_names[:1] != [long_name]:
    fail(f"CSV: the first name is not JSON's: {csv_names[:1]}")

# Text: lines fit; the long name keeps its head and its end.
text = prof("--width", str(WIDTH), "--no-header")
for line in text.splitlines():
    if len(line) > WIDTH:
        fail(f"text: a line of {len(line)} columns at --width {WIDTH}: {line}")
row = next((l for l in text.splitlines() if l.lstrip().startswith("900 ")), "")
m = re.search(r"(<addr2line\S*)", row)
cell = m.group(1) if m else ""
if not (cell.startswith("<addr2line::") and "..." in cell and cell.endswith("new_lookup")):
    fail(f"text: the long name is not cut in the middle: {row!r}")

# pprof: the whole name, and the hottest image as the first mapping.
pb = os.path.join(work, "long.pb.gz")
prof("--format", "pprof", "-o", pb)
raw = run(["go", "tool", "pprof", "-raw", pb])
if long_name not in raw:
    fail("pprof -raw: the whole name is missing")
top = run(["go", "tool", "pprof", "-top", pb])
file_line = next((l for l in top.splitlines() if l.startswith("File:")), "")
if file_line != "File: [kernel]":
    fail(f"pprof -top: {file_line!r}, not the hottest image 'File: [kernel]'")

# HTML: the page fits a 1280-pixel window.
page = os.path.join(work, "long.html")
prof("--epoch", "all", "--format", "html", "-o", page)
html = open(page, encoding="utf-8").read()
fit = page_width(html, work)
if not fit:
    fail("HTML: the probe did not run")
elif fit[0] > fit[1]:
    fail(f"HTML: the page is {fit[0]} pixels wide in a {fit[1]}-pixel window")
else:
    print(f"HTML: {fit[0]} pixels wide in a {fit[1]}-pixel window")
if long_name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") not in html:
    fail("HTML: the whole name is missing")
if "The newest 24 of the 30 epochs and windows selected." not in html:
    fail("HTML: the per-window plot does not say it shows the newest 24 of 30")

if failures:
    sys.exit(1)
print("long_names.py: ok")
