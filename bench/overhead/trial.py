"""trial.py - one timed run of one workload, bare or under a profiler, and
what it cost. A trial is a fresh workload process; for a profiled trial a
fresh profiler is started before it and stopped after it (lcpid on its own
temporary database and socket, or `perf record -a`), so every trial pays
the same start-up and no state leaks from one trial into the next. The clock
runs only around the workload; the profiler's start and stop are outside it.

Also judges the trial: CPU time on the machine that was neither the
workload's nor the profiler's (other processes, from /proc/stat) and steal
time are measured over the trial; above the threshold the trial is invalid.
"""
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count() or 1


class TrialError(Exception):
    """The trial could not run at all (not an outside disturbance)."""


def _cpu_stat():
    """(busy, steal) seconds over all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (v + [0] * 8)[:8]
    return (user + nice + system + irq + softirq) / TICK, steal / TICK


def _proc_cpu(pid):
    """CPU seconds of pid, all its threads (0 once it is gone). From each
    thread's schedstat (nanoseconds), since /proc/PID/stat counts in clock
    ticks (10 ms): too coarse for a daemon that uses a few ms per second."""
    try:
        total = 0
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, IndexError, ValueError):
        pass
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return 0.0


def _proc_kb(pid, key):
    """VmRSS / VmHWM of pid in bytes, or None."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def parse_status(text):
    """lcpictl status output -> {key: value} (numbers as float) and events."""
    kv, events = {}, []
    for line in text.splitlines():
        parts = line.split(None, 1)
        if len(parts) != 2:
            continue
        if parts[0].startswith("event."):
            events.append(parts[1])
            continue
        try:
            kv[parts[0]] = float(parts[1])
        except ValueError:
            kv[parts[0]] = parts[1]
    return kv, events


class Lcpid:
    """lcpid on a temporary database and socket, for one trial."""

    def __init__(self, build, source, events, extra):
        self.build = build
        self.dir = tempfile.mkdtemp(prefix="lcpi-bench-")
        self.sock = os.path.join(self.dir, "lcpid.sock")
        self.db = os.path.join(self.dir, "profiles.db")
        log = os.path.join(self.dir, "lcpid.log")
        pidf = os.path.join(self.dir, "lcpid.pid")
        cmd = [os.path.join(build, "daemon/lcpid"), "--db", self.db, "--socket", self.sock,
               "--pid-file", pidf, "--log-file", log, "--source", source,
               "--events", events, "--flush-interval", "86400",
               # what sampling costs, not the calibration's ~0.5 s at start
               # (stated apart: lcpictl status calibration_cpu_ms)
               "--calibrate-every", "0"]
        # at the rate each trial asks, not the one the budget allows, unless
        # extra gives a budget (bench/cost's governed row): lcpid refuses
        # the option twice
        if "--max-overhead" not in extra:
            cmd += ["--max-overhead", "0"]
        cmd += extra
        # daemon mode: returns once sampling has started, with the verdict
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            tail = open(log).read()[-2000:] if os.path.exists(log) else ""
            shutil.rmtree(self.dir, ignore_errors=True)
            raise TrialError("lcpid failed to start (%s): %s%s" % (
                " ".join(cmd), r.stderr.strip(), "\n" + tail if tail else ""))
        self.pid = int(open(pidf).read())
        self.rss = []
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample_rss, daemon=True)
        self._sampler.start()

    def _sample_rss(self):
        while not self._stop.wait(0.2):
            v = _proc_kb(self.pid, "VmRSS")
            if v:
                self.rss.append(v)

    def ctl(self, verb):
        r = subprocess.run([os.path.join(self.build, "tools/lcpictl"), "--socket", self.sock,
                            verb], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise TrialError("lcpictl %s: %s" % (verb, r.stderr.strip()))
        return r.stdout

    def cpu(self):
        return _proc_cpu(self.pid)

    def kill(self):
        """Best effort, on the way out after an error or ^C: no lcpid left behind."""
        self._stop.set()
        try:
            os.kill(self.pid, signal.SIGTERM)
        except OSError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def stop(self):
        """Stop (lcpid flushes first); returns (peak RSS, database bytes)."""
        self._stop.set()
        hwm = _proc_kb(self.pid, "VmHWM")
        self.ctl("stop")
        deadline = time.monotonic() + 60
        while os.path.exists("/proc/%d" % self.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if os.path.exists("/proc/%d" % self.pid):
            os.kill(self.pid, signal.SIGKILL)
            raise TrialError("lcpid %d did not stop within 60 s" % self.pid)
        size = sum(os.path.getsize(os.path.join(self.dir, f)) for f in os.listdir(self.dir)
                   if f.startswith("profiles.db"))
        shutil.rmtree(self.dir, ignore_errors=True)
        return hwm, size


class PerfRecord:
    """`perf record -a` for one trial, enabled through its control fifo."""

    def __init__(self, event, period):
        self.dir = tempfile.mkdtemp(prefix="lcpi-bench-perf-")
        ctl, ack = os.path.join(self.dir, "ctl"), os.path.join(self.dir, "ack")
        os.mkfifo(ctl)
        os.mkfifo(ack)
        self.data = os.path.join(self.dir, "perf.data")
        # -B -N: no build-id collection after the run (untimed anyway; perf 6.1 can
        # crash in it: "assertion failed at util/build-id.c")
        cmd = ["perf", "record", "-a", "-q", "-B", "-N", "-e", event, "-c", str(period),
               "-D", "-1", "--control", "fifo:%s,%s" % (ctl, ack), "-o", self.data]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.pid = self.proc.pid
        try:
            with open(ctl, "w") as c:
                c.write("enable\n")
            with open(ack) as a:
                a.readline()
        except OSError as e:
            self.proc.kill()
            raise TrialError("perf record did not start: %s %s" % (e, self.proc.stderr.read()))

    def cpu(self):
        return _proc_cpu(self.pid)

    def kill(self):
        """Best effort, on the way out after an error or ^C."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise TrialError("perf record did not stop within 120 s")
        size = os.path.getsize(self.data) if os.path.exists(self.data) else 0
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.proc.returncode not in (0, -signal.SIGINT):
            raise TrialError("perf record failed: " + err.strip()[-500:])
        return None, size


def run(workload_cmd, profiler=None, max_outside_pct=10.0):
    """Run workload_cmd once (under profiler, already started, or bare).

    Returns a dict: seconds (wall), cpu_s (the workload's user+system),
    outside_pct, steal_pct, valid, and for lcpid the events really sampled
    and the cost figures. The profiler is stopped before returning, also
    when the trial fails or is interrupted."""
    try:
        return _run(workload_cmd, profiler, max_outside_pct)
    except BaseException:
        if profiler:
            profiler.kill()
        raise


def _run(workload_cmd, profiler, max_outside_pct):
    before = None
    if isinstance(profiler, Lcpid):
        before, _ = parse_status(profiler.ctl("status"))
    p0 = profiler.cpu() if profiler else 0.0
    busy0, steal0 = _cpu_stat()
    c0 = _children_cpu()
    t0 = time.monotonic()
    r = subprocess.run(workload_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    wall = time.monotonic() - t0
    c1 = _children_cpu()
    busy1, steal1 = _cpu_stat()
    p1 = profiler.cpu() if profiler else 0.0
    out = {"seconds": wall, "cpu_s": c1 - c0}
    if r.returncode != 0:
        raise TrialError("workload %s failed (%d): %s" % (" ".join(workload_cmd),
                                                         r.returncode, r.stderr.strip()[-1000:]))
    if isinstance(profiler, Lcpid):
        after, events = parse_status(profiler.ctl("status"))
        rss = profiler.rss
        peak, db = profiler.stop()
        d = lambda k: after.get(k, 0) - before.get(k, 0)  # noqa: E731
        samples = d("samples")
        out.update({
            "events": events,
            "samples": samples,
            "samples_per_s_per_cpu": samples / wall / NCPU,
            "lost": d("lost"),
            "miss_rate_pct": 100.0 * d("misses") / max(1.0, d("hits") + d("misses")),
            "daemon_ns_per_sample": 1e9 * (p1 - p0) / samples if samples else None,
            "handler_ns_per_hit": after.get("handler_ns_per_hit"),
            "handler_ns_per_miss": after.get("handler_ns_per_miss"),
            "rss_avg_bytes": sum(rss) / len(rss) if rss else after.get("rss_bytes"),
            "rss_peak_bytes": peak,
            "db_bytes": db,
        })
    elif profiler:
        _, size = profiler.stop()
        out["perf_data_bytes"] = size
    ours = (c1 - c0) + (p1 - p0)
    out["outside_pct"] = max(0.0, 100.0 * ((busy1 - busy0) - ours) / (wall * NCPU))
    out["steal_pct"] = 100.0 * (steal1 - steal0) / (wall * NCPU)
    out["valid"] = out["outside_pct"] <= max_outside_pct and out["steal_pct"] <= max_outside_pct
    return out
