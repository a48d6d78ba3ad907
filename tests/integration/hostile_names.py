#!/usr/bin/env python3
"""hostile_names.py - names other users chose, shown by every renderer.

    hostile_names.py LCPIPROF HOSTILE_DB GOLDEN_DIR WORKDIR [--update]

The tools fixture's hostile.db (tests/integration/tools_fixture.cpp) holds
paths, command names, an epoch tag and JIT procedure names with a newline
and a forged row, bytes that are not UTF-8 (0xff 0xfe), the one-byte CSI raw
(0x9b) and UTF-8 encoded (c2 9b), DEL, a tab, a CR, formula prefixes
(= + - @) and a C++ name whose demangled text doubles per level. lcpiprof
renders each view (images, -p, -P) in text, CSV and JSON, its HTML page
(which holds every view) and -p as pprof. Each output must be:

- strict UTF-8 with no control character but the newline (no C0, DEL, C1);
- JSON: read by Python's json module from the bytes, strictly;
- text: one line per row (no forged row): the rows counted are the rows
  the JSON of the same view holds;
- CSV: read by Python's csv module, the same number of rows, and no text
  cell a spreadsheet would take for a formula (= + - @ tab CR first);
- pprof: every string of the string table valid UTF-8 without controls;
- equal to its golden file, tests/golden/hostile_<view>.<format> (HTML:
  hostile_page.html; pprof: the string table, one JSON string a line).
  --update rewrites them.

and each run ends within 10 s (the exponential name is demangled once, to
a bounded length: these runs took 33 s before, and each further level of
the name doubles that).
"""
import csv
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time

lcpiprof, db, golden_dir, work = sys.argv[1:5]
update = "--update" in sys.argv[5:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []
# C0 but newline, DEL, C1; the BiDi controls (Trojan Source), the line and
# paragraph separators and the zero-width characters.
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                     "\u2060\u2066-\u2069\ufeff]")


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(args):
    start = time.monotonic()
    try:
        p = subprocess.run([lcpiprof, "--db", db] + args, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        fail(f"{args}: still running after 120 s")
        return None
    took = time.monotonic() - start
    if took > 10:
        fail(f"{args}: took {took:.1f} s (bound 10 s)")
    if p.returncode != 0:
        fail(f"{args}: exit {p.returncode}: {p.stderr[-2000:]!r}")
        return None
    return p.stdout


def text_of(name, data):
    """data as strict UTF-8 without controls but newlines, or None."""
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        fail(f"{name}: not UTF-8: {e}: {data[max(0, e.start - 30):e.end + 30]!r}")
        return None
    m = CONTROL.search(text)
    if m:
        fail(f"{name}: control character U+{ord(m.group()):04X} in "
             f"{text[max(0, m.start() - 30):m.end() + 30]!r}")
    return text


def normalised(data):
    """data without what depends on the run: the fixture's directory, times."""
    data = data.replace(os.path.dirname(os.path.abspath(db)).encode(), b"@DIR@")
    data = re.sub(rb'"(started|ended)": [0-9]+', rb'"\1": @TIME@', data)
    return re.sub(rb"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC", b"@TIME@", data)


def golden(name, data):
    data = normalised(data)
    path = os.path.join(golden_dir, name)
    if update:
        with open(path, "wb") as f:
            f.write(data)
        return
    try:
        with open(path, "rb") as f:
            want = f.read()
    except FileNotFoundError:
        want = None
    if data != want:
        with open(os.path.join(work, name + ".actual"), "wb") as f:
            f.write(data)
        fail(f"{name}: differs from tests/golden/{name} (actual in {work}/{name}.actual)")


def pprof_strings(data):
    """The string table (field 6) of a gzipped pprof Profile message."""
    raw = gzip.decompress(data)
    strings, i = [], 0

    def varint():
        nonlocal i
        v, shift = 0, 0
        while True:
            b = raw[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(raw):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            varint()
        elif wire == 2:
            n = varint()
            if field == 6:
                strings.append(raw[i:i + n])
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"wire type {wire}")
    return strings


FORMULA = ("=", "+", "-", "@", "\t", "\r")

for view, flag in (("images", []), ("procedures", ["-p"]), ("processes", ["-P"])):
    rows = None
    data = run(flag + ["--format", "json"])
    if data is not None:
        text = text_of(f"{view} json", data)
        try:
            doc = json.loads(data.decode("utf-8", errors="strict"))
            rows = len(doc["rows"])
        except (ValueError, KeyError) as e:
            fail(f"{view} json: not valid JSON: {e}")
        golden(f"hostile_{view}.json", data)
    data = run(flag + ["--format", "text", "--width", "200", "--no-header"])
    if data is not None:
        text = text_of(f"{view} text", data)
        if text is not None and rows is not None:
            lines = text.rstrip("\n").split("\n")
            if len(lines) != rows + 1:  # the column titles, then one line a row
                fail(f"{view} text: {len(lines) - 1} lines for {rows} rows: {text!r}")
        # A long path is cut in the middle: its head says whose it is.
        if view == "images" and text is not None and not re.search(
                r"/home/evil/a+\.\.\.[^ ]*/libc\.so\.6\n", text):
            fail(f"{view} text: the long path is not cut in the middle: {text!r}")
        # A literal backslash is escaped, so it cannot pass for an escape.
        if view == "images" and text is not None and "/tmp/not\\x5cx0anewline" not in text:
            fail(f"{view} text: a literal backslash is not escaped: {text!r}")
        golden(f"hostile_{view}.txt", data)
    data = run(flag + ["--format", "csv"])
    if data is not None:
        text = text_of(f"{view} csv", data)
        if text is not None:
            table = list(csv.reader(io.StringIO(text, newline="")))
            if rows is not None and len(table) != rows + 1:
                fail(f"{view} csv: {len(table) - 1} rows for {rows}")
            for r in table[1:]:
                for cell in r:
                    if cell.startswith(FORMULA):
                        fail(f"{view} csv: a cell a spreadsheet takes for a formula: {cell!r}")
        golden(f"hostile_{view}.csv", data)
    if view == "images":  # lcpiprof's page holds every view, whichever is asked
        data = run(flag + ["--format", "html"])
        if data is not None:
            text_of("html", data)
            golden("hostile_page.html", data)

out = os.path.join(work, "hostile.pb.gz")
if run(["-p", "--format", "pprof", "-o", out]) is not None:
    with open(out, "rb") as f:
        strings = pprof_strings(f.read())
    lines = []
    for s in strings:
        t = text_of("pprof string", s)
        lines.append(json.dumps(t if t is not None else s.decode("latin-1")) + "\n")
    golden("hostile_pprof_strings.txt", "".join(lines).encode())

if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("every format: valid, no forged row, no control, no formula; goldens equal")
