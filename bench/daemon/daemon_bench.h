// daemon_bench.h - the three measurements of lcpi-bench-daemon, each in its
// own file: resolution and aggregation of overflow records
// (resolve_bench.cpp), the perf source's and the aggregator's cost per raw
// sample on this host at a chosen miss rate (perf_bench.cpp), and database
// merges against the number of distinct (image, offset) entries
// (merge_bench.cpp).
#ifndef LCPI_BENCH_DAEMON_DAEMON_BENCH_H
#define LCPI_BENCH_DAEMON_DAEMON_BENCH_H

#include <cstdint>
#include <string>

#include "libprofile/base/error.h"
#include "libprofile/image/kernel_symbols.h"

namespace lcpi::bench {

// (a) Aggregator::Add over synthesized buffers.
struct ResolveResult {
  uint32_t processes = 0;
  uint32_t images = 0;
  uint32_t max_count = 0;  // record counts uniform in 1..max_count
  uint64_t records = 0;
  uint64_t samples = 0;  // sum of counts
  uint64_t entries = 0;  // distinct (image, event, offset) afterwards
  double ns_per_record = 0;
  double ns_per_sample = 0;
};
ResolveResult RunResolveBench(uint32_t processes, uint64_t records, uint32_t max_count,
                              double kernel_share);

// (b) PerfSource and Aggregator::Add on this host while every CPU spins
// through a sled of `pcs` instructions (sled.h; 0: no workload, which
// measures the fixed cost of a poll).
struct PerfResult {
  uint32_t pcs = 0;
  double seconds = 0;
  uint64_t frequency = 0;  // requested samples per second per CPU
  uint64_t polls = 0;      // PerfSource::Poll calls (100 ms each)
  uint64_t samples = 0;    // raw samples through the hash tables
  uint64_t misses = 0;     // of them, table misses
  uint64_t records = 0;    // records delivered in buffers
  uint64_t unknown = 0;    // samples the aggregator filed as unknown
  uint64_t lost = 0;
  double cpu_ns = 0;      // this process's CPU clock (exact), source and aggregator
  double resolve_ns = 0;  // of it, this thread's CPU in Aggregator::Add
};
// kernel may be null (no kallsyms): kernel records then go to [kernel].
Expected<PerfResult> RunPerfBench(double seconds, uint64_t frequency, uint32_t pcs, int poll_ms,
                                  KernelSymbols* kernel);

// (c) ProfileDb::Merge of `entries` distinct (image, offset) counts into a
// fresh database in dir, then the same keys again (updates).
struct MergeResult {
  uint64_t entries = 0;
  double first_s = 0;
  double repeat_s = 0;
  uint64_t bytes = 0;  // database file after close (WAL checkpointed)
  double bytes_per_entry = 0;
};
Expected<MergeResult> RunMergeBench(uint64_t entries, const std::string& dir);

}  // namespace lcpi::bench

#endif  // LCPI_BENCH_DAEMON_DAEMON_BENCH_H
