// lcpi_kmod_shares.cpp - the known-shares check of lcpi.ko on a real (here:
// emulated) PMU, inside a QEMU guest (tests/kmod/shares.sh):
//
//   lcpi_kmod_shares --workload PATH --symbols NM_FILE --expect NAME=PCT...
//                    [--seconds S] [--period CYCLES] [--tolerance POINTS] [--nmi]
//
// samples PERF_TYPE_HARDWARE cycles through the module while PATH (the
// shares workload, tests/integration/workloads/shares.c, built static and
// non-PIE so its addresses are the ones nm prints) runs for S seconds, then
// attributes the workload's user-mode samples to its functions by the
// address ranges in NM_FILE (`nm -S` output of PATH, made on the host) and
// checks each function's share of them against PCT within POINTS (2).
// The event is requested with the cpu-clock fallback allowed, and the
// module must report that it really samples cycles: a kernel without a PMU
// fails here instead of passing on time. Also prints the handler's cost
// from the module's statistics, and how many of its runs were in NMI
// context; with --nmi (a kernel whose PMU interrupt is an NMI) every one
// must have been: nmi_samples > 0 and == samples + nested.
// Exit status 0 when every check passed; each failure is printed.
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <linux/perf_event.h>

#include "lcpi_abi.h"
#include "lcpi_device.h"
#include "lcpi_nm.h"

namespace {

struct Function {
  std::string name;
  double expected_pct = 0;
  uint64_t start = 0, end = 0;  // [start, end)
  uint64_t samples = 0;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "lcpi_kmod_shares: %s\nusage: lcpi_kmod_shares --workload PATH --symbols NM_FILE "
               "--expect NAME=PCT... [--seconds S] [--period CYCLES] [--tolerance POINTS] "
               "[--nmi]\n",
               why);
  std::exit(2);
}

// Fills each function's address range from the `nm -S` file; a function
// missing there, or without a size, ends the checker.
void ReadSymbols(const char* path, std::vector<Function>* funcs) {
  std::map<std::string, NmSymbol> nm = ReadNm(path);
  for (Function& fn : *funcs) {
    auto it = nm.find(fn.name);
    if (it == nm.end() || it->second.size == 0) {
      std::fprintf(stderr, "lcpi_kmod_shares: no sized symbol %s in %s\n", fn.name.c_str(), path);
      std::exit(2);
    }
    fn.start = it->second.start;
    fn.end = it->second.start + it->second.size;
  }
}

// Reads every sealed buffer without blocking; counts the user-mode samples
// of `pid` per pc.
void Drain(int fd, std::vector<uint8_t>* buf, uint32_t pid, std::map<uint64_t, uint64_t>* pcs) {
  DrainRecords(fd, buf, [&](uint32_t, const lcpi_record& r) {
    if (r.pid == pid && !(r.flags & LCPI_RECORD_KERNEL)) (*pcs)[r.pc] += r.count;
  });
}

// The handler's mean cost per sample and its runs in NMI context, from
// every CPU's statistics; with `nmi`, checks that every run was an NMI.
void CheckHandler(int fd, uint32_t nr_cpus, bool nmi) {
  lcpi_cpu_stats st = SumStats(fd, nr_cpus);
  uint64_t hits = st.table.hits, misses = st.table.misses, dropped = st.table.dropped;
  uint64_t samples = st.table.samples, nested = st.nested, in_nmi = st.nmi_samples;
  uint64_t ns_hit = st.handler_ns_hit, ns_miss = st.handler_ns_miss;
  std::printf("module: %" PRIu64 " samples (%" PRIu64 " dropped, %" PRIu64
              " nested); handler %.0f ns per hit, %.0f ns per miss; %" PRIu64
              " runs in NMI context\n",
              samples, dropped, nested, hits ? static_cast<double>(ns_hit) / hits : 0.0,
              (misses + dropped) ? static_cast<double>(ns_miss) / (misses + dropped) : 0.0, in_nmi);
  if (!nmi) return;
  // Every handler run of a cycles-only configuration was a PMU overflow,
  // so each one (a sample, or one dropped as nested) was in NMI context.
  CHECK(in_nmi > 0);
  CHECK(in_nmi == samples + nested);
}

int Run(const char* workload, double seconds, uint64_t period, double tolerance, bool nmi,
        std::vector<Function>& funcs) {
  int fd = OpenDev(O_NONBLOCK);
  lcpi_info info = GetInfo(fd);
  std::vector<uint8_t> buf(info.buffer_bytes);
  std::map<uint64_t, uint64_t> pcs;
  CHECK(FlushAll(fd, [&] { Drain(fd, &buf, 0xffffffffu, &pcs); }));  // what came before

  lcpi_config cfg{};
  cfg.size = sizeof(cfg);
  cfg.nr_events = 1;
  cfg.events[0].type = PERF_TYPE_HARDWARE;
  cfg.events[0].config = PERF_COUNT_HW_CPU_CYCLES;
  cfg.events[0].flags = LCPI_EVENT_FALLBACK_CPU_CLOCK;
  cfg.events[0].period = period;
  cfg.events[0].jitter_pct = 10;
  if (ioctl(fd, LCPI_IOC_SET_CONFIG, &cfg) != 0 || ioctl(fd, LCPI_IOC_START, 0) != 0) {
    std::perror("SET_CONFIG/START");
    return 1;
  }
  info = GetInfo(fd);
  const lcpi_event_config& ev = info.events[0];
  std::printf("event 0: type %u config %llu period %llu\n", ev.type,
              static_cast<unsigned long long>(ev.config),
              static_cast<unsigned long long>(ev.period));
  // hardware cycles, not the cpu-clock fallback
  CHECK(ev.type == PERF_TYPE_HARDWARE);
  CHECK(ev.config == PERF_COUNT_HW_CPU_CYCLES);

  std::string secs = std::to_string(seconds);
  pid_t pid = fork();
  if (pid == 0) {
    execl(workload, workload, secs.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  CHECK(pid > 0);
  int status = 0;
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    poll(&pfd, 1, 50);
    Drain(fd, &buf, static_cast<uint32_t>(pid), &pcs);
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid || w < 0) break;
  }
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(ioctl(fd, LCPI_IOC_STOP, 0) == 0);
  CHECK(FlushAll(fd, [&] { Drain(fd, &buf, static_cast<uint32_t>(pid), &pcs); }));
  CheckHandler(fd, info.nr_cpus, nmi);
  close(fd);

  uint64_t all = 0, in_funcs = 0;
  for (const auto& [pc, n] : pcs) {
    all += n;
    for (Function& fn : funcs)
      if (pc >= fn.start && pc < fn.end) {
        fn.samples += n;
        in_funcs += n;
      }
  }
  std::printf("workload: %" PRIu64 " user-mode samples, %" PRIu64 " in the checked functions\n",
              all, in_funcs);
  // enough samples that 2 points is a real bound, and the workload's time is
  // in its functions (else the addresses were wrong)
  CHECK(in_funcs >= 1000);
  CHECK(in_funcs >= all * 9 / 10);
  for (const Function& fn : funcs) {
    double pct = in_funcs ? 100.0 * static_cast<double>(fn.samples) / in_funcs : 0.0;
    bool ok = pct >= fn.expected_pct - tolerance && pct <= fn.expected_pct + tolerance;
    std::printf("%s %s: %" PRIu64 " samples, %.1f %% (expected %.1f +- %.1f)\n",
                ok ? "ok  " : "FAIL", fn.name.c_str(), fn.samples, pct, fn.expected_pct, tolerance);
    if (!ok) ++g_failures;
  }
  return g_failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const char* workload = nullptr;
  const char* symbols = nullptr;
  double seconds = 4, tolerance = 2;
  uint64_t period = 1000000;
  bool nmi = false;
  std::vector<Function> funcs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--nmi") {
      nmi = true;
      continue;
    }
    if (i + 1 >= argc) Usage(("missing the value of " + a).c_str());
    const char* v = argv[++i];
    if (a == "--workload") {
      workload = v;
    } else if (a == "--symbols") {
      symbols = v;
    } else if (a == "--seconds") {
      seconds = std::atof(v);
    } else if (a == "--period") {
      period = std::strtoull(v, nullptr, 0);
    } else if (a == "--tolerance") {
      tolerance = std::atof(v);
    } else if (a == "--expect") {
      const char* eq = std::strchr(v, '=');
      if (!eq) Usage("--expect wants NAME=PCT");
      funcs.push_back(Function{std::string(v, eq), std::atof(eq + 1)});
    } else {
      Usage(("unknown option " + a).c_str());
    }
  }
  if (!workload || !symbols || funcs.empty() || seconds <= 0 || period == 0)
    Usage("--workload, --symbols and --expect are required");
  ReadSymbols(symbols, &funcs);
  int rc = Run(workload, seconds, period, tolerance, nmi, funcs);
  std::printf("shares: %s (%d failures)\n", rc ? "FAILED" : "passed", g_failures);
  return rc;
}
