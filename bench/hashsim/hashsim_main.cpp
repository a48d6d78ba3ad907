// hashsim_main.cpp - lcpi-hashsim: replays sample traces through the real
// per-CPU hash table over the grid (associativity, policy, size, hash), times
// lcpi_ht_add on this machine, and writes the miss rates, modelled costs and
// the 6-way swap-to-front vs 4-way round-robin verdict (hashsim_report.h).
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/hashsim/bench_report.h"
#include "bench/hashsim/hashsim_report.h"

namespace {

using lcpi::sim::Geometry;

uint32_t Log2Floor(uint64_t v) {
  uint32_t b = 0;
  while ((uint64_t{2} << b) <= v) b++;
  return b;
}

// Every grid point of one size: ways that divide it exactly, and for the
// others (6) the geometries just below and just above (see hashsim_report.cpp).
std::vector<Geometry> Grid(const std::vector<uint32_t>& sizes) {
  std::vector<Geometry> grid;
  for (uint32_t size : sizes)
    for (uint32_t hash : {LCPI_HASH_MULTIPLY, LCPI_HASH_XOR_FOLD})
      for (uint32_t ways : {1u, 2u, 4u, 6u, 8u})
        for (uint32_t policy :
             {LCPI_POLICY_ROUND_ROBIN, LCPI_POLICY_SWAP_TO_FRONT, LCPI_POLICY_LRU}) {
          if (ways == 1 && policy != LCPI_POLICY_ROUND_ROBIN) continue;
          uint32_t bits = Log2Floor(size / ways);
          grid.push_back({ways, bits, policy, hash, size});
          if ((uint64_t{1} << bits) * ways != size)
            grid.push_back({ways, bits + 1, policy, hash, size});
        }
  return grid;
}

std::string Stem(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.find('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Replays sample traces (from lcpi-trace-record) through lcpi_hashtable.h, one table per\n"
      "CPU of the trace, over associativity 1,2,4,6,8 x policy rr/stf/lru x sizes x hash\n"
      "multiply/xor-fold, and reports miss rates and modelled cost per sample under three\n"
      "models: DCPI's Table 4 cycles, lcpi.ko's handler as measured under QEMU, and\n"
      "lcpi_ht_add timed here. Each trace is named by its file name up to the first dot."};
  std::vector<std::string> paths;
  std::vector<uint32_t> sizes = {4096, 16384, 65536};
  std::string md_path, json_path;
  double dcpi_record = 2000, kmod_hit = 775, kmod_miss = 1650, daemon_ns = 0;
  app.add_option("traces", paths, "Trace files")->required()->check(CLI::ExistingFile);
  app.add_option("--sizes", sizes, "Table sizes in entries per CPU (powers of two)")
      ->check(CLI::Range(64u, 1u << 24))
      ->capture_default_str();
  app.add_option("--md", md_path, "Write the markdown report here (default: stdout)");
  app.add_option("--json", json_path, "Write the JSON results here");
  app.add_option("--dcpi-cycles-per-record", dcpi_record,
                 "DCPI model: daemon cycles per overflow record")
      ->capture_default_str();
  app.add_option("--kmod-hit-ns", kmod_hit, "kmod-qemu model: handler ns per hit")
      ->capture_default_str();
  app.add_option("--kmod-miss-ns", kmod_miss, "kmod-qemu model: handler ns per miss")
      ->capture_default_str();
  app.add_option("--daemon-ns-per-record", daemon_ns,
                 "kmod-qemu and user-table models: daemon ns per record (from "
                 "lcpi-bench-daemon)")
      ->required();
  CLI11_PARSE(app, argc, argv);
  for (uint32_t s : sizes)
    if (s & (s - 1)) {
      std::fprintf(stderr, "error: --sizes: %u is not a power of two\n", s);
      return 1;
    }

  lcpi::sim::Report rep;
  rep.sizes = sizes;
  rep.models = {
      {"dcpi", "cycles", "DCPI Table 4: hit 416, miss 700; per record: see docs/bench-hashsim.md",
       416, 700, dcpi_record, false},
      {"kmod-qemu", "ns",
       "lcpi.ko handler under QEMU TCG (mid-range); daemon from lcpi-bench-daemon", kmod_hit,
       kmod_miss, daemon_ns, false},
      {"user-table", "ns",
       "lcpi_ht_add timed here per (ways, policy); daemon from lcpi-bench-daemon", 0, 0, daemon_ns,
       true},
  };
  std::vector<lcpi::trace::Trace> traces;  // all validated before any work
  for (const std::string& path : paths) {
    auto trace = lcpi::trace::ReadTrace(path);
    if (!trace) {
      std::fprintf(stderr, "error: %s\n", trace.error().ToString().c_str());
      return 1;
    }
    traces.push_back(std::move(*trace));
  }
  std::fprintf(stderr, "timing lcpi_ht_add per hit and per miss\n");
  for (uint32_t ways : {1u, 2u, 4u, 6u, 8u})
    for (uint32_t policy : {LCPI_POLICY_ROUND_ROBIN, LCPI_POLICY_SWAP_TO_FRONT, LCPI_POLICY_LRU}) {
      if (ways == 1 && policy != LCPI_POLICY_ROUND_ROBIN) continue;
      Geometry g{ways, Log2Floor(16384 / ways), policy, LCPI_HASH_MULTIPLY, 16384};
      rep.add_costs[{ways, policy}] = lcpi::sim::TimeAdd(g);
    }

  std::vector<Geometry> grid = Grid(sizes);
  for (size_t t = 0; t < paths.size(); t++) {
    const std::string& path = paths[t];
    const lcpi::trace::Trace* trace = &traces[t];
    lcpi::sim::Workload w;
    w.name = Stem(path);
    w.path = path;
    w.nr_cpus = trace->header.nr_cpus;
    w.period_ns = trace->header.period_ns;
    w.samples = trace->samples.size();
    std::set<std::tuple<uint32_t, uint64_t, uint8_t>> keys;
    std::set<uint32_t> pids;
    for (const auto& s : trace->samples) {
      keys.insert({s.pid, s.pc, s.event});
      pids.insert(s.pid);
    }
    w.distinct_keys = keys.size();
    w.processes = pids.size();
    for (size_t i = 0; i < grid.size(); i++) {
      std::fprintf(stderr, "\rreplaying %s: %zu / %zu configurations", w.name.c_str(), i + 1,
                   grid.size());
      w.results.emplace_back(grid[i], lcpi::sim::Replay(*trace, grid[i]));
    }
    std::fprintf(stderr, "\n");
    rep.workloads.push_back(std::move(w));
  }

  std::string md = lcpi::sim::Markdown(rep);
  if (md_path.empty())
    std::fputs(md.c_str(), stdout);
  else if (!lcpi::bench::WriteFile(md_path, md))
    return 1;
  if (!json_path.empty() && !lcpi::bench::WriteFile(json_path, lcpi::sim::Json(rep))) return 1;
  return 0;
}
