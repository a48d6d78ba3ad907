#!/usr/bin/env python3
"""pprof_check.py - lcpiprof --format pprof read by the real client.

    pprof_check.py LCPIPROF DB WORKDIR

For each selection (an epoch, every epoch with one event, an image filter,
the newest epoch) on the tools fixture's database: lcpiprof writes a pprof
file; `go tool pprof` (Debian's golang-go) reads it with -top, -raw and
-sample_index=<each sample type>, exit status 0 and nothing on stderr; and
for every event, pprof's flat figure per function (sample type
<event>_samples) equals the procedure's count in `lcpiprof -p --format csv`
for the same selection, procedure by procedure, and so do the totals.
`go tool pprof` works offline: GOCACHE and HOME point into WORKDIR.
"""
import csv
import io
import os
import re
import shutil
import subprocess
import sys

from pprof_env import pprof_env

lcpiprof, db, work = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
env = pprof_env(work)

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(cmd):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def pprof(path, *args):
    r = run(["go", "tool", "pprof", *args, path])
    what = "go tool pprof " + " ".join(args)
    if r.returncode != 0:
        fail(f"{what}: exit status {r.returncode}: {r.stderr.strip()}")
    if r.stderr:
        fail(f"{what}: stderr is not empty:\n{r.stderr}")
    return r.stdout


def flat_by_function(top):
    """`-top` rows: flat flat% sum% cum cum% NAME -> {NAME: flat}."""
    out, total = {}, None
    for line in top.splitlines():
        m = re.match(r"Showing nodes accounting for (\S+), \S+ of (\S+) total", line)
        if m:
            total = int(m.group(2))
            continue
        m = re.match(r"\s*(\d+)\s+\S+%\s+\S+%\s+\d+\s+\S+%\s+(.+)$", line)
        if m:
            name = m.group(2)
            out[name] = out.get(name, 0) + int(m.group(1))
    return out, total


if shutil.which("go") is None:
    print("FAIL: go not found (scripts/setup.sh installs golang-go)", file=sys.stderr)
    sys.exit(1)

cases = [
    ("base", ["--epoch", "base"]),
    ("all-cycles", ["--epoch", "all", "-e", "cycles"]),
    ("image-filter", ["--epoch", "base", "-i", "prog", "-i", "kernel"]),
    ("newest", []),
]
for name, sel in cases:
    failed_before = len(failures)
    out = os.path.join(work, name + ".pb.gz")
    r = run([lcpiprof, "--db", db, *sel, "--format", "pprof", "-o", out])
    if r.returncode != 0:
        fail(f"{name}: lcpiprof --format pprof: exit status {r.returncode}: {r.stderr}")
        continue
    with open(out, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            fail(f"{name}: {out} is not gzip")
    r = run([lcpiprof, "--db", db, *sel, "-p", "--format", "csv"])
    if r.returncode != 0:
        fail(f"{name}: lcpiprof -p --format csv: exit status {r.returncode}: {r.stderr}")
        continue
    rows = list(csv.reader(io.StringIO(r.stdout)))
    header, rows = rows[0], rows[1:]
    events = header[6::3]

    pprof(out, "-top")
    raw = pprof(out, "-raw")
    if "Samples:" not in raw or "Mappings" not in raw:
        fail(f"{name}: -raw shows no samples or mappings:\n{raw}")
    for event in events:
        column = header.index(event)
        want = {}
        for row in rows:
            if int(row[column]):
                want[row[0]] = want.get(row[0], 0) + int(row[column])
        top = pprof(out, f"-sample_index={event}_samples", "-top", "-nodecount=0",
                    "-nodefraction=0")
        got, total = flat_by_function(top)
        got = {k: v for k, v in got.items() if v}
        if got != want:
            fail(f"{name}: {event}: pprof's flat counts by function differ from lcpiprof -p:\n"
                 f"  pprof:    {sorted(got.items())}\n  lcpiprof: {sorted(want.items())}\n{top}")
        if total != sum(want.values()):
            fail(f"{name}: {event}: pprof's total {total} != lcpiprof's {sum(want.values())}")
        # samples x mean period, where the event has one (every event of the fixture)
        scaled = pprof(out, f"-sample_index={event}", "-top")
        if f"Type: {event}\n" not in scaled:
            fail(f"{name}: -sample_index={event} does not select the scaled type:\n{scaled}")
    if len(failures) == failed_before:
        print(f"{name}: {len(events)} event(s), {len(rows)} procedures agree")

if failures:
    sys.exit(1)
print("ok")
