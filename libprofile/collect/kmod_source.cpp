// kmod_source.cpp - KmodSource over /dev/lcpi and the check of each buffer it
// reads (ParseKmodBuffer). Every field of a buffer comes from the kernel and
// is checked against the bytes read before anything indexes with it.
#include "libprofile/collect/kmod_source.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "libprofile/base/clock_ns.h"
#include "libprofile/collect/event_spec.h"
#include "libprofile/collect/perf_source.h"  // MeanPeriod: the same rates as the perf source

namespace lcpi {

namespace {

Error Corrupt(const std::string& what) { return Error(Errc::kCorrupt, "lcpi buffer: " + what); }

// START's errno when the PMU lacks an event (and it may not fall back).
bool EventAbsent(int err) { return err == ENOENT || err == EOPNOTSUPP; }

// The module's floor for an event's mean period (lcpi_abi.h).
uint64_t MinPeriod(uint32_t type, uint64_t config) {
  bool clock = type == PERF_TYPE_SOFTWARE &&
               (config == PERF_COUNT_SW_CPU_CLOCK || config == PERF_COUNT_SW_TASK_CLOCK);
  return clock ? LCPI_MIN_PERIOD_CLOCK_NS : LCPI_MIN_PERIOD_EVENTS;
}
uint64_t MinPeriod(const EventSpec& spec) { return MinPeriod(spec.type, spec.config); }

}  // namespace

int GetKmodCpuStats(const StatsIoctl& stats_ioctl, uint32_t cpu, lcpi_cpu_stats* st) {
  // newest first; each number carries its size (lcpi_abi.h)
  static constexpr unsigned long kRequests[] = {LCPI_IOC_GET_STATS, LCPI_IOC_GET_STATS_VER3,
                                                LCPI_IOC_GET_STATS_VER2, LCPI_IOC_GET_STATS_VER1};
  int err = ENOTTY;
  for (unsigned long request : kRequests) {
    *st = lcpi_cpu_stats{};
    st->size = static_cast<uint32_t>(_IOC_SIZE(request));
    st->cpu = cpu;
    err = stats_ioctl(request, st);
    if (err == 0) return static_cast<int>(st->size);
    if (err != ENOTTY) break;  // the module knows this number: the answer is its own
  }
  *st = lcpi_cpu_stats{};
  return -err;
}

Expected<RecordBuffer> ParseKmodBuffer(const uint8_t* data, size_t len, uint32_t nr_cpus) {
  RecordBuffer out;
  lcpi_buffer_header& h = out.header;
  if (data == nullptr || len < sizeof(h))
    return Corrupt("truncated header (" + std::to_string(len) + " bytes)");
  std::memcpy(&h, data, sizeof(h));
  if (h.magic != LCPI_BUFFER_MAGIC) return Corrupt("bad magic");
  if (h.version != LCPI_ABI_VERSION)
    return Corrupt("version " + std::to_string(h.version) + ", expected " +
                   std::to_string(LCPI_ABI_VERSION));
  if (h.header_size != sizeof(h)) return Corrupt("header_size " + std::to_string(h.header_size));
  if (h.cpu >= nr_cpus)
    return Corrupt("cpu " + std::to_string(h.cpu) + " >= " + std::to_string(nr_cpus));
  uint64_t want = static_cast<uint64_t>(h.nr_records) * sizeof(lcpi_record) + h.header_size;
  if (want != len)
    return Corrupt(std::to_string(h.nr_records) + " records do not fill " + std::to_string(len) +
                   " bytes");
  if (h.t_first > h.t_last) return Corrupt("time window ends before it starts");
  out.records.resize(h.nr_records);
  if (h.nr_records)
    std::memcpy(out.records.data(), data + h.header_size, h.nr_records * sizeof(lcpi_record));
  for (const lcpi_record& r : out.records) {
    if (r.count == 0) return Corrupt("record with count 0");
    if (r.event >= LCPI_MAX_EVENTS) return Corrupt("record event " + std::to_string(r.event));
    if (r.flags & ~LCPI_RECORD_KERNEL) return Corrupt("record flags " + std::to_string(r.flags));
  }
  return out;
}

KmodSource::KmodSource(SourceOptions options, std::string device)
    : options_(std::move(options)), device_(std::move(device)) {}

KmodSource::~KmodSource() {
  if (fd_ >= 0) close(fd_);  // the module stops sampling on release
}

Expected<lcpi_info> KmodSource::GetInfo() const {
  lcpi_info info{};
  info.size = sizeof(info);
  if (ioctl(fd_, LCPI_IOC_GET_INFO, &info) != 0) return ErrnoError(device_ + ": GET_INFO", errno);
  return info;
}

Expected<void> KmodSource::Open() {
  if (fd_ >= 0) return {};
  int fd = open(device_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENODEV || err == ENXIO)
      return Error(Errc::kUnsupported, device_ + ": no lcpi module (load lcpi.ko)");
    if (err == EBUSY) return Error(Errc::kBusy, device_ + ": another reader has it open");
    return ErrnoError(device_, err);
  }
  fd_ = fd;
  uint32_t version = 0;
  if (ioctl(fd_, LCPI_IOC_GET_VERSION, &version) != 0 || version != LCPI_ABI_VERSION) {
    close(fd_);
    fd_ = -1;
    return Error(Errc::kUnsupported, device_ + ": module ABI version " + std::to_string(version) +
                                         ", this lcpi speaks " + std::to_string(LCPI_ABI_VERSION));
  }
  Expected<lcpi_info> info = GetInfo();
  if (info && (info->sizeof_record != sizeof(lcpi_record) ||
               info->sizeof_buffer_header != sizeof(lcpi_buffer_header) ||
               info->sizeof_cpu_stats != sizeof(lcpi_cpu_stats) ||
               info->sizeof_config != sizeof(lcpi_config) ||
               info->buffer_bytes < sizeof(lcpi_buffer_header) || info->nr_cpus == 0))
    info = Error(Errc::kUnsupported, device_ + ": module's ABI structs differ from ours");
  if (!info) {
    close(fd_);
    fd_ = -1;
    return info.error();
  }
  info_ = *info;
  buffer_.assign(info_.buffer_bytes, 0);
  return {};
}

Expected<void> KmodSource::Configure(const std::vector<size_t>& which, bool probe) {
  lcpi_config cfg{};
  cfg.size = sizeof(cfg);
  cfg.nr_events = static_cast<uint32_t>(which.size());
  for (size_t k = 0; k < which.size(); k++) {
    const EventSpec& spec = options_.events[which[k]];
    lcpi_event_config& ev = cfg.events[k];
    ev.type = spec.type;
    ev.config = spec.config;
    ev.flags = spec.fallback_to_cpu_clock ? LCPI_EVENT_FALLBACK_CPU_CLOCK : 0;
    ev.period = MeanPeriod(options_, spec.type);
    if (ev.period < MinPeriod(spec)) {
      if (!probe)
        spdlog::warn("event '{}': period {} is below the module's floor, using {}", spec.name,
                     ev.period, MinPeriod(spec));
      ev.period = MinPeriod(spec);
    }
    ev.jitter_pct = std::min<uint32_t>(options_.jitter_pct, 50);
    if (probe) {
      ev.period = (1ull << 62) - 1;  // the longest the module takes: no sample comes
      ev.jitter_pct = 0;
    }
  }
  if (ioctl(fd_, LCPI_IOC_SET_CONFIG, &cfg) != 0) {
    int err = errno;
    if (err == EBUSY) return Error(Errc::kBusy, device_ + ": already sampling");
    return ErrnoError(device_ + ": SET_CONFIG", err);
  }
  return {};
}

Expected<void> KmodSource::RefuseAbsent(std::vector<size_t>* which) {
  std::vector<size_t> keep;
  std::string pmu = CpuPmuName();
  for (size_t i : *which) {
    if (Expected<void> r = Configure({i}, true); !r) return r;
    if (ioctl(fd_, LCPI_IOC_START, 0) == 0) {
      ioctl(fd_, LCPI_IOC_STOP, 0);
      keep.push_back(i);
      continue;
    }
    int err = errno;
    if (!EventAbsent(err)) return ErrnoError(device_ + ": START " + options_.events[i].name, err);
    RefusedEvent r{options_.events[i], RefusalReason(options_.events[i], pmu,
                                                     device_ + " START: " + std::strerror(err))};
    spdlog::error("{}", r.reason);
    refused_.push_back(std::move(r));
  }
  *which = std::move(keep);
  return {};
}

Expected<void> KmodSource::Start() {
  if (running_) return {};
  if (options_.events.empty() || options_.events.size() > LCPI_MAX_EVENTS)
    return Error(Errc::kInvalidArgument,
                 "kmod source: 1.." + std::to_string(LCPI_MAX_EVENTS) + " events");
  if (Expected<void> r = Open(); !r) return r;
  pollfds_.assign(1, {fd_, POLLIN, 0});

  std::vector<size_t> which;  // the requested events sampled, in order
  for (size_t i = 0; i < options_.events.size(); i++) which.push_back(i);
  refused_.clear();
  if (Expected<void> r = Configure(which, false); !r) return r;
  if (!started_once_) baseline_ = ModuleStats();
  started_once_ = true;
  if (ioctl(fd_, LCPI_IOC_START, 0) != 0) {
    int err = errno;
    if (!EventAbsent(err)) return ErrnoError(device_ + ": START", err);
    // the PMU lacks an event that may not fall back: find which, run without
    if (Expected<void> r = RefuseAbsent(&which); !r) return r;
    if (which.empty()) {
      std::string why;
      for (const RefusedEvent& r : refused_) why += (why.empty() ? "" : "; ") + r.reason;
      return Error(Errc::kUnsupported, "no event can be sampled: " + why);
    }
    if (Expected<void> r = Configure(which, false); !r) return r;
    if (ioctl(fd_, LCPI_IOC_START, 0) != 0) return ErrnoError(device_ + ": START", errno);
  }
  Expected<lcpi_info> info = GetInfo();
  if (!info) {
    ioctl(fd_, LCPI_IOC_STOP, 0);
    return info.error();
  }
  info_ = *info;
  events_.clear();
  for (size_t k = 0; k < which.size(); k++) {
    const EventSpec& spec = options_.events[which[k]];
    const lcpi_event_config& real = info_.events[k];
    RealEvent ev;
    ev.requested = spec;
    ev.type = real.type;
    ev.config = real.config;
    ev.fell_back = real.type != spec.type || real.config != spec.config;
    ev.used = ev.fell_back ? PerfEventName(real.type, real.config) : spec.name;
    ev.period = real.period;
    ev.precise = info_.precise_ip[k];  // what the module opened it with
    ev.not_running = (real.flags & LCPI_EVENT_INFO_NOT_RUNNING) != 0;
    events_.push_back(ev);
  }
  if (options_.stack_frequency && !stacks_opened_) {
    stack_rings_.Open(OnlineCpus(), options_.stack_frequency);
    stacks_opened_ = true;
  }
  for (int fd : stack_rings_.PollFds()) pollfds_.push_back({fd, POLLIN, 0});
  // The flat profile does not depend on stacks: say so and go on.
  if (Expected<void> e = stack_rings_.Enable(); !e)
    spdlog::warn("call stacks: cannot start them: {}", e.error().message());
  running_ = true;
  return {};
}

Expected<std::vector<uint64_t>> KmodSource::SetMeanPeriods(const std::vector<uint64_t>& periods) {
  if (fd_ < 0 || !running_) return Error(Errc::kInvalidArgument, "kmod source: not sampling");
  if (periods.size() != events_.size())
    return Error(Errc::kInvalidArgument, "one period per event is needed");
  lcpi_periods p{};
  p.size = sizeof(p);
  p.nr_events = static_cast<uint32_t>(periods.size());
  for (size_t k = 0; k < periods.size(); k++) {
    // the floor of the event the module samples (a fallen-back cycles: cpu-clock, in ns)
    const uint64_t floor = MinPeriod(events_[k].type, events_[k].config);
    p.period[k] = std::clamp<uint64_t>(periods[k], floor, (1ull << 62) - 1);
  }
  if (ioctl(fd_, LCPI_IOC_SET_PERIODS, &p) != 0) {
    int err = errno;
    if (err == ENOTTY)
      return Error(Errc::kUnsupported,
                   device_ +
                       ": this lcpi.ko cannot change its period while it samples (it "
                       "predates SET_PERIODS): load the module lcpid was built with");
    return ErrnoError(device_ + ": SET_PERIODS", err);
  }
  return std::vector<uint64_t>(p.period, p.period + periods.size());
}

void KmodSource::Stop() {
  if (fd_ >= 0 && running_) ioctl(fd_, LCPI_IOC_STOP, 0);
  stack_rings_.Disable();
  running_ = false;
}

Expected<void> KmodSource::Drain(const BufferSink& sink, size_t* n) {
  for (;;) {
    ssize_t got = read(fd_, buffer_.data(), buffer_.size());
    if (got < 0) {
      if (errno == EAGAIN) return {};
      if (errno == EINTR) continue;
      return ErrnoError(device_ + ": read", errno);
    }
    Expected<RecordBuffer> buf =
        ParseKmodBuffer(buffer_.data(), static_cast<size_t>(got), info_.nr_cpus);
    if (!buf) return buf.error();
    for (const lcpi_record& r : buf->records)
      if (r.event >= std::max<size_t>(events_.size(), 1))
        return Corrupt("record event " + std::to_string(r.event) + " not configured");
    ++buffers_;
    ++*n;
    sink(std::move(*buf));
  }
}

std::vector<int> KmodSource::PollFds() const {
  std::vector<int> fds;
  for (const pollfd& p : pollfds_) fds.push_back(p.fd);
  return fds;
}

Expected<void> KmodSource::Poll(int timeout_ms, const BufferSink& sink) {
  if (fd_ < 0) return Error(Errc::kInvalidArgument, "kmod source: not started");
  int rc = poll(pollfds_.data(), pollfds_.size(), timeout_ms);
  if (rc < 0 && errno != EINTR) return ErrnoError(device_ + ": poll", errno);
  stack_rings_.Read(sink);
  size_t n = 0;
  return Drain(sink, &n);
}

Expected<void> KmodSource::Flush(const BufferSink& sink) {
  if (fd_ < 0) return Error(Errc::kInvalidArgument, "kmod source: not started");
  // Each round empties the tables until the buffers fill (-EAGAIN); then
  // draining frees them for the next round.
  for (int round = 0;; round++) {
    int rc = ioctl(fd_, LCPI_IOC_FLUSH, 0);
    int err = errno;
    size_t n = 0;
    if (Expected<void> r = Drain(sink, &n); !r) return r;
    if (rc == 0) {
      stack_rings_.Read(sink);
      return {};
    }
    if (err != EAGAIN) return ErrnoError(device_ + ": FLUSH", err);
    if (n == 0 && round > 1000) return Error(Errc::kBusy, device_ + ": flush makes no progress");
  }
}

// The module counts from load; a source reports from its own start.
SourceStats KmodSource::Stats() const {
  SourceStats out = ModuleStats() - baseline_;
  out.buffers = buffers_;  // counted here, not by the module
  // The module counts each sample as it is taken: its counts are as of now.
  out.as_of_ns = ClockNs(CLOCK_MONOTONIC);
  stack_rings_.FillStats(&out);
  return out;
}

SourceStats KmodSource::ModuleStats() const {
  SourceStats out;
  if (fd_ < 0) return out;
  for (uint32_t cpu = 0; cpu < info_.nr_cpus; cpu++) {
    lcpi_cpu_stats st{};
    int fd = fd_;
    int size =
        GetKmodCpuStats([fd](unsigned long request,
                             lcpi_cpu_stats* s) { return ioctl(fd, request, s) == 0 ? 0 : errno; },
                        cpu, &st);
    if (size == -ENOTTY && stats_size_.exchange(size) != -ENOTTY) {
      spdlog::warn(
          "kmod: the module answers no GET_STATS request this lcpid knows: its statistics read 0");
    }
    if (size < 0) continue;  // EINVAL: not a possible CPU
    if (stats_size_.exchange(size) != size) {
      if (size != static_cast<int>(sizeof(st)))
        spdlog::info(
            "kmod: an older lcpi.ko answers GET_STATS only as its {}-byte version (this lcpid "
            "asks {}): the statistics it lacks (throttle_events, nmi_samples, "
            "throttled_lost_estimate by age) read 0",
            size, sizeof(st));
    }
    AddTableStats(out.table, st.table);
    out.nested += st.nested;
    out.throttled += st.throttle_events;
    out.throttled_lost_estimate += st.throttled_lost_estimate;
    out.nmi_samples += st.nmi_samples;
    out.handler_ns_hit += st.handler_ns_hit;
    out.handler_ns_miss += st.handler_ns_miss;
    // perf_event_read_value() of each CPU's events (lcpi_sample_times).
    for (size_t e = 0; e < LCPI_MAX_EVENTS; ++e) {
      out.time_enabled[e] += st.time_enabled[e];
      out.time_running[e] += st.time_running[e];
    }
  }
  return out;
}

}  // namespace lcpi
