// calibration.cpp - the pinned loop, its extra sampling events and the fit.
#include "libprofile/budget/calibration.h"

#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>

#include "libprofile/base/clock_ns.h"

namespace lcpi {

namespace {

// b - a of one clock, 0 if it went back.
uint64_t Since(uint64_t a, uint64_t b) { return b > a ? b - a : 0; }

constexpr uint64_t kMinProbeNs = 1'000'000;

// The unit of work: a multiply-add chain the compiler cannot fold or
// vectorise (bench/cost/spin.c's), in registers, so its CPU time moves
// only with what interrupts it.
uint64_t Spin(uint64_t iterations, uint64_t seed) {
  uint64_t x = seed + 1;
  for (uint64_t i = 0; i < iterations; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// One event on the loop's CPU, disabled until a unit runs: sampling at
// rate (with a ring, so every sample is written as lcpid's are, and the
// loop thread's counted from it), or, for rate 0, a counting dummy that is
// enabled and disabled as the others are, so every unit pays the same two
// ioctls. Per CPU, not per thread: the first per-thread event of a host
// turns on the scheduler's perf hooks (the perf_sched_events static key),
// code patched in __schedule at each calibration, which Debian 13's 6.12
// under QEMU's TCG took as an int3 oops (kmod.6.12.events).
class LoopEvent {
 public:
  static constexpr size_t kDataPages = 16;

  ~LoopEvent() {
    if (ring_ != MAP_FAILED) munmap(ring_, RingBytes());
    if (fd_ >= 0) close(fd_);
  }
  LoopEvent() = default;
  LoopEvent(const LoopEvent&) = delete;
  LoopEvent& operator=(const LoopEvent&) = delete;

  Expected<void> Open(const CalibrationConfig& c, uint64_t rate, int cpu) {
    rate_ = rate;
    tid_ = static_cast<uint32_t>(gettid());
    perf_event_attr a{};
    a.size = sizeof(a);
    a.disabled = 1;
    if (rate == 0) {
      a.type = PERF_TYPE_SOFTWARE;
      a.config = PERF_COUNT_SW_DUMMY;
    } else {
      a.type = c.type;
      a.config = c.config;
      a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
      // cpu-clock counts ns: the period is exact; other events' periods are
      // unknown in time, so perf finds them (frequency mode).
      if (c.type == PERF_TYPE_SOFTWARE && c.config == PERF_COUNT_SW_CPU_CLOCK) {
        a.sample_period = 1'000'000'000ull / rate;
      } else {
        a.freq = 1;
        a.sample_freq = rate;
      }
      a.wakeup_events = 1u << 30;  // no reader waits on it
    }
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd_ < 0) return ErrnoError("calibration: perf_event_open", errno);
    if (rate == 0) return {};
    ring_ = mmap(nullptr, RingBytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (ring_ == MAP_FAILED) return ErrnoError("calibration: mmap of the ring", errno);
    return {};
  }

  // Enables the event for one unit of iterations; returns the point. The
  // loop runs in chunks with stop read between them, so a unit that other
  // tasks stretch does not hold up lcpid's exit.
  CalibrationPoint Run(uint64_t iterations, uint64_t* sink, const bool* stop) {
    constexpr uint64_t kChunk = 1'000'000;
    const uint64_t head0 = Head();
    const uint64_t t0 = ThreadCpuNs();
    ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0);
    for (uint64_t done = 0; done < iterations; done += kChunk) {
      if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED)) break;
      *sink += Spin(std::min(kChunk, iterations - done), *sink);
    }
    ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
    const uint64_t t1 = ThreadCpuNs();
    return {rate_, CountSamples(head0, Head()), Since(t0, t1)};
  }

 private:
  size_t RingBytes() const { return (1 + kDataPages) * static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
  perf_event_mmap_page* Page() const { return static_cast<perf_event_mmap_page*>(ring_); }
  uint64_t Head() const {
    return ring_ == MAP_FAILED ? 0 : __atomic_load_n(&Page()->data_head, __ATOMIC_ACQUIRE);
  }
  // Counts the loop thread's sample records from `from` to `to` (the CPU's
  // other tasks' are not its cost) and frees them.
  uint64_t CountSamples(uint64_t from, uint64_t to) {
    if (ring_ == MAP_FAILED) return 0;
    const uint64_t size = Page()->data_size;
    const char* data = static_cast<const char*>(ring_) + Page()->data_offset;
    uint64_t n = 0;
    for (uint64_t at = from; at + sizeof(perf_event_header) <= to;) {
      perf_event_header h;
      // a header never straddles the end: records are 8-byte aligned
      std::memcpy(&h, data + (at % size), sizeof(h));
      if (h.size < sizeof(h)) break;
      if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 16) {
        // ip, then pid and tid: 8-byte aligned, so they never straddle the end
        uint32_t pid_tid[2];
        std::memcpy(pid_tid, data + ((at + sizeof(h) + 8) % size), sizeof(pid_tid));
        if (pid_tid[1] == tid_) n++;
      }
      at += h.size;
    }
    __atomic_store_n(&Page()->data_tail, to, __ATOMIC_RELEASE);
    return n;
  }

  int fd_ = -1;
  void* ring_ = MAP_FAILED;
  uint64_t rate_ = 0;
  uint32_t tid_ = 0;
};

// The last CPU this thread may run on.
int LastAllowedCpu(const cpu_set_t& set) {
  for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
    if (CPU_ISSET(cpu, &set)) return cpu;
  return -1;
}

}  // namespace

uint64_t UnitIterations(uint64_t probe_iterations, uint64_t probe_cpu_ns, uint64_t probe_wall_ns,
                        uint64_t unit_ns) {
  const uint64_t probe_ns =
      std::max<uint64_t>(probe_cpu_ns >= probe_wall_ns / 4 ? probe_cpu_ns : probe_wall_ns, 1);
  return std::max<uint64_t>(
      1, static_cast<uint64_t>(static_cast<double>(probe_iterations) *
                               static_cast<double>(unit_ns) / static_cast<double>(probe_ns)));
}

uint64_t MaxSampleRate(uint64_t fallback) {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  uint64_t rate = 0;
  return (in >> rate) && rate > 0 ? rate : fallback;
}

Expected<Calibration> CalibrateSampleCost(const CalibrationConfig& config, const bool* stop) {
  const uint64_t wall0 = ClockNs(CLOCK_MONOTONIC), cpu0 = ThreadCpuNs();
  std::vector<uint64_t> rates = config.rates;
  std::sort(rates.begin(), rates.end());
  rates.erase(std::unique(rates.begin(), rates.end()), rates.end());
  if (rates.size() < 2 || config.repetitions < 2 || config.unit_ns == 0)
    return Error(Errc::kInvalidArgument, "calibration: needs two rates, two repetitions, a unit");

  cpu_set_t before;
  CPU_ZERO(&before);
  if (pthread_getaffinity_np(pthread_self(), sizeof(before), &before) != 0)
    return Error(Errc::kIo, "calibration: cannot read the thread's CPUs");
  Calibration out;
  out.rates = rates;
  out.cpu = config.cpu >= 0 ? config.cpu : LastAllowedCpu(before);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(out.cpu, &one);
  if (out.cpu < 0 || pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0)
    return Error(Errc::kUnsupported, "calibration: cannot pin to CPU " + std::to_string(out.cpu));
  struct Unpin {
    cpu_set_t* set;
    ~Unpin() { pthread_setaffinity_np(pthread_self(), sizeof(*set), set); }
  } unpin{&before};

  std::vector<std::unique_ptr<LoopEvent>> events;
  for (uint64_t rate : rates) {
    events.push_back(std::make_unique<LoopEvent>());
    if (Expected<void> e = events.back()->Open(config, rate, out.cpu); !e) return e.error();
  }

  // How many iterations make a unit: timed on a short run, unsampled, made
  // longer until it lasts a millisecond (a clock's steps are then small).
  uint64_t sink = 0, probe = 500'000, probe_cpu_ns = 0, probe_wall_ns = 0;
  do {
    if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
      return Error(Errc::kBusy, "calibration: stopped");
    probe *= 2;
    const uint64_t c0 = ThreadCpuNs(), w0 = ClockNs(CLOCK_MONOTONIC);
    sink += Spin(probe, sink);
    probe_cpu_ns = Since(c0, ThreadCpuNs());
    probe_wall_ns = Since(w0, ClockNs(CLOCK_MONOTONIC));
  } while (probe_wall_ns < kMinProbeNs && probe < (1ull << 32));
  if (probe_wall_ns < kMinProbeNs)
    return Error(Errc::kUnsupported, "calibration: the clocks did not move over " +
                                         std::to_string(probe) + " iterations");
  const uint64_t iterations = UnitIterations(probe, probe_cpu_ns, probe_wall_ns, config.unit_ns);

  std::mt19937 shuffle(static_cast<uint32_t>(wall0 ^ (wall0 >> 32)));
  std::vector<size_t> order(rates.size());
  std::vector<double> xs, ys, zs;
  for (int rep = 0; rep < config.repetitions; rep++) {
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::shuffle(order.begin(), order.end(), shuffle);
    for (size_t i : order) {
      if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
        return Error(Errc::kBusy, "calibration: stopped");
      CalibrationPoint p = events[i]->Run(iterations, &sink, stop);
      out.points.push_back(p);
      xs.push_back(static_cast<double>(p.samples));
      ys.push_back(static_cast<double>(p.cpu_ns));
      zs.push_back(static_cast<double>(p.rate));
    }
  }
  std::optional<SlopeFit> fit = FitInstrumented(xs, ys, zs);
  out.cpu_ns = Since(cpu0, ThreadCpuNs());
  out.wall_ns = Since(wall0, ClockNs(CLOCK_MONOTONIC));
  out.finished_unix = static_cast<int64_t>(std::time(nullptr));
  if (!fit)
    return Error(Errc::kUnsupported,
                 "calibration: no line through the points (no samples were taken on the loop?)");
  out.fit = *fit;
  asm volatile("" : : "r"(sink));  // the work is used: never optimised away
  return out;
}

}  // namespace lcpi
