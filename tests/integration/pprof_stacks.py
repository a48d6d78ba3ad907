#!/usr/bin/env python3
"""pprof_stacks.py - call stacks in lcpiprof --format pprof, read by the real
client.

    pprof_stacks.py LCPIPROF DB WORKDIR

DB is the tools fixture's stacks.db (tools_fixture.cpp, MakeStacks): leaf is
called 60 times through mid_a and 40 through mid_b, both from top from main,
and a procedure of a 256-character name 20 times from main. In the profile
`go tool pprof` (Debian's golang-go) reads:
  -top -cum  the default sample type is the stack samples, and the callers
             carry their cumulative counts: main 120, top 100, mid_a 60,
             mid_b 40; leaf 100 flat;
  -traces    a trace leaf, mid_a, top, main of 60 samples, and one through
             mid_b of 40, innermost first;
  flat       the flat event's samples per function are unchanged (leaf 900);
  names      the 256-character name whole in -raw;
  File:      the hottest image, [kernel].
"""
import os
import re
import subprocess
import sys

from pprof_env import pprof_env

lcpiprof, db, work = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
env = pprof_env(work)
LONG_HEAD, LONG_TAIL = "lcpi::fixture::", "::push_the_long_named_frame"

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(cmd):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or (cmd[0] == "go" and r.stderr):
        fail(f"{' '.join(cmd)}: exit status {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def by_function(top, column):
    """`-top` rows flat flat% sum% cum cum% NAME -> {NAME: flat or cum}."""
    out = {}
    for line in top.splitlines():
        m = re.match(r"\s*(\d+)\s+\S+%\s+\S+%\s+(\d+)\s+\S+%\s+(.+)$", line)
        if m:
            out[m.group(3)] = int(m.group(1 if column == "flat" else 2))
    return out


pb = os.path.join(work, "stacks.pb.gz")
run([lcpiprof, "--db", db, "--epoch", "stacks", "--format", "pprof", "-o", pb])

top = run(["go", "tool", "pprof", "-top", "-cum", "-nodecount=0", "-nodefraction=0", pb])
if "Type: stack_samples" not in top:
    fail(f"-top -cum: the default sample type is not the stack samples:\n{top}")
cum = by_function(top, "cum")
want = {"main": 120, "top": 100, "leaf": 100, "mid_a": 60, "mid_b": 40}
for name, n in want.items():
    if cum.get(name) != n:
        fail(f"-top -cum: {name} cum {cum.get(name)}, want {n}:\n{top}")
flat = by_function(top, "flat")
if flat.get("leaf") != 100 or flat.get("main") != 0:
    fail(f"-top -cum: leaf flat {flat.get('leaf')} (want 100), main {flat.get('main')} (want 0)")
file_line = next((l for l in top.splitlines() if l.startswith("File:")), "")
if file_line != "File: [kernel]":
    fail(f"-top: {file_line!r}, not 'File: [kernel]'")

traces = run(["go", "tool", "pprof", "-traces", pb])
blocks = traces.split("-----------+-------------------------------------------------------")
seen = {}
for block in blocks:
    lines = [l for l in block.splitlines() if l.strip()]
    m = re.match(r"\s*(\d+)\s+(\S+)", lines[0]) if lines else None
    if not m:
        continue
    frames = [m.group(2)] + [l.split()[-1] for l in lines[1:]]
    seen[tuple(frames)] = int(m.group(1))
for frames, n in {("leaf", "mid_a", "top", "main"): 60, ("leaf", "mid_b", "top", "main"): 40}.items():
    if seen.get(frames) != n:
        fail(f"-traces: no trace {' <- '.join(frames)} of {n} samples: {seen}")

flat_cycles = by_function(run(["go", "tool", "pprof", "-sample_index=cycles_samples", "-top",
                               "-nodecount=0", "-nodefraction=0", pb]), "flat")
if flat_cycles.get("leaf") != 900 or flat_cycles.get("mid_a") != 50:
    fail(f"-sample_index=cycles_samples: leaf {flat_cycles.get('leaf')} (want 900), mid_a "
         f"{flat_cycles.get('mid_a')} (want 50)")

raw = run(["go", "tool", "pprof", "-raw", pb])
m = re.search(re.escape(LONG_HEAD) + r"v+" + re.escape(LONG_TAIL), raw)
if not m or len(m.group(0)) != 256:
    fail("-raw: the 256-character name is not whole")

if failures:
    sys.exit(1)
print("pprof_stacks.py: ok")
