// hashsim_report.h - turning replay results into DCPI-style cost figures and
// tables: the cost models (DCPI's Table 4 cycles, lcpi.ko under QEMU, this
// machine's lcpi_ht_add), the 6-way swap-to-front vs 4-way round-robin
// verdict at equal memory, the default the evidence supports, and the
// markdown and JSON files in bench/results/.
#ifndef LCPI_BENCH_HASHSIM_HASHSIM_REPORT_H
#define LCPI_BENCH_HASHSIM_HASHSIM_REPORT_H

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/hashsim/sim.h"

namespace lcpi::sim {

struct Workload {
  std::string name;  // the trace file's stem
  std::string path;
  uint32_t nr_cpus = 0;
  uint64_t period_ns = 0;
  uint64_t samples = 0;
  uint64_t distinct_keys = 0;  // distinct (pid, pc, event)
  uint64_t processes = 0;      // distinct pids
  std::vector<std::pair<Geometry, SimResult>> results;
};

// cost per sample = (hits * hit + misses * miss + records * per_record) / samples.
// When `measured` is set, hit and miss come from TimeAdd for the point's
// (ways, policy) instead.
struct CostModel {
  std::string name;  // "dcpi", "kmod-qemu", "user-table"
  std::string unit;  // "cycles" or "ns"
  std::string source;
  double hit = 0;
  double miss = 0;
  double per_record = 0;
  bool measured = false;
};

using AddCosts = std::map<std::pair<uint32_t, uint32_t>, AddCost>;  // (ways, policy)

double CostPerSample(const CostModel& m, const AddCosts& add, const Geometry& g,
                     const SimResult& r);

struct Report {
  std::vector<Workload> workloads;
  std::vector<CostModel> models;
  AddCosts add_costs;
  std::vector<uint32_t> sizes;  // nominal entries per CPU
};

std::string Markdown(const Report& report);
std::string Json(const Report& report);

}  // namespace lcpi::sim

#endif  // LCPI_BENCH_HASHSIM_HASHSIM_REPORT_H
