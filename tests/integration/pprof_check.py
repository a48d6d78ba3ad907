#!/usr/bin/env python3
"""pprof_check.py - lcpiprof --format pprof read by the real client.

    pprof_check.py LCPIPROF WORKDIR --db DB
    pprof_check.py LCPIPROF WORKDIR --fleet URL [--database NAME]

For each selection (with --db, on the tools fixture's database: an epoch,
every epoch with one event, an image filter, the newest epoch; with --fleet,
over the fleet's windows (fleet_report.sh): all of them, with one event, an
image filter): lcpiprof writes a pprof file; `go tool pprof`
(Debian's golang-go) reads it with -top, -raw and -sample_index=<each sample
type>, exit status 0 and nothing on stderr; and for every event, pprof's
flat figure per function (sample type <event>_samples) equals the
procedure's count in `lcpiprof -p --format csv` for the same selection,
procedure by procedure, and so do the totals; each sample's scaled value is
its count times the event's mean period. `go tool pprof` works offline: GOCACHE and HOME point into WORKDIR.
"""
import csv
import io
import os
import re
import shutil
import subprocess
import sys

from pprof_env import pprof_env

lcpiprof, work, source = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3:]
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


def remove_matching(name, start, end):
    """Every outermost start..end group of `name` removed, as go tool
    pprof's symbolizer removes them (removeMatching); `name` as it is when
    the groups do not match."""
    nesting = first = 0
    i = 0
    while i < len(name):
        c = name[i]
        if c == start:
            nesting += 1
            if nesting == 1:
                first = i
        elif c == end:
            nesting -= 1
            if nesting < 0:
                return name
            if nesting == 0:
                name = name[:first] + name[i + 1:]
                i = first - 1
        i += 1
    return name


def shown(name):
    """A function name as go tool pprof's reports show it: a name that
    looks like demangled C++ (it holds "::" or one of "<>[]") loses its
    parameter lists, then its template arguments (the symbolizer's
    default, "simple" demangling: `lcpi::RunLookup(lcpi::LookupWorker*,
    ...)::{lambda()#1}::operator()` is `lcpi::RunLookup::{lambda#1}::operator`,
    `std::vector<T>::push_back` is `std::vector::push_back`), so that two
    names may become one, summed on both sides."""
    if ".<" in name or "])." in name:
        return name
    if "::" not in name and not any(c in name for c in "<>[]"):
        return name
    return remove_matching(remove_matching(name, "(", ")"), "<", ">")


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
            out[shown(name)] = out.get(shown(name), 0) + int(m.group(1))
    return out, total


def check_scaled(name, raw):
    """In -raw's samples, each <event> value (samples x mean period) is its
    <event>_samples value times the event's mean period, as the comments
    state it (over the fleet: the reference period, the counts weighed)."""
    periods = dict(re.findall(r"Comment: event (\S+)(?: \(sampled as [^)]*\))?: mean period (\d+),",
                              raw))
    lines = raw.split("Samples:\n", 1)[1].splitlines()
    types = [t.split("/")[0] for t in lines[0].split()]
    checked = 0
    for line in lines[1:]:
        m = re.match(r"\s*([\d\s]+):", line)
        if not m:
            break
        values = [int(v) for v in m.group(1).split()]
        for i, t in enumerate(types):
            if t in periods and t + "_samples" in types:
                want = values[types.index(t + "_samples")] * int(periods[t])
                if values[i] != want:
                    fail(f"{name}: a sample's {t} is {values[i]}, not {want} (samples x period)")
                checked += 1
    if not periods or not checked:
        fail(f"{name}: no scaled values to check in -raw:\n{raw[:2000]}")


if shutil.which("go") is None:
    print("FAIL: go not found (scripts/setup.sh installs golang-go)", file=sys.stderr)
    sys.exit(1)

if source[0] == "--fleet":
    cases = [
        ("fleet", []),
        ("fleet-cpu-clock", ["-e", "cpu-clock"]),
        ("fleet-image-filter", ["-i", "tiny"]),
    ]
else:
    cases = [
        ("base", ["--epoch", "base"]),
        ("all-cycles", ["--epoch", "all", "-e", "cycles"]),
        ("image-filter", ["--epoch", "base", "-i", "prog", "-i", "kernel"]),
        ("newest", []),
    ]
for name, sel in cases:
    failed_before = len(failures)
    out = os.path.join(work, name + ".pb.gz")
    r = run([lcpiprof, *source, *sel, "--format", "pprof", "-o", out])
    if r.returncode != 0:
        fail(f"{name}: lcpiprof --format pprof: exit status {r.returncode}: {r.stderr}")
        continue
    with open(out, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            fail(f"{name}: {out} is not gzip")
    r = run([lcpiprof, *source, *sel, "-p", "--format", "csv"])
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
    else:
        check_scaled(name, raw)
    for event in events:
        column = header.index(event)
        want = {}
        for row in rows:
            if int(row[column]):
                want[shown(row[0])] = want.get(shown(row[0]), 0) + int(row[column])
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
