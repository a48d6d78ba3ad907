// bench_main.cpp - lcpi-bench-daemon: runs the daemon throughput measurements
// (daemon_bench.h) and writes them as markdown and JSON with the machine
// they ran on.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/daemon/daemon_bench.h"
#include "bench/hashsim/bench_report.h"

namespace {

using namespace lcpi::bench;

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Measures lcpid's costs: (resolve) ns per overflow record and per raw sample through\n"
      "ProcessTracker resolution and Aggregator::Add, on synthesized buffers; (perf) daemon\n"
      "CPU ns per raw sample of the perf source (cpu-clock) while a busy loop runs on every\n"
      "CPU (needs root); (merge) ProfileDb::Merge time and database bytes per entry against\n"
      "the number of distinct (image, offset) entries, first merge and repeated merge."};
  std::vector<std::string> parts = {"resolve", "perf", "merge"};
  uint32_t processes = 200;
  uint64_t records = 2000000;
  std::vector<uint32_t> max_counts = {1, 10, 50};
  double kernel_share = 0.1;
  double perf_seconds = 20;
  uint64_t frequency = 5000;
  std::vector<uint64_t> entries = {1000, 10000, 100000, 1000000};
  std::string dir = "/tmp", md_path, json_path;
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
  app.add_option("--frequency", frequency, "perf: samples per second per CPU")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--entries", entries, "merge: distinct (image, offset) entries per run")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))
      ->capture_default_str();
  app.add_option("--dir", dir, "merge: directory for the temporary databases")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  app.add_option("--md", md_path, "Write the markdown report here (default: stdout)");
  app.add_option("--json", json_path, "Write the JSON results here");
  CLI11_PARSE(app, argc, argv);
  auto want = [&](const char* p) {
    for (const std::string& s : parts)
      if (s == p) return true;
    return false;
  };

  Machine machine = DescribeMachine();
  std::ostringstream md, js;
  md << "# Daemon throughput (lcpi-bench-daemon)\n\n" << MarkdownMachine(machine) << "\n";
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
    auto r = RunPerfBench(perf_seconds, frequency);
    if (!r) {
      std::fprintf(stderr, "error: perf: %s\n", r.error().ToString().c_str());
      return 1;
    }
    md << "## Perf source per raw sample (target <= 20 ns)\n\n"
       << "PerfSource, cpu-clock at " << r->frequency
       << " Hz per CPU, default table (4-way rr, "
          "16K entries), polled every 100 ms for "
       << Fixed(r->seconds, 0)
       << " s with a busy loop on every CPU. Daemon CPU: this process's CPU clock (exact); "
          "getrusage's user/system split is tick-sampled and only indicative.\n\n"
       << "| raw samples | records | lost | daemon CPU ms | ns/sample | getrusage ms | "
          "getrusage user ns/sample | system ns/sample |\n|---|---|---|---|---|---|---|---|\n"
       << "| " << r->samples << " | " << r->records << " | " << r->lost << " | "
       << Fixed(r->cpu_ns / 1e6, 1) << " | " << Fixed(r->ns_per_sample, 1) << " | "
       << Fixed(r->rusage_ns / 1e6, 1) << " | " << Fixed(r->ns_per_sample_user, 1) << " | "
       << Fixed(r->ns_per_sample_sys, 1) << " |\n\n";
    js << ",\n  \"perf\": {\"seconds\": " << r->seconds << ", \"frequency\": " << r->frequency
       << ", \"event\": \"cpu-clock\", \"samples\": " << r->samples
       << ", \"records\": " << r->records << ", \"lost\": " << r->lost
       << ", \"cpu_ns\": " << r->cpu_ns << ", \"rusage_ns\": " << r->rusage_ns
       << ", \"ns_per_sample\": " << r->ns_per_sample
       << ", \"ns_per_sample_user\": " << r->ns_per_sample_user
       << ", \"ns_per_sample_sys\": " << r->ns_per_sample_sys << "}";
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

  if (md_path.empty())
    std::fputs(md.str().c_str(), stdout);
  else if (!WriteFile(md_path, md.str()))
    return 1;
  if (!json_path.empty() && !WriteFile(json_path, js.str())) return 1;
  return 0;
}
