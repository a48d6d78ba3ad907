// perf_bench.cpp - (b) what lcpid's drain costs per raw sample on this host:
// a PerfSource (cpu-clock, the default table geometry, as lcpid opens it) is
// polled every 100 ms as lcpid polls it (or as --poll-ms says: a poll waits
// that long unless a ring passes its watermark), while one child per online CPU
// spins through an instruction sled of N pcs (sled.h: N sets the table's
// miss rate); every buffer it hands out is resolved and aggregated by an
// Aggregator over a ProcessTracker that knows the children's sled, as
// lcpid's loop does. The CPU time is this process's CPU clock
// (CLOCK_PROCESS_CPUTIME_ID: the scheduler's exact runtime; the children's
// time is not counted), the part in Aggregator::Add this thread's, each
// divided by the raw samples the hash tables saw. A run with no children
// (N = 0) samples once a second per CPU, so it takes next to no samples even
// on a busy host: its CPU per poll is the fixed cost of a poll (the
// syscall, the sleep and wake-up, reading empty rings, the period changes),
// which at 100 ms polls shows up in every run as a cost per sample that
// falls as the rate rises. Needs root.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>

#include "bench/daemon/daemon_bench.h"
#include "bench/daemon/sled.h"
#include "libprofile/aggregate/aggregator.h"
#include "libprofile/collect/perf_source.h"

namespace lcpi::bench {
namespace {

double ClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

}  // namespace

Expected<PerfResult> RunPerfBench(double seconds, uint64_t frequency, uint32_t pcs, int poll_ms,
                                  KernelSymbols* kernel) {
  SourceOptions options;
  options.events = {CpuClockEvent()};
  // No sled: one sample a second per CPU, so that the other processes of a
  // shared host add next to nothing and the CPU per poll is a poll's own.
  if (pcs == 0) frequency = 1;
  options.period = 1000000000ull / frequency;  // ns: a fixed mean period, jittered as lcpid does
  lcpi_ht_config table{LCPI_HT_DEFAULT_WAYS, LCPI_HT_DEFAULT_SET_BITS, LCPI_POLICY_ROUND_ROBIN,
                       LCPI_HASH_MULTIPLY, LCPI_HT_DEFAULT_BUFFER_RECORDS};
  PerfSource source(options, table);

  std::optional<Sled> sled;
  if (pcs > 0) {
    Expected<Sled> started = Sled::Start(pcs, OnlineCpus());
    if (!started) return started.error();
    sled.emplace(std::move(*started));
  }
  // What lcpid's side-band would have told it: the children run the sled.
  ImageTable images;
  ProcessTracker tracker;
  if (sled) {
    int32_t image = images.Intern("build-id:bench-sled", "[sled]", ImageKind::kUser);
    for (pid_t pid : sled->children()) {
      tracker.OnComm(static_cast<uint32_t>(pid), "lcpi-sled", true, 0);
      tracker.OnMmap(static_cast<uint32_t>(pid), {sled->start(), sled->end(), 0, image}, 0);
    }
  }
  Aggregator aggregator(images, tracker, kernel);

  if (Expected<void> started = source.Start(); !started) return started.error();
  PerfResult r;
  r.pcs = pcs;
  r.seconds = seconds;
  r.frequency = frequency;
  auto sink = [&](const RecordBuffer& b) {
    r.records += b.records.size();
    double t0 = ClockNs(CLOCK_THREAD_CPUTIME_ID);
    aggregator.Add(b);
    r.resolve_ns += ClockNs(CLOCK_THREAD_CPUTIME_ID) - t0;
  };
  double cpu_before = ClockNs(CLOCK_PROCESS_CPUTIME_ID);
  auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  int shown = -1;  // the progress line changes once a second
  while (elapsed < seconds) {
    if (Expected<void> polled = source.Poll(poll_ms, sink); !polled) return polled.error();
    r.polls++;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (static_cast<int>(elapsed) != shown) {
      shown = static_cast<int>(elapsed);
      std::fprintf(stderr, "\rperf source, %u pcs: %3d / %.0f s", pcs, shown, seconds);
    }
  }
  source.Stop();
  if (Expected<void> flushed = source.Flush(sink); !flushed) return flushed.error();
  r.cpu_ns = ClockNs(CLOCK_PROCESS_CPUTIME_ID) - cpu_before;
  std::fprintf(stderr, "\n");

  SourceStats stats = source.Stats();
  r.samples = stats.table.samples;
  r.misses = stats.table.misses;
  r.lost = stats.lost;
  r.unknown = aggregator.totals().unknown;
  return r;
}

}  // namespace lcpi::bench
