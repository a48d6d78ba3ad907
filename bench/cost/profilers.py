"""profilers.py - the cost bench's three profilers, each armed only around
one workload run so the samples it reports are the ones taken while the
workload ran:
  Floor        lcpi-cost-floor: the events and rings alone, read and discarded
  PerfRecord   `perf record -a`, enabled and disabled through its control fifo
  LcpidProf    lcpid (perf or kmod source), samples from `lcpictl status`;
               with a budget (--max-overhead), armed once the governor chose
               its rate (governed_rate_per_cpu, kept for the report)
Each has arm() before the workload, disarm(workload_pid) after it ->
(samples on the workload's process, every sample in the window or None, lost
records), pid (for its own CPU time) and stop(). All sample the same event at the same fixed
mean period, system-wide, on every CPU."""
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "overhead"))
import trial  # noqa: E402  (Lcpid, parse_status, _proc_cpu, TrialError)

TrialError = trial.TrialError
proc_cpu = trial._proc_cpu
# lcpid reads every ring every 100 ms (daemon.cpp kPollMs), perf when a ring
# passes its watermark: waiting this long after the workload lets the samples
# taken during it be read and handled, so the profiler's own CPU time counts
# them (cpu_end, read by each disarm)
DRAIN_S = 0.35


class Floor:
    def __init__(self, build, period):
        exe = os.path.join(build, "bench/cost/lcpi-cost-floor")
        self.proc = subprocess.Popen([exe, "--period", str(period)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.pid = self.proc.pid
        ready = self.proc.stdout.readline()
        if not ready.startswith("ready"):
            self.proc.kill()
            raise TrialError("lcpi-cost-floor did not start: " + self.proc.stderr.read().strip())

    def _say(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().split()

    def arm(self):
        self._say("enable")

    def workload(self, wpid):
        self._say("pid %d" % wpid)

    def disarm(self, wpid):
        w = self._say("disable")  # samples N lost M pid P
        self.cpu_end = proc_cpu(self.pid)  # the rings are drained by now
        if len(w) < 6 or w[0] != "samples":
            raise TrialError("lcpi-cost-floor: unexpected answer %r" % w)
        return int(w[5]), int(w[1]), int(w[3])

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class PerfRecord:
    def __init__(self, event, period, extra=()):
        """extra: more perf record options (bench/stacks: -g, --call-graph dwarf)."""
        self.dir = tempfile.mkdtemp(prefix="lcpi-cost-perf-")
        self.ctl, self.ack = os.path.join(self.dir, "ctl"), os.path.join(self.dir, "ack")
        os.mkfifo(self.ctl)
        os.mkfifo(self.ack)
        # -B -N: no build-id work after the run (perf 6.1 can crash in it)
        cmd = ["perf", "record", "-a", "-B", "-N", "-e", event, "-c", str(period), "-q", "-D", "-1",
               "--control", "fifo:%s,%s" % (self.ctl, self.ack),
               "-o", os.path.join(self.dir, "perf.data")] + list(extra)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.pid = self.proc.pid
        try:
            self.c = open(self.ctl, "w")
            self.a = open(self.ack)
        except OSError as e:
            self.kill()
            raise TrialError("perf record did not start: %s" % e)

    def _say(self, cmd):
        self.c.write(cmd + "\n")
        self.c.flush()
        if not self.a.readline():
            raise TrialError("perf record closed its control fifo: " + self.proc.stderr.read())

    def arm(self):
        self._say("enable")

    def workload(self, wpid):
        pass

    def disarm(self, wpid):
        self._say("disable")
        time.sleep(DRAIN_S)  # perf writes what it read; its own CPU for them
        self.cpu_end = proc_cpu(self.pid)
        self.c.close()
        self.a.close()
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TrialError("perf record did not stop within 120 s")
        if self.proc.returncode not in (0, -signal.SIGINT):
            raise TrialError("perf record failed: " + err.strip()[-500:])
        # the samples perf.data holds (with -B perf does not count them itself),
        # all and the workload's
        data = os.path.join(self.dir, "perf.data")
        r = subprocess.run(["perf", "report", "-i", data, "--stats"], capture_output=True,
                           text=True)
        counts = dict(re.findall(r"^\s*(SAMPLE|LOST) events:\s+(\d+)", r.stdout, re.M))
        if "SAMPLE" not in counts:
            raise TrialError("perf report --stats: no SAMPLE count: " + r.stderr.strip()[-500:])
        # the workload's: by the pid in each sample (perf report's "pid" key is
        # the thread's, and its comm can miss the exec's COMM record)
        r = subprocess.run(["perf", "script", "-i", data, "-F", "pid"], capture_output=True,
                           text=True)
        mine = sum(1 for line in r.stdout.splitlines() if line.strip() == str(wpid))
        return mine, int(counts["SAMPLE"]), int(counts.get("LOST", 0))

    def stop(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# How long the governed row waits for lcpid's calibration and its rate, and
# after how long idle with an estimate not confirmed it asks for another.
GOVERN_TIMEOUT_S = 120
ASK_CALIBRATION_AFTER_S = 10


def governed_target(kv):
    """The rate lcpid's governor aims at by its own estimate: min(asked,
    (budget - held back) / cost), the floor 100/s/CPU; 0 without an
    estimate. (Status's rate_within_budget is the last calibration's, which
    may have been refused, or pooled with others into the estimate.)"""
    cost, asked = kv.get("governor_cost_ns", 0), kv.get("asked_rate_per_cpu", 0)
    if cost <= 0 or asked <= 0:
        return 0
    budget = kv.get("max_overhead_pct", 0) - kv.get("governor_reserved_pct", 0)
    return max(min(asked, budget * 1e7 / cost), min(asked, GOVERNOR_FLOOR))


# The governor's floor (libprofile/budget/governor.h kGovernorFloorRate).
GOVERNOR_FLOOR = 100


class LcpidProf:
    def __init__(self, build, source, event, period, budget=0, extra=(),
                 govern_timeout=GOVERN_TIMEOUT_S):
        # budget 0: the fixed-rate row (the cost budget would lower the rate);
        # extra: more lcpid options (bench/stacks: --stack-frequency)
        self.l = trial.Lcpid(build, source, event,
                             ["--period", str(period), "--max-overhead", str(budget)] +
                             list(extra))
        self.pid = self.l.pid
        self.budget = budget
        self.govern_timeout = govern_timeout
        time.sleep(0.5)  # its start-up scan of /proc is not the workload's cost
        if budget:
            try:
                self._govern()
            except BaseException:
                self.kill()
                raise

    def _govern(self):
        """Calibrates (trial.Lcpid starts lcpid with --calibrate-every 0) and
        waits until the rate lcpid samples at is the one its budget allows
        (within the governor's 10 % hysteresis): the workload then runs at the
        governed rate, and neither the calibration nor the first window at
        the asked rate is part of its cost."""
        self.l.ctl("calibrate")
        asked = time.monotonic()
        self.calibrations_asked = 1
        deadline = asked + self.govern_timeout
        while True:
            kv = self._status()
            done = kv.get("calibration_state") == "done"
            rate, within = kv.get("governed_rate_per_cpu", 0), governed_target(kv)
            # the steady state: an estimate confirmed (no estimate, or only
            # the lower end of refused ones, holds the rate above the budget)
            confirmed = kv.get("estimate_confirmed", 0) == 1
            if done and confirmed and rate > 0 and within > 0 and abs(rate - within) <= 0.1 * rate:
                break
            # An estimate not yet confirmed lowers the rate at most by half
            # (rate_governor.h); on a loaded host every later calibration may
            # be refused for its interval, and lcpid's own retries (10 s, 20 s,
            # 40 s ...) outlast the wait: ask for one after 10 s idle, as an
            # operator would.
            if (done and not kv.get("estimate_confirmed", 1)
                    and time.monotonic() - asked > ASK_CALIBRATION_AFTER_S):
                self.l.ctl("calibrate")
                asked = time.monotonic()
                self.calibrations_asked += 1
            if time.monotonic() > deadline:
                raise TrialError("lcpid did not reach its governed rate within %d s: %r" % (
                    self.govern_timeout, {k: kv.get(k) for k in (
                        "calibration_state", "calibration_error", "governed_rate_per_cpu",
                        "governor_cost_ns", "governor_reserved_pct", "governor_error")}))
            # each status is a process started on the calibration's CPUs: at
            # 10 a second they made its loop's work noisy enough for every
            # calibration to be refused (intervals of +-50 % on a quiet host)
            time.sleep(1)
        self.governed = {k: kv.get(k) for k in (
            "governed_rate_per_cpu", "asked_rate_per_cpu", "sample_cost_ns",
            "sample_cost_ci95_ns", "governor_cost_ns", "estimate_confirmed", "governed_cost_pct",
            "budget_exceeded", "governor_changes", "calibrations", "calibrations_refused")}
        self.governed["calibrations_asked"] = self.calibrations_asked

    def _status(self):
        kv, _ = trial.parse_status(self.l.ctl("status"))
        return kv

    def arm(self):
        self.before = self._status()

    def workload(self, wpid):
        pass

    def disarm(self, wpid):
        """The workload's samples from lcpid's own database (process_counts,
        flushed when lcpid stops); `lcpictl status` cannot separate them from
        the idle CPUs' samples lcpid reads after the workload ends."""
        time.sleep(DRAIN_S)
        self.cpu_end = proc_cpu(self.pid)
        after = self.status_after = self._status()
        lost = int(after.get("lost", 0) - self.before.get("lost", 0))
        # every sample it handled meanwhile, on every CPU and of every
        # process: what its own CPU time is spent on
        handled = int(after.get("samples", 0) - self.before.get("samples", 0))
        if self.budget:  # the rate held through the workload's run
            self.governed["rate_after"] = after.get("governed_rate_per_cpu")
        l = self.l
        self.stop_lcpid()
        db = sqlite3.connect("file:%s?mode=ro" % l.db, uri=True)
        try:
            mine = db.execute("SELECT coalesce(sum(count), 0) FROM process_counts WHERE pid = ?",
                              (wpid,)).fetchone()[0]
        finally:
            db.close()
        shutil.rmtree(l.dir, ignore_errors=True)
        return int(mine), handled, lost

    def stop_lcpid(self):
        """Stops lcpid, which writes its window; its database stays."""
        l = self.l
        l._stop.set()
        l.ctl("stop")
        deadline = time.monotonic() + 60
        while os.path.exists("/proc/%d" % l.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if os.path.exists("/proc/%d" % l.pid):
            raise TrialError("lcpid %d did not stop within 60 s" % l.pid)

    def stop(self):
        pass

    def kill(self):
        self.l.kill()
