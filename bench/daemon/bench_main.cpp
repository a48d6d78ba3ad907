// bench_main.cpp - lcpi-bench-daemon: runs the daemon throughput measurements
// (daemon_bench.h) and writes them as markdown and JSON with the machine
// they ran on.
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/daemon/daemon_bench.h"
#include "bench/hashsim/bench_report.h"

namespace {

using namespace lcpi;
using namespace lcpi::bench;

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// /proc/loadavg's 1, 5 and 15 minute figures.
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + ", " + five + ", " + fifteen;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Measures lcpid's costs: (resolve) ns per overflow record and per raw sample through\n"
      "ProcessTracker resolution and Aggregator::Add, on synthesized buffers; (perf) daemon\n"
      "CPU ns per raw sample of the perf source (cpu-clock) and of resolving its records,\n"
      "while every CPU spins over N distinct pcs (needs root); (merge) ProfileDb::Merge time\n"
      "and database bytes per entry against the number of distinct (image, offset) entries,\n"
      "first merge and repeated merge."};
  std::vector<std::string> parts = {"resolve", "perf", "merge"};
  uint32_t processes = 200;
  uint64_t records = 2000000;
  std::vector<uint32_t> max_counts = {1, 10, 50};
  double kernel_share = 0.1;
  double perf_seconds = 20;
  int poll_ms = 100;  // as lcpid polled before its drain thread slept until a watermark
  uint64_t frequency = 5000;
  // The busy loop's near-zero miss rate, then sleds whose misses span the
  // suite's (bench/results/hashsim.md); 0 first: the fixed cost of a poll.
  std::vector<uint32_t> pcs = {0, 1, 12000, 20000, 32000};
  std::vector<uint64_t> entries = {1000, 10000, 100000, 1000000};
  std::string dir = "/tmp", md_path, json_path, note;
  app.add_option("--parts", parts, "Which measurements: resolve, perf, merge")
      ->check(CLI::IsMember({"resolve", "perf", "merge"}))
      ->capture_default_str();
  app.add_option("--processes", processes, "resolve: synthesized processes")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();
  app.add_option("--records", records, "resolve: records per run")
      ->check(CLI::Range(uint64_t{1000}, uint64_t{100000000}))
      ->capture_default_str();
  app.add_option("--max-counts", max_counts,
                 "resolve: one run per value; record counts uniform in 1..value")
      ->check(CLI::Range(1u, 65535u))
      ->capture_default_str();
  app.add_option("--kernel-share", kernel_share, "resolve: share of kernel-mode records")
      ->check(CLI::Range(0.0, 0.4))
      ->capture_default_str();
  app.add_option("--perf-seconds", perf_seconds, "perf: seconds of sampling")
      ->check(CLI::Range(1.0, 600.0))
      ->capture_default_str();
  app.add_option("--poll-ms", poll_ms,
                 "perf: longest wait of a poll (lcpid: 100; a ring at its watermark wakes it)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--frequency", frequency, "perf: samples per second per CPU")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--pcs", pcs,
                 "perf: one run per value: children spin over N distinct pcs (0: no children "
                 "and 1 sample/s/CPU, the fixed cost of a poll)")
      ->check(CLI::Range(0u, 4000000u))
      ->capture_default_str();
  app.add_option("--entries", entries, "merge: distinct (image, offset) entries per run")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))
      ->capture_default_str();
  app.add_option("--dir", dir, "merge: directory for the temporary databases")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  app.add_option("--md", md_path, "Write the markdown report here (default: stdout)");
  app.add_option("--note", note, "A line about the conditions, written under the machine");
  app.add_option("--json", json_path, "Write the JSON results here");
  CLI11_PARSE(app, argc, argv);
  auto want = [&](const char* p) {
    for (const std::string& s : parts)
      if (s == p) return true;
    return false;
  };

  Machine machine = DescribeMachine();
  std::ostringstream md, js;
  md << "# Daemon throughput (lcpi-bench-daemon)\n\n" << MarkdownMachine(machine);
  // A shared host's other load moves every figure here: said with them.
  md << "Load average at the start: " << LoadAverage() << ".";
  if (!note.empty()) md << " " << note;
  md << "\n\n";
  js << "{\n  \"tool\": \"lcpi-bench-daemon\",\n  \"machine\": " << JsonMachine(machine);

  if (want("resolve")) {
    md << "## Resolution and aggregation (Aggregator::Add)\n\n"
       << processes << " processes, each one of 20 executables plus 12 libraries; " << records
       << " records per run in buffers of 8000; " << Fixed(100 * kernel_share, 0)
       << " % kernel records (resolved via /proc/kallsyms); single thread, thread CPU time.\n\n"
       << "| counts per record | records | samples | distinct entries | ns/record | "
          "ns/raw sample |\n|---|---|---|---|---|---|\n";
    js << ",\n  \"resolve\": [";
    for (size_t i = 0; i < max_counts.size(); i++) {
      std::fprintf(stderr, "resolve: counts 1..%u (%zu / %zu)\n", max_counts[i], i + 1,
                   max_counts.size());
      ResolveResult r = RunResolveBench(processes, records, max_counts[i], kernel_share);
      md << "| 1.." << r.max_count << " | " << r.records << " | " << r.samples << " | " << r.entries
         << " | " << Fixed(r.ns_per_record, 1) << " | " << Fixed(r.ns_per_sample, 2) << " |\n";
      js << (i ? ", " : "") << "{\"processes\": " << r.processes << ", \"images\": " << r.images
         << ", \"max_count\": " << r.max_count << ", \"records\": " << r.records
         << ", \"samples\": " << r.samples << ", \"entries\": " << r.entries
         << ", \"ns_per_record\": " << r.ns_per_record << ", \"ns_per_sample\": " << r.ns_per_sample
         << "}";
    }
    js << "]";
    md << "\n";
  }

  if (want("perf")) {
    std::optional<KernelSymbols> kernel;
    if (Expected<KernelSymbols> k = KernelSymbols::Load(); k) kernel = std::move(*k);
    md << "## Perf source and aggregation per raw sample (targets: <= 20 ns per raw sample, "
          "<= 60 ns per record)\n\n"
       << "PerfSource, cpu-clock at " << frequency
       << " Hz per CPU, default table (4-way rr, 16K entries), polled every " << poll_ms
       << " ms (at most) for " << Fixed(perf_seconds, 0)
       << " s while one pinned child per CPU spins through a sled of N instructions (N sets the "
          "miss rate; N = 0: no children and 1 Hz, so the CPU per poll is a poll's fixed cost); "
          "every "
          "buffer resolved and aggregated (Aggregator::Add) as lcpid does. CPU: this process's "
          "CPU clock (exact); Add's part: the thread's CPU clock around each call. 'Beyond "
          "polls': the total less the N = 0 run's CPU per poll times the polls.\n\n"
       << "| N pcs | raw samples | miss % | records | polls | source ns/sample | Add ns/record | "
          "Add ns/sample | lcpid ns/sample | us/poll | beyond polls ns/sample | lost |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    js << ",\n  \"perf\": [";
    std::optional<double> idle_ns_per_poll;
    for (size_t i = 0; i < pcs.size(); i++) {
      auto r = RunPerfBench(perf_seconds, frequency, pcs[i], poll_ms, kernel ? &*kernel : nullptr);
      if (!r) {
        std::fprintf(stderr, "error: perf: %s\n", r.error().ToString().c_str());
        return 1;
      }
      double samples = r->samples ? double(r->samples) : 1;
      double per_poll = r->polls ? r->cpu_ns / double(r->polls) : 0;
      if (r->pcs == 0) idle_ns_per_poll = per_poll;
      std::string beyond = "-";
      if (idle_ns_per_poll && r->pcs != 0)
        beyond = Fixed((r->cpu_ns - *idle_ns_per_poll * double(r->polls)) / samples, 1);
      md << "| " << r->pcs << " | " << r->samples << " | " << Fixed(100 * r->misses / samples, 2)
         << " | " << r->records << " | " << r->polls << " | "
         << Fixed((r->cpu_ns - r->resolve_ns) / samples, 1) << " | "
         << Fixed(r->records ? r->resolve_ns / double(r->records) : 0, 1) << " | "
         << Fixed(r->resolve_ns / samples, 1) << " | " << Fixed(r->cpu_ns / samples, 1) << " | "
         << Fixed(per_poll / 1000, 1) << " | " << beyond << " | " << r->lost << " |\n";
      js << (i ? ", " : "") << "{\"pcs\": " << r->pcs << ", \"seconds\": " << r->seconds
         << ", \"frequency\": " << r->frequency << ", \"poll_ms\": " << poll_ms
         << ", \"event\": \"cpu-clock\", \"polls\": " << r->polls << ", \"samples\": " << r->samples
         << ", \"misses\": " << r->misses << ", \"records\": " << r->records
         << ", \"unknown\": " << r->unknown << ", \"lost\": " << r->lost
         << ", \"cpu_ns\": " << r->cpu_ns << ", \"resolve_ns\": " << r->resolve_ns << "}";
    }
    js << "]";
    md << "\n";
  }

  if (want("merge")) {
    md << "## Database merge (ProfileDb::Merge, WAL) against distinct entries\n\n"
          "A fresh database per size; 100 images, one event, 50 process rows. Repeat: the "
          "same keys again (every row an update). Size: the file after close.\n\n"
          "| entries | first merge s | repeat merge s | us/entry first | us/entry repeat | "
          "bytes on disk | bytes/entry |\n|---|---|---|---|---|---|---|\n";
    js << ",\n  \"merge\": [";
    for (size_t i = 0; i < entries.size(); i++) {
      std::fprintf(stderr, "merge: %llu entries (%zu / %zu)\n",
                   static_cast<unsigned long long>(entries[i]), i + 1, entries.size());
      auto r = RunMergeBench(entries[i], dir);
      if (!r) {
        std::fprintf(stderr, "error: merge: %s\n", r.error().ToString().c_str());
        return 1;
      }
      md << "| " << r->entries << " | " << Fixed(r->first_s, 3) << " | " << Fixed(r->repeat_s, 3)
         << " | " << Fixed(1e6 * r->first_s / r->entries, 2) << " | "
         << Fixed(1e6 * r->repeat_s / r->entries, 2) << " | " << r->bytes << " | "
         << Fixed(r->bytes_per_entry, 1) << " |\n";
      js << (i ? ", " : "") << "{\"entries\": " << r->entries << ", \"first_s\": " << r->first_s
         << ", \"repeat_s\": " << r->repeat_s << ", \"bytes\": " << r->bytes
         << ", \"bytes_per_entry\": " << r->bytes_per_entry << "}";
    }
    js << "]";
    md << "\n";
  }
  js << "\n}\n";
  md << "Load average at the end: " << LoadAverage() << ".\n";

  if (md_path.empty())
    std::fputs(md.str().c_str(), stdout);
  else if (!WriteFile(md_path, md.str()))
    return 1;
  if (!json_path.empty() && !WriteFile(json_path, js.str())) return 1;
  return 0;
}
