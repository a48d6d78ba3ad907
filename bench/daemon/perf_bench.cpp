// perf_bench.cpp - (b) the perf source's cost per raw sample on this host:
// a PerfSource (cpu-clock, the default table geometry, as lcpid opens it) is
// polled every 100 ms, as lcpid polls it, while one busy-loop child per
// online CPU keeps every CPU sampling; the daemon side's CPU time is this
// process's CPU clock (CLOCK_PROCESS_CPUTIME_ID: the scheduler's exact
// runtime; the children's time is not counted), divided by the raw samples
// the hash tables saw. getrusage's user/system split is reported too, but it
// is tick-sampled: a process that mostly sleeps in poll() gets a few ticks
// of 4 ms, too coarse for the tens of ms measured here. Needs root.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>

#include "bench/daemon/daemon_bench.h"
#include "libprofile/collect/perf_source.h"

namespace lcpi::bench {
namespace {

double CpuNs(const timeval& tv) { return tv.tv_sec * 1e9 + tv.tv_usec * 1e3; }

double ProcessCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

}  // namespace

Expected<PerfResult> RunPerfBench(double seconds, uint64_t frequency) {
  SourceOptions options;
  options.events = {CpuClockEvent()};
  options.period = 1000000000ull / frequency;  // ns: a fixed mean period, jittered as lcpid does
  lcpi_ht_config table{LCPI_HT_DEFAULT_WAYS, LCPI_HT_DEFAULT_SET_BITS, LCPI_POLICY_ROUND_ROBIN,
                       LCPI_HASH_MULTIPLY, LCPI_HT_DEFAULT_BUFFER_RECORDS};
  PerfSource source(options, table);

  std::vector<pid_t> children;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  for (long i = 0; i < ncpu; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      volatile uint64_t x = 0;
      for (;;) x = x + 1;
    }
    if (pid > 0) children.push_back(pid);
  }
  auto stop_children = [&] {
    for (pid_t pid : children) kill(pid, SIGKILL);
    for (pid_t pid : children) waitpid(pid, nullptr, 0);
  };

  if (Expected<void> started = source.Start(); !started) {
    stop_children();
    return started.error();
  }
  PerfResult r;
  r.seconds = seconds;
  r.frequency = frequency;
  auto sink = [&](const RecordBuffer& b) { r.records += b.records.size(); };
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  double cpu_before = ProcessCpuNs();
  auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  int shown = -1;  // the progress line changes once a second
  while (elapsed < seconds) {
    if (Expected<void> polled = source.Poll(100, sink); !polled) {
      stop_children();
      return polled.error();
    }
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (static_cast<int>(elapsed) != shown) {
      shown = static_cast<int>(elapsed);
      std::fprintf(stderr, "\rperf source: %3d / %.0f s", shown, seconds);
    }
  }
  source.Stop();
  source.Flush(sink);
  double cpu_after = ProcessCpuNs();
  getrusage(RUSAGE_SELF, &after);
  std::fprintf(stderr, "\n");
  stop_children();

  SourceStats stats = source.Stats();
  r.samples = stats.table.samples;
  r.lost = stats.lost;
  double user = CpuNs(after.ru_utime) - CpuNs(before.ru_utime);
  double sys = CpuNs(after.ru_stime) - CpuNs(before.ru_stime);
  r.cpu_ns = cpu_after - cpu_before;
  r.rusage_ns = user + sys;
  if (r.samples) {
    r.ns_per_sample = r.cpu_ns / double(r.samples);
    r.ns_per_sample_user = user / double(r.samples);
    r.ns_per_sample_sys = sys / double(r.samples);
  }
  return r;
}

}  // namespace lcpi::bench
