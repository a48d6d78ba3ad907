// perf_source.h - the source that needs no kernel module: one perf_event_open()
// sampling event per CPU per configured event, read from mmap'ed rings and
// aggregated in the same per-CPU hash table the module uses
// (lcpi_hashtable.h), so lcpid sees the same overflow buffers from both.
#ifndef LCPI_LIBPROFILE_COLLECT_PERF_SOURCE_H
#define LCPI_LIBPROFILE_COLLECT_PERF_SOURCE_H

#include <poll.h>

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lcpi_hashtable.h"
#include "libprofile/collect/perf_ring.h"
#include "libprofile/collect/source.h"
#include "libprofile/collect/stack_rings.h"

namespace lcpi {

// Samples per second per CPU when neither a period nor a frequency is given.
constexpr uint64_t kDefaultSampleRate = 5000;
// Hardware periods are converted to cpu-clock ns as if the clock were 2 GHz.
constexpr uint64_t kAssumedCyclesPerNs = 2;

// The mean period for ev at the options' rate: options.period if given,
// else derived from options.frequency or kDefaultSampleRate.
uint64_t MeanPeriod(const SourceOptions& options, uint32_t type);

// The samples per second per CPU an event of this type samples at with this
// mean period: the inverse of MeanPeriod (a hardware event as if it counted
// kAssumedCyclesPerNs a ns, as the default period assumes).
double NominalSampleRate(uint32_t type, uint64_t period);

class PerfSource : public Source {
 public:
  PerfSource(SourceOptions options, lcpi_ht_config table_config);
  ~PerfSource() override;

  std::string Name() const override { return "perf"; }
  Expected<void> Start() override;
  void Stop() override;
  Expected<void> Poll(int timeout_ms, const BufferSink& sink) override;
  std::vector<int> PollFds() const override;
  Expected<void> Flush(const BufferSink& sink) override;
  SourceStats Stats() const override;
  const std::vector<RealEvent>& Events() const override { return events_; }
  const std::vector<RefusedEvent>& Refused() const override { return refused_; }
  // PERF_EVENT_IOC_PERIOD on every ring now (with --frequency, the
  // frequency those periods give), then each second's jitter around them.
  Expected<std::vector<uint64_t>> SetMeanPeriods(const std::vector<uint64_t>& periods) override;

 private:
  // The table's memory in cache lines: a 4-way set of 16-byte entries is
  // then one line, so a probe touches one line, not two.
  struct alignas(64) CacheLine {
    uint8_t bytes[64];
  };
  struct Cpu {
    int cpu;
    std::vector<CacheLine> memory;  // backs table
    lcpi_ht table{};
    std::vector<std::unique_ptr<PerfRing>> rings;  // one per event
    uint64_t last_time = 0;                        // newest sample, perf clock
  };

  using Rings = std::vector<std::unique_ptr<PerfRing>>;
  Expected<std::unique_ptr<PerfRing>> OpenEvent(const RealEvent& ev, const OpenLevel& level,
                                                int cpu);
  // ev on every CPU of cpus_, in their order, at the highest precise_ip the
  // PMU accepts (set in ev.precise; exclude_guest cleared only where a
  // precise PMU refuses it); the first failure otherwise.
  Expected<Rings> OpenOnEveryCpu(RealEvent& ev);
  // Reads every ring of c into its table, in batches of kBatch samples.
  void ReadRings(Cpu& c, const BufferSink& sink);
  // Adds batch_ (samples of one event) to c's table and empties it.
  void AddBatch(Cpu& c, uint32_t event, const BufferSink& sink);
  void DeliverReady(Cpu& c, const BufferSink& sink);
  void RandomisePeriods();

  SourceOptions options_;
  lcpi_ht_config table_config_;
  std::vector<RealEvent> events_;
  // The mean period each event samples at now: its asked one (events_),
  // or the governed one (SetMeanPeriods). The drain thread's alone.
  std::vector<uint64_t> mean_periods_;
  std::vector<RefusedEvent> refused_;
  std::vector<Cpu> cpus_;
  std::vector<pollfd> pollfds_;  // every ring's, made once at Start
  // Samples read from a ring, not yet in the table: each table set they
  // probe is prefetched while the ring is read, a batch ahead of the probe.
  struct Sample {
    uint64_t ip;
    uint64_t time;
    uint32_t pid;
    uint32_t flags;
  };
  static constexpr size_t kBatch = 32;
  std::vector<Sample> batch_;
  std::mt19937_64 rng_;
  uint64_t lost_ = 0;
  uint64_t throttled_ = 0;
  uint64_t buffers_ = 0;
  StackRings stack_rings_;  // --stack-frequency; none opened without
  bool running_ = false;
  std::chrono::steady_clock::time_point next_jitter_{};
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_COLLECT_PERF_SOURCE_H
