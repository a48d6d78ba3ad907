// resolve_bench.cpp - (a) records per second through resolution and
// aggregation. Synthesizes `processes` address spaces in a ProcessTracker
// (each: one of 20 executables plus 12 shared libraries at a per-process
// slide, images interned in an ImageTable as lcpid would), overflow buffers
// of 8000 records whose pcs fall 60 % in the executable, 30 % in a library
// and the rest in the running kernel (resolved through /proc/kallsyms when
// readable), with counts uniform in 1..max_count, then times Aggregator::Add
// over all of them.
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/daemon/daemon_bench.h"
#include "lcpi_hashtable.h"
#include "libprofile/aggregate/aggregator.h"

namespace lcpi::bench {
namespace {

constexpr uint32_t kExecutables = 20;
constexpr uint32_t kLibraries = 12;
constexpr uint64_t kTextBytes = 4 << 20;
constexpr uint64_t kHotOffsets = 4096;  // distinct hot instructions per image

}  // namespace

ResolveResult RunResolveBench(uint32_t processes, uint64_t records, uint32_t max_count,
                              double kernel_share) {
  ImageTable images;
  ProcessTracker tracker;
  std::vector<int32_t> exe, lib;
  for (uint32_t i = 0; i < kExecutables; i++)
    exe.push_back(images.Intern("build-id:bench-exe-" + std::to_string(i),
                                "/usr/bin/bench" + std::to_string(i), ImageKind::kUser));
  for (uint32_t i = 0; i < kLibraries; i++)
    lib.push_back(images.Intern("build-id:bench-lib-" + std::to_string(i),
                                "/usr/lib/libbench" + std::to_string(i) + ".so", ImageKind::kUser));
  auto exe_base = [](uint32_t pid) { return 0x550000000000ull + uint64_t{pid} * 0x10000000ull; };
  auto lib_base = [](uint32_t pid, uint32_t l) {
    return 0x7f0000000000ull + uint64_t{pid % 64} * 0x100000000ull + uint64_t{l} * 0x1000000ull;
  };
  // Each process in one of 8 containers' cgroups, paths as long as a
  // kubepods one (about 220 bytes): a record's process row compares its path.
  std::vector<CgroupRef> cgroups;
  for (uint32_t c = 0; c < 8; c++)
    cgroups.push_back(std::make_shared<const std::string>(
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-"
        "pod8a7b6c5d_1e2f_4a3b_9c8d_7e6f5a4b3c2" +
        std::to_string(c) + ".slice/cri-containerd-" + std::string(63, 'a') + std::to_string(c) +
        ".scope"));
  for (uint32_t p = 0; p < processes; p++) {
    uint32_t pid = 1000 + p;
    tracker.OnComm(pid, "bench" + std::to_string(p % kExecutables), true, 1);
    tracker.SetCgroup(pid, 1, cgroups[p % cgroups.size()]);
    tracker.OnMmap(pid, {exe_base(pid), exe_base(pid) + kTextBytes, 0x1000, exe[p % kExecutables]},
                   1);
    for (uint32_t l = 0; l < kLibraries; l++)
      tracker.OnMmap(pid, {lib_base(pid, l), lib_base(pid, l) + kTextBytes, 0, lib[l]}, 1);
  }
  std::optional<KernelSymbols> kernel;
  if (auto k = KernelSymbols::Load(); k) kernel = std::move(*k);
  if (!kernel) kernel_share = 0;

  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  auto hot = [&] {
    double u = unit(rng);
    return static_cast<uint64_t>(u * u * kHotOffsets) * 16;  // skewed towards hot code
  };
  std::vector<RecordBuffer> buffers;
  ResolveResult r;
  r.processes = processes;
  r.max_count = max_count;
  for (uint64_t i = 0; i < records; i++) {
    if (buffers.empty() || buffers.back().records.size() == LCPI_HT_DEFAULT_BUFFER_RECORDS) {
      RecordBuffer& b = buffers.emplace_back();
      b.header.t_first = 10;
      b.header.t_last = 20;
      b.header.nr_records = 0;
    }
    lcpi_record rec{};
    rec.pid = 1000 + static_cast<uint32_t>(rng() % processes);
    rec.count = static_cast<uint16_t>(1 + rng() % max_count);
    double where = unit(rng);
    if (where < kernel_share) {
      rec.pc = kernel->text_base() + rng() % (kernel->text_end() - kernel->text_base());
      rec.flags = LCPI_RECORD_KERNEL;
    } else if (where < kernel_share + 0.6) {
      rec.pc = exe_base(rec.pid) + 0x1000 + hot();
    } else {
      rec.pc = lib_base(rec.pid, static_cast<uint32_t>(rng() % kLibraries)) + hot();
    }
    buffers.back().records.push_back(rec);
    r.samples += rec.count;
  }
  r.records = records;

  Aggregator agg(images, tracker, kernel ? &*kernel : nullptr);
  // This thread's CPU time: the machine is shared, wall time would count waits.
  auto thread_ns = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
  };
  double start = thread_ns();
  for (const RecordBuffer& b : buffers) agg.Add(b);
  double ns = thread_ns() - start;
  r.ns_per_record = ns / double(r.records);
  r.ns_per_sample = ns / double(r.samples);
  r.entries = agg.entries();
  r.images = static_cast<uint32_t>(images.size());
  return r;
}

}  // namespace lcpi::bench
