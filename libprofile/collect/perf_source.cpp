// perf_source.cpp - opening the sampling events (with the cpu-clock
// fallback), reading samples into the per-CPU hash tables, and handing out
// sealed buffers.
#include "libprofile/collect/perf_source.h"

#include <algorithm>
#include <chrono>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace lcpi {
namespace {

constexpr int kRingPageOrder = 7;  // 512 KB of ring per CPU per event

bool IsSoftwareClock(uint32_t type) { return type == PERF_TYPE_SOFTWARE; }

// perf_event_open's answer when the PMU lacks an event: ENOENT (no PMU
// knows it), EOPNOTSUPP (the PMU cannot sample it), ENODEV.
bool EventAbsent(const Error& e) {
  return e.code() == Errc::kNotFound || e.message().find("not supported") != std::string::npos ||
         e.message().find("No such device") != std::string::npos;
}

}  // namespace

uint64_t MeanPeriod(const SourceOptions& options, uint32_t type) {
  if (options.period) return options.period;
  uint64_t rate = options.frequency ? options.frequency : kDefaultSampleRate;
  uint64_t ns = 1000000000ull / rate;
  return IsSoftwareClock(type) ? ns : ns * kAssumedCyclesPerNs;
}

double NominalSampleRate(uint32_t type, uint64_t period) {
  if (period == 0) return 0;
  const double ns = IsSoftwareClock(type) ? static_cast<double>(period)
                                          : static_cast<double>(period) / kAssumedCyclesPerNs;
  return 1e9 / ns;
}

PerfSource::PerfSource(SourceOptions options, lcpi_ht_config table_config)
    : options_(std::move(options)), table_config_(table_config), rng_(std::random_device{}()) {
  batch_.reserve(kBatch);
}

PerfSource::~PerfSource() { Stop(); }

Expected<std::unique_ptr<PerfRing>> PerfSource::OpenEvent(const RealEvent& ev,
                                                          const OpenLevel& level, int cpu) {
  perf_event_attr attr{};
  attr.type = ev.type;
  attr.config = ev.config;
  attr.sample_period = ev.period;
  if (options_.frequency && !options_.period) {
    attr.freq = 1;
    attr.sample_freq = options_.frequency;
  }
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  // read() then says how long the event was enabled and really counting:
  // the multiplexing scale (PerfRing::ReadTimes).
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  // The choices lcpi.ko states in kmod/include/lcpi_attr.h, made here for a
  // ring: precise_ip only for hardware cycles and instructions, and
  // exclude_guest but where a precise PMU refuses it, in the module's
  // lowering order (ChooseOpenLevel, with lcpi_attr.h's rule). Unlike the
  // module's, these events wake the reader by watermark and carry
  // sample_type IP|TID|TIME, so on Intel a precise event may take
  // AUTO_RELOAD and large PEBS (intel_pmu_hw_config, 6.1 core.c:3962):
  // fine here, every PEBS record reaches the ring (drained at the
  // threshold, at context switch and at disable), whereas a kernel
  // counter without a ring gets one handler call per buffer.
  attr.precise_ip = static_cast<uint64_t>(level.precise) & 3;
  attr.disabled = 1;
  attr.exclude_guest = level.exclude_guest ? 1 : 0;
  attr.watermark = 1;
  attr.wakeup_watermark = (4096u << kRingPageOrder) / 4;
  return PerfRing::Open(attr, cpu, kRingPageOrder);
}

Expected<PerfSource::Rings> PerfSource::OpenOnEveryCpu(RealEvent& ev) {
  // The most precise level the PMU accepts, in lcpi.ko's order (as perf
  // does for cycles:P); the first CPU decides, the others must then take
  // the same.
  OpenLevel level;
  if (!cpus_.empty())
    level = ChooseOpenLevel(ev.type, ev.config, [&](const OpenLevel& l) -> Expected<void> {
      Expected<std::unique_ptr<PerfRing>> probe = OpenEvent(ev, l, cpus_.front().cpu);
      if (!probe) return probe.error();
      return {};
    });
  ev.precise = level.precise;
  if (!level.exclude_guest)
    spdlog::info(
        "event '{}': the PMU refused exclude_guest at precise_ip {} (AMD IBS); asked again with "
        "guest mode counted",
        ev.used, level.precise);
  Rings rings;
  for (const Cpu& c : cpus_) {
    Expected<std::unique_ptr<PerfRing>> ring = OpenEvent(ev, level, c.cpu);
    if (!ring) return ring.error();
    rings.push_back(std::move(*ring));
  }
  return rings;
}

Expected<void> PerfSource::Start() {
  if (options_.events.empty() || options_.events.size() > LCPI_MAX_EVENTS)
    return Error(Errc::kInvalidArgument, "between 1 and 4 events are needed");
  if (lcpi_ht_config_check(&table_config_))
    return Error(Errc::kInvalidArgument, "bad hash table geometry");
  std::vector<int> online = OnlineCpus();
  events_.clear();
  refused_.clear();
  cpus_.clear();
  cpus_.reserve(online.size());
  for (int cpu : online) {
    Cpu& c = cpus_.emplace_back();
    c.cpu = cpu;
    c.memory.resize((lcpi_ht_mem_size(&table_config_) + sizeof(CacheLine) - 1) / sizeof(CacheLine));
    lcpi_ht_init(&c.table, &table_config_, c.memory.data(), static_cast<uint32_t>(cpu));
  }
  std::string pmu;  // looked up once an event is missing
  for (const EventSpec& spec : options_.events) {
    RealEvent ev;
    ev.requested = spec;
    ev.type = spec.type;
    ev.config = spec.config;
    ev.used = spec.name;
    ev.period = MeanPeriod(options_, spec.type);
    // the same event on every CPU: missing on any one, it is missing
    Expected<Rings> rings = OpenOnEveryCpu(ev);
    if (!rings && EventAbsent(rings.error())) {
      if (pmu.empty()) pmu = CpuPmuName();
      if (!spec.fallback_to_cpu_clock) {
        RefusedEvent r{spec, RefusalReason(spec, pmu, rings.error().message())};
        spdlog::error("{}", r.reason);
        refused_.push_back(std::move(r));
        continue;
      }
      spdlog::warn(
          "event '{}' is not available on this host ({}; PMU: {}): sampling cpu-clock "
          "instead",
          spec.name, rings.error().message(), pmu.empty() ? "none" : pmu);
      EventSpec clock = CpuClockEvent();
      ev.type = clock.type;
      ev.config = clock.config;
      ev.used = clock.name;
      ev.fell_back = true;
      ev.period = options_.period ? options_.period / kAssumedCyclesPerNs
                                  : MeanPeriod(options_, clock.type);
      if (ev.period == 0) ev.period = 1;
      rings = OpenOnEveryCpu(ev);
    }
    if (!rings) {
      cpus_.clear();
      return rings.error();
    }
    events_.push_back(ev);
    for (size_t k = 0; k < cpus_.size(); k++) cpus_[k].rings.push_back(std::move((*rings)[k]));
  }
  if (events_.empty()) {
    cpus_.clear();
    std::string why;
    for (const RefusedEvent& r : refused_) why += (why.empty() ? "" : "; ") + r.reason;
    return Error(Errc::kUnsupported, "no event can be sampled: " + why);
  }
  mean_periods_.clear();
  for (const RealEvent& ev : events_) mean_periods_.push_back(ev.period);
  if (options_.stack_frequency) stack_rings_.Open(online, options_.stack_frequency);
  pollfds_.clear();
  for (Cpu& c : cpus_)
    for (auto& r : c.rings) pollfds_.push_back({r->fd(), POLLIN, 0});
  for (int fd : stack_rings_.PollFds()) pollfds_.push_back({fd, POLLIN, 0});
  for (Cpu& c : cpus_)
    for (auto& r : c.rings)
      if (Expected<void> e = r->Enable(); !e) return e;
  if (Expected<void> e = stack_rings_.Enable(); !e) return e;
  running_ = true;
  return {};
}

void PerfSource::Stop() {
  if (!running_) return;
  for (Cpu& c : cpus_)
    for (auto& r : c.rings) r->Disable();
  stack_rings_.Disable();
  running_ = false;
}

void PerfSource::DeliverReady(Cpu& c, const BufferSink& sink) {
  for (int idx; (idx = lcpi_ht_ready(&c.table)) >= 0;) {
    const lcpi_ht_buffer& b = c.table.buf[idx];
    RecordBuffer out;
    out.header = b.hdr;
    out.records.assign(b.records, b.records + b.hdr.nr_records);
    lcpi_ht_release(&c.table, idx);
    buffers_++;
    sink(std::move(out));
  }
}

void PerfSource::ReadRings(Cpu& c, const BufferSink& sink) {
  for (size_t e = 0; e < c.rings.size(); e++) {
    const auto event = static_cast<uint32_t>(e);
    c.rings[e]->Read([&](const perf_event_header& hdr, const uint8_t* body) {
      size_t len = hdr.size - sizeof(hdr);
      if (hdr.type == PERF_RECORD_SAMPLE && len >= 24) {
        Sample& s = batch_.emplace_back();
        std::memcpy(&s.ip, body, 8);
        std::memcpy(&s.pid, body + 8, 4);
        std::memcpy(&s.time, body + 16, 8);
        uint16_t mode = hdr.misc & PERF_RECORD_MISC_CPUMODE_MASK;
        s.flags = (mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL)
                      ? LCPI_RECORD_KERNEL
                      : 0;
        // The table was cold since the last poll: its set is fetched now and
        // probed when the batch is added, not waited for sample by sample.
        uint64_t set = lcpi_ht_hash(&c.table, s.pid, s.ip, event);
        __builtin_prefetch(&c.table.entries[set * c.table.cfg.ways], 1);
        if (batch_.size() == kBatch) AddBatch(c, event, sink);
      } else if (hdr.type == PERF_RECORD_LOST && len >= 16) {
        uint64_t lost;
        std::memcpy(&lost, body + 8, 8);
        lost_ += lost;
      } else if (hdr.type == PERF_RECORD_THROTTLE) {
        throttled_++;
      }
    });
    AddBatch(c, event, sink);
  }
}

void PerfSource::AddBatch(Cpu& c, uint32_t event, const BufferSink& sink) {
  for (const Sample& s : batch_) {
    int wake = 0;
    if (s.time > c.last_time) c.last_time = s.time;
    lcpi_ht_add(&c.table, s.pid, s.ip, event, s.flags, s.time, &wake);
    if (wake) DeliverReady(c, sink);
  }
  batch_.clear();
}

Expected<std::vector<uint64_t>> PerfSource::SetMeanPeriods(const std::vector<uint64_t>& periods) {
  if (periods.size() != events_.size())
    return Error(Errc::kInvalidArgument, "one period per event is needed");
  for (uint64_t p : periods)
    if (p == 0) return Error(Errc::kInvalidArgument, "a period of 0");
  mean_periods_ = periods;
  if (options_.frequency && !options_.period) {
    // perf adjusts the period itself to a frequency: PERF_EVENT_IOC_PERIOD
    // sets that frequency on an event opened with attr.freq.
    for (size_t e = 0; e < events_.size(); e++) {
      const double stretch = static_cast<double>(periods[e]) / events_[e].period;
      const auto freq = std::max<uint64_t>(1, static_cast<uint64_t>(options_.frequency / stretch));
      for (Cpu& c : cpus_)
        if (Expected<void> r = c.rings[e]->SetPeriod(freq); !r) return r.error();
    }
    return mean_periods_;
  }
  RandomisePeriods();
  next_jitter_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  return mean_periods_;
}

void PerfSource::RandomisePeriods() {
  if (options_.frequency && !options_.period) return;  // perf adjusts the period itself
  for (size_t e = 0; e < events_.size(); e++) {
    uint64_t mean = e < mean_periods_.size() ? mean_periods_[e] : events_[e].period;
    uint64_t spread = mean * options_.jitter_pct / 100;
    for (Cpu& c : cpus_) {
      uint64_t p = mean;
      if (spread) p = mean - spread + rng_() % (2 * spread + 1);
      c.rings[e]->SetPeriod(p ? p : 1);
    }
  }
}

Expected<void> PerfSource::Poll(int timeout_ms, const BufferSink& sink) {
  if (poll(pollfds_.data(), pollfds_.size(), timeout_ms) < 0 && errno != EINTR)
    return ErrnoError("poll on perf rings", errno);
  // Every ring, ready or not: the table aggregates what is in them now, and
  // a ring's reader wakes only at a quarter full (a second's samples) -
  // looking into an empty one costs two loads.
  for (Cpu& c : cpus_) ReadRings(c, sink);
  stack_rings_.Read(sink);
  // A new random period once a second: each change is an IPI to every CPU.
  auto now = std::chrono::steady_clock::now();
  if (running_ && now >= next_jitter_) {
    RandomisePeriods();
    next_jitter_ = now + std::chrono::seconds(1);
  }
  return {};
}

std::vector<int> PerfSource::PollFds() const {
  std::vector<int> fds;
  for (const pollfd& p : pollfds_) fds.push_back(p.fd);
  return fds;
}

Expected<void> PerfSource::Flush(const BufferSink& sink) {
  for (Cpu& c : cpus_) {
    ReadRings(c, sink);
    int wake = 0;
    // Single-threaded: delivering releases the buffers, so each retry makes room.
    // The window ends at the last sample taken: every record is older.
    while (lcpi_ht_flush(&c.table, c.last_time, &wake) != 0) DeliverReady(c, sink);
    DeliverReady(c, sink);
  }
  stack_rings_.Read(sink);
  return {};
}

SourceStats PerfSource::Stats() const {
  SourceStats s;
  for (const Cpu& c : cpus_) {
    AddTableStats(s.table, c.table.stats);
    for (const auto& ring : c.rings) s.bad_records += ring->bad_records();
    for (size_t e = 0; e < c.rings.size() && e < LCPI_MAX_EVENTS; ++e) {
      // A failed read leaves this CPU out of both times: the ratio stays true.
      Expected<std::pair<uint64_t, uint64_t>> t = c.rings[e]->ReadTimes();
      if (!t) continue;
      s.time_enabled[e] += t->first;
      s.time_running[e] += t->second;
    }
  }
  s.lost = lost_;
  s.throttled = throttled_;
  s.buffers = buffers_;
  stack_rings_.FillStats(&s);
  for (const Cpu& c : cpus_) s.as_of_ns = std::max(s.as_of_ns, c.last_time);  // the newest read
  return s;
}

}  // namespace lcpi
