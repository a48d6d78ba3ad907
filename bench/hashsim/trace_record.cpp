// trace_record.cpp - lcpi-trace-record: records every raw sample (cpu, pid,
// pc, event) for a while, optionally while running a command, into a trace
// file (trace_format.h) for lcpi-hashsim to replay. It opens the events
// exactly as lcpid's perf source does (PerfRing::Open, one cpu-clock event
// per online CPU, the same attr, the same +-10 % period jitter at each poll),
// but writes samples out instead of counting them in a hash table. With a
// command, only the samples of the command's process tree are kept (found
// from the FORK records of a side-band "dummy" event), so a trace shows the
// workload as if it ran alone; --whole-machine keeps everything. Needs root
// (or perf_event_paranoid <= -1), like lcpid.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/hashsim/trace_format.h"
#include "libprofile/collect/perf_ring.h"

namespace {

using lcpi::PerfRing;
using lcpi::trace::TraceSample;

constexpr int kRingPageOrder = 7;  // as PerfSource: 512 KB of ring per CPU
constexpr int kPollMs = 100;       // as lcpid
constexpr uint64_t kJitterPct = 10;

perf_event_attr CpuClockAttr(uint64_t period_ns) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = period_ns;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.disabled = 1;
  attr.exclude_guest = 1;
  attr.watermark = 1;
  attr.wakeup_watermark = (4096u << kRingPageOrder) / 4;
  return attr;
}

perf_event_attr SidebandAttr() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.task = 1;  // FORK and EXIT records
  attr.disabled = 1;
  attr.exclude_guest = 1;
  return attr;
}

// Keeps the samples of root's process tree (fork pairs are (child, parent)).
void KeepTree(std::vector<TraceSample>& samples, uint32_t root,
              const std::vector<std::pair<uint32_t, uint32_t>>& forks) {
  std::set<uint32_t> tree = {root};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [child, parent] : forks)
      if (tree.count(parent) && tree.insert(child).second) grew = true;
  }
  std::erase_if(samples, [&](const TraceSample& s) { return !tree.count(s.pid); });
}

// Starts argv in its own process group; returns its pid or -1.
pid_t StartCommand(const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setpgid(0, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "error: cannot run %s: %s\n", args[0], std::strerror(errno));
  _exit(127);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Records every raw cpu-clock sample on every online CPU (cpu, pid, pc, event) into a\n"
      "trace file for lcpi-hashsim. Samples the whole machine, as lcpid does, with the\n"
      "events opened exactly as lcpid's perf source opens them. With a COMMAND (after --)\n"
      "it runs the command and stops when the command exits or after --seconds, whichever\n"
      "comes first (the command's process group is then sent SIGTERM), and keeps only the\n"
      "samples of the command's process tree unless --whole-machine is given. Needs root."};
  bool whole_machine = false;
  double seconds = 20;
  std::string out;
  uint64_t frequency = 5000;
  std::vector<std::string> command;
  app.add_option("--seconds", seconds, "Longest recording time, in seconds")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--out", out, "Trace file to write (replaced)")->required();
  app.add_option("--frequency", frequency, "Samples per second per CPU (mean; period jittered)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_flag("--whole-machine", whole_machine,
               "With a command: keep every process's samples, not only the command's tree");
  app.add_option("command", command, "Command to run while recording (after --)");
  CLI11_PARSE(app, argc, argv);

  uint64_t period = 1000000000ull / frequency;
  std::vector<int> cpus = lcpi::OnlineCpus();
  int nr_cpus = 0;
  for (int c : cpus) nr_cpus = std::max(nr_cpus, c + 1);
  std::vector<std::unique_ptr<PerfRing>> rings, sidebands;
  for (int cpu : cpus) {
    auto ring = PerfRing::Open(CpuClockAttr(period), cpu, kRingPageOrder);
    if (!ring) {
      std::fprintf(stderr, "error: %s\n", ring.error().ToString().c_str());
      return 1;
    }
    rings.push_back(std::move(*ring));
    auto side = PerfRing::Open(SidebandAttr(), cpu, 4);
    if (!side) {
      std::fprintf(stderr, "error: %s\n", side.error().ToString().c_str());
      return 1;
    }
    sidebands.push_back(std::move(*side));
  }
  for (auto& r : sidebands)
    if (auto e = r->Enable(); !e) {
      std::fprintf(stderr, "error: %s\n", e.error().ToString().c_str());
      return 1;
    }
  for (auto& r : rings)
    if (auto e = r->Enable(); !e) {
      std::fprintf(stderr, "error: %s\n", e.error().ToString().c_str());
      return 1;
    }

  std::vector<TraceSample> samples;
  std::vector<std::pair<uint32_t, uint32_t>> forks;  // (child, parent) processes
  uint64_t lost = 0, bad = 0;
  auto read_all = [&] {
    for (auto& r : sidebands)
      r->Read([&](const perf_event_header& hdr, const uint8_t* body) {
        uint32_t pid, ppid;
        if (hdr.type != PERF_RECORD_FORK || hdr.size - sizeof(hdr) < 8) return;
        std::memcpy(&pid, body, 4);
        std::memcpy(&ppid, body + 4, 4);
        if (pid != ppid) forks.emplace_back(pid, ppid);
      });
    for (auto& r : rings) {
      uint16_t cpu = static_cast<uint16_t>(r->cpu());
      r->Read([&](const perf_event_header& hdr, const uint8_t* body) {
        size_t len = hdr.size - sizeof(hdr);
        if (hdr.type == PERF_RECORD_SAMPLE && len >= 24) {
          TraceSample s;
          std::memcpy(&s.pc, body, 8);
          std::memcpy(&s.pid, body + 8, 4);
          s.cpu = cpu;
          uint16_t mode = hdr.misc & PERF_RECORD_MISC_CPUMODE_MASK;
          if (mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL)
            s.flags = LCPI_RECORD_KERNEL;
          samples.push_back(s);
        } else if (hdr.type == PERF_RECORD_LOST && len >= 16) {
          uint64_t n;
          std::memcpy(&n, body + 8, 8);
          lost += n;
        }
      });
    }
  };

  pid_t child = command.empty() ? -1 : StartCommand(command);
  if (!command.empty() && child < 0) {
    std::fprintf(stderr, "error: fork: %s\n", std::strerror(errno));
    return 1;
  }
  int child_status = 0;
  bool child_done = command.empty();
  std::mt19937_64 rng(std::random_device{}());
  std::vector<pollfd> fds;
  for (auto& r : rings) fds.push_back({r->fd(), POLLIN, 0});
  auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  int shown = -1;  // the progress line changes once a second
  while (elapsed < seconds) {
    poll(fds.data(), fds.size(), kPollMs);
    read_all();
    uint64_t spread = period * kJitterPct / 100;
    for (auto& r : rings) r->SetPeriod(period - spread + rng() % (2 * spread + 1));
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (static_cast<int>(elapsed) != shown) {
      shown = static_cast<int>(elapsed);
      std::fprintf(stderr, "\rrecording: %3d / %.0f s, %zu samples", shown, seconds,
                   samples.size());
    }
    if (!child_done && waitpid(child, &child_status, WNOHANG) == child) child_done = true;
    if (!command.empty() && child_done) break;
  }
  for (auto& r : rings) r->Disable();
  for (auto& r : sidebands) r->Disable();
  read_all();
  std::fprintf(stderr, "\n");
  if (!child_done) {
    std::fprintf(stderr, "time is up: stopping the command\n");
    kill(-child, SIGTERM);
    waitpid(child, &child_status, 0);
  }
  for (auto& r : rings) bad += r->bad_records();
  size_t recorded = samples.size();
  if (!command.empty() && !whole_machine) KeepTree(samples, static_cast<uint32_t>(child), forks);

  lcpi::trace::TraceHeader header;
  header.nr_cpus = static_cast<uint32_t>(nr_cpus);
  header.period_ns = period;
  if (auto w = lcpi::trace::WriteTrace(out, header, samples); !w) {
    std::fprintf(stderr, "error: %s\n", w.error().ToString().c_str());
    return 1;
  }
  std::printf(
      "%s: %zu samples (of %zu on the machine) on %d CPUs in %.1f s (period %llu ns); lost %llu, "
      "bad records %llu\n",
      out.c_str(), samples.size(), recorded, nr_cpus, elapsed,
      static_cast<unsigned long long>(period), static_cast<unsigned long long>(lost),
      static_cast<unsigned long long>(bad));
  if (!command.empty() && WIFEXITED(child_status) && WEXITSTATUS(child_status) != 0)
    std::fprintf(stderr, "note: the command exited with status %d\n", WEXITSTATUS(child_status));
  return 0;
}
