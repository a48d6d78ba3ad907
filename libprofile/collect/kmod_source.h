// kmod_source.h - the source backed by the kernel module: /dev/lcpi (lcpi.ko)
// samples and aggregates in the kernel; this class configures it, reads its
// sealed overflow buffers and checks every one before handing it on. It
// speaks only lcpi_abi.h. ParseKmodBuffer() is the buffer check on its own,
// a pure function, so it is tested without the module.
#ifndef LCPI_LIBPROFILE_COLLECT_KMOD_SOURCE_H
#define LCPI_LIBPROFILE_COLLECT_KMOD_SOURCE_H

#include <poll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lcpi_abi.h"
#include "libprofile/base/error.h"
#include "libprofile/collect/source.h"
#include "libprofile/collect/stack_rings.h"

namespace lcpi {

// Checks one buffer as read() returned it (len bytes at data): magic,
// version, header size, cpu < nr_cpus, nr_records * 16 + header_size == len,
// t_first <= t_last, every record with a count, a valid event index and
// known flags. Errc::kCorrupt names the first field that fails.
Expected<RecordBuffer> ParseKmodBuffer(const uint8_t* data, size_t len, uint32_t nr_cpus);

// One CPU's statistics by GET_STATS into *st, newest request first: a
// module older than lcpi_abi.h refuses the newest number with ENOTTY, so
// VER3, VER2 and VER1 are asked in turn (the fields they lack stay 0).
// stats_ioctl is ioctl(2) on the device, returning 0 or an errno (a
// parameter, so that this is tested without the module). Returns the
// size the module answered (LCPI_CPU_STATS_SIZE_VERn), or the last
// errno as a negative number: -ENOTTY if it knows none, -EINVAL for a CPU
// that is not possible.
using StatsIoctl = std::function<int(unsigned long request, lcpi_cpu_stats* st)>;
int GetKmodCpuStats(const StatsIoctl& stats_ioctl, uint32_t cpu, lcpi_cpu_stats* st);

class KmodSource : public Source {
 public:
  explicit KmodSource(SourceOptions options, std::string device = LCPI_DEVICE_PATH);
  ~KmodSource() override;
  KmodSource(const KmodSource&) = delete;
  KmodSource& operator=(const KmodSource&) = delete;

  std::string Name() const override { return "kmod"; }
  // Opens the device (kUnsupported if there is none: load lcpi.ko; kBusy if
  // another reader has it), checks the ABI, configures and starts.
  Expected<void> Start() override;
  void Stop() override;
  Expected<void> Poll(int timeout_ms, const BufferSink& sink) override;
  std::vector<int> PollFds() const override;
  Expected<void> Flush(const BufferSink& sink) override;
  // Since the first Start(): a stop and restart keeps counting, as the
  // buffers delivered in between are counted too.
  SourceStats Stats() const override;
  const std::vector<RealEvent>& Events() const override { return events_; }
  const std::vector<RefusedEvent>& Refused() const override { return refused_; }
  // LCPI_IOC_SET_PERIODS while sampling: every CPU's event at once, the
  // module's jitter kept. A period below the module's floor for the event
  // really sampled is raised to it (as Start() does), and the module's
  // answer, the periods in effect, is returned. kUnsupported from a module
  // older than the ioctl (ENOTTY).
  Expected<std::vector<uint64_t>> SetMeanPeriods(const std::vector<uint64_t>& periods) override;

  // The module's geometry, valid after Start().
  const lcpi_info& Info() const { return info_; }

 private:
  Expected<void> Open();
  Expected<lcpi_info> GetInfo() const;
  // SET_CONFIG with options_.events[i] for each i in which; for a probe
  // with periods no event reaches, so that nothing is sampled.
  Expected<void> Configure(const std::vector<size_t>& which, bool probe);
  // After START failed with ENOENT/EOPNOTSUPP: starts each event of which
  // alone and moves the ones the PMU lacks to refused_.
  Expected<void> RefuseAbsent(std::vector<size_t>* which);
  // Reads every sealed buffer there is now; *n counts them.
  Expected<void> Drain(const BufferSink& sink, size_t* n);

  SourceOptions options_;
  std::string device_;
  int fd_ = -1;
  lcpi_info info_{};
  std::vector<RealEvent> events_;
  std::vector<RefusedEvent> refused_;
  std::vector<uint8_t> buffer_;
  uint64_t buffers_ = 0;
  bool running_ = false;
  // --stack-frequency: call stacks through perf rings beside the module
  // (stack_rings.h), opened at the first Start on the CPUs online then.
  StackRings stack_rings_;
  bool stacks_opened_ = false;
  // What Poll waits on: the device, then the stack rings; made at Start,
  // not at every poll of the drain thread.
  std::vector<pollfd> pollfds_;
  // The module's cumulative statistics (since it was loaded).
  SourceStats ModuleStats() const;
  SourceStats baseline_;  // ModuleStats() at the first Start()
  bool started_once_ = false;
  // GetKmodCpuStats()'s last answer (a size or -errno), logged when it
  // changes: an older module's shorter version is said once.
  mutable std::atomic<int> stats_size_{0};  // Stats() may be asked from another thread
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_COLLECT_KMOD_SOURCE_H
