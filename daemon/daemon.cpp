// daemon.cpp - lcpid's loop, flushing, epochs and status.
#include "daemon/daemon.h"

#include <linux/perf_event.h>
#include <malloc.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <ctime>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "lcpi_hashtable.h"
#include "libprofile/aggregate/held_batch.h"
#include "libprofile/base/saturating.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/budget/budget_status.h"
#include "libprofile/budget/self_cpu.h"
#include "libprofile/collect/kmod_source.h"
#include "libprofile/collect/perf_source.h"
#include "libprofile/image/image_cache.h"
#include "libprofile/image/image_id.h"

namespace lcpi {
namespace {

// The loop's longest wait for the drain thread: it also serves the control
// socket and signals between waits.
constexpr auto kPoll = std::chrono::milliseconds(100);
constexpr auto kRetryAfterFailure = std::chrono::seconds(10);
constexpr auto kFlushBusyTimeout = std::chrono::milliseconds(250);
// How long a requested flush (lcpictl flush/epoch, shutdown) waits for the
// lookups under way, so that what was sampled before it is named in it; a
// lookup still running then (a file on a hung mount) goes on, and its
// image's counts go into a later batch.
constexpr auto kLookupWait = std::chrono::seconds(2);
// How long status waits for the drain thread's fresh statistics.
constexpr auto kStatsWait = std::chrono::milliseconds(500);

uint64_t RssBytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t CpuNs() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto ns = [](const timeval& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + t.tv_usec * 1000ull;
  };
  return ns(ru.ru_utime) + ns(ru.ru_stime);
}

lcpi_ht_config DefaultTableConfig() {
  return lcpi_ht_config{LCPI_HT_DEFAULT_WAYS, LCPI_HT_DEFAULT_SET_BITS, LCPI_POLICY_ROUND_ROBIN,
                        LCPI_HASH_MULTIPLY, LCPI_HT_DEFAULT_BUFFER_RECORDS};
}

// The drain statistics that go into the database, as deltas since the last
// merge; held_change: samples taken whose counts wait for a later batch
// (Aggregator::TakenBatch), less those that waited and come now.
void AddSourceDeltas(MergeBatch& batch, const DrainStats& now_all, const DrainStats& before_all,
                     int64_t held_change) {
  SourceStats d = now_all.source - before_all.source;
  // Samples the drain thread dropped on a full queue (the loop fell behind)
  // are lost; the drops their buffers' headers reported are still drops.
  const uint64_t queue_lost = now_all.queue_dropped_samples - before_all.queue_dropped_samples;
  const uint64_t queue_table_drops =
      now_all.queue_dropped_table_drops - before_all.queue_dropped_table_drops;
  auto add = [&](const char* name, uint64_t delta) {
    if (delta) batch.stats.emplace_back(name, static_cast<int64_t>(delta));
  };
  const int64_t samples = static_cast<int64_t>(d.table.samples + d.lost + d.nested) - held_change;
  if (samples) batch.stats.emplace_back("samples", samples);
  add("hits", d.table.hits);
  add("misses", d.table.misses);
  add("evictions", d.table.evictions);
  add("lost", d.lost + d.nested + queue_lost);
  add("queue_dropped", queue_lost);
  add("dropped", queue_table_drops);
  // Times perf's core throttled an event (each stops it until the next tick):
  // events, not a number of samples missed, which nobody counts.
  add("throttle_events", d.throttled);
  // kmod: the samples those throttles cost, estimated (not in "lost", which
  // counts exactly)
  add("throttled_lost_estimate", d.throttled_lost_estimate);
  add("bad_records", d.bad_records);
  add("queue_dropped_stacks", now_all.queue_dropped_stacks - before_all.queue_dropped_stacks);
  add("stacks_lost", d.stacks_lost);
  // Each event's time enabled and running since the last merge (batch.events
  // is in the source's event order): the reports' multiplex scale.
  for (size_t e = 0; e < batch.events.size() && e < LCPI_MAX_EVENTS; ++e) {
    batch.events[e].time_enabled = d.time_enabled[e];
    batch.events[e].time_running = d.time_running[e];
  }
}

// glibc keeps freed heap for the next allocation instead of returning it.
// lcpid's big allocations are transient (parsing kallsyms, the /proc scan,
// a flush's batch, the kernel's symbols the first time): without this its
// RSS stays at their peak for as long as it runs.
void ReturnFreedMemory() { malloc_trim(0); }

}  // namespace

Daemon::Daemon(DaemonOptions options) : options_(std::move(options)) {}

Daemon::~Daemon() {
  if (signal_fd_ >= 0) close(signal_fd_);
}

Expected<std::unique_ptr<Source>> Daemon::MakeSource() {
  SourceOptions so;
  so.events = options_.events;
  so.period = options_.period;
  so.frequency = options_.frequency;
  so.jitter_pct = options_.jitter_pct;
  so.stack_frequency = options_.stack_frequency;
  std::string kind = options_.source;
  if (kind == "auto") kind = access(LCPI_DEVICE_PATH, F_OK) == 0 ? "kmod" : "perf";
  if (kind == "kmod") return std::unique_ptr<Source>(new KmodSource(so));
  return std::unique_ptr<Source>(new PerfSource(so, DefaultTableConfig()));
}

Expected<void> Daemon::Start() {
  started_ = Clock::now();
  const int64_t started_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(started_.time_since_epoch()).count();
  cost_meter_.emplace(sysconf(_SC_NPROCESSORS_ONLN), static_cast<uint64_t>(started_ns));
  stack_reserve_.emplace(static_cast<double>(options_.stack_frequency), started_ns);
  if (Expected<ImageIdentity> self = IdentifySelf()) {
    self_image_ = self->identity;
  } else {
    spdlog::warn(
        "cannot identify lcpid's own executable ({}): its code is not on the "
        "[lcpi: observer] line",
        self.error().message());
  }
  // Before any thread starts: every thread inherits the mask, and the
  // signals reach this loop through the signalfd only (quiet_thread.h).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) return ErrnoError("signalfd", errno);
  access_ = ResolveStateAccess(options_.group);
  if (!access_.group_found) {
    spdlog::warn("group '{}' not found: the database is readable by root only", options_.group);
  }
  if (Expected<void> e = PrepareStateFiles(options_.db, access_); !e) return e;
  Expected<std::unique_ptr<ProfileDb>> db = ProfileDb::Open(options_.db, DbMode::kReadWrite);
  if (!db) return db.error();
  db_ = std::move(*db);
  // A locked database fails a flush quickly (it is retried): waiting longer
  // would stall this loop while the kernel's rings fill and lose samples.
  db_->SetBusyTimeout(kFlushBusyTimeout);
  Expected<int64_t> epoch = db_->CurrentEpoch();
  if (!epoch) return epoch.error();
  epoch_ = *epoch;
  // A window left open by an earlier run ends here: the new samples are not
  // the old window's, however long the daemon was down.
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  Expected<std::vector<EpochInfo>> epochs = db_->ListEpochs();
  if (!epochs) return epochs.error();
  if (!epochs->empty() && epochs->back().started < WindowEnd(now) - options_.window) {
    Expected<int64_t> window = db_->NewEpoch(std::nullopt, EpochKind::kWindow, now);
    if (!window) return window.error();
    epoch_ = *window;
  }
  window_end_ = WindowEnd(now);
  // Retention shrinks the file only with incremental vacuum; a database made
  // before it needs one full VACUUM to switch.
  if (Expected<bool> on = db_->IncrementalVacuumOn(); on && !*on) {
    spdlog::warn("{}: switching to incremental vacuum (one VACUUM, rewrites the file)",
                 options_.db);
    if (Expected<void> e = db_->EnableIncrementalVacuum(); !e)
      spdlog::warn("cannot switch: dropped windows' space stays in the file: {}",
                   e.error().message());
  }
  ApplyRetention();
  ReadRetentionDropped();  // an earlier run's drops count too

  if (options_.image_cache_mb > 0) {
    // Readable by whoever may read the database: the same modes and group.
    ImageCacheConfig cache{ImageCacheDir(options_.db), options_.image_cache_mb << 20,
                           access_.file_mode, access_.dir_mode, std::nullopt};
    if (access_.group_found) cache.group = access_.gid;
    image_cache_ = std::make_unique<ImageCacheWriter>(cache);
    if (Expected<void> e = image_cache_->Start(); e) {
      images_.SetCache(image_cache_.get());
    } else {
      spdlog::warn("no image cache: {}", e.error().message());
      image_cache_.reset();
    }
  }

  Expected<KernelSymbols> kernel = KernelSymbols::Load();
  if (kernel) {
    kernel_ = std::move(*kernel);
  } else {
    spdlog::warn("kernel symbols unavailable ({}): kernel samples go to one [kernel] image",
                 kernel.error().message());
  }
  // Whatever may block while naming code runs on the lookups' thread.
  lookups_ = std::make_unique<LookupWorker>();
  images_.SetLookups(lookups_.get());
  aggregator_ = std::make_unique<Aggregator>(images_, tracker_, kernel_ ? &*kernel_ : nullptr,
                                             &jit_, &kernel_reload_);
  aggregator_->SetLookups(lookups_.get());
  aggregator_->set_max_processes(options_.max_processes);
  aggregator_->set_max_stacks(options_.max_stacks);
  // User stacks taken without frame pointers are unwound through the
  // images' tables, read from the image cache's copies.
  unwind_tables_ = std::make_unique<UnwindTables>(options_.image_cache_mb ? options_.db : "");
  unwinds_ = std::make_unique<LookupWorker>(Aggregator::UnwindWorkerLimits());
  aggregator_->SetUnwinder(unwind_tables_.get(), unwinds_.get());

  // Side-band first, then the /proc scan: a process started in between is
  // seen by both, never by neither.
  sideband_ = std::make_unique<Sideband>(tracker_, images_);
  sideband_->set_jit(&jit_);
  cgroups_.set_lookups(lookups_.get());
  sideband_->set_cgroups(&cgroups_);
  if (Expected<void> e = sideband_->Start(); !e) return e;
  size_t procs = ScanProc(tracker_, images_, &jit_, "/proc", &cgroups_);
  ReturnFreedMemory();

  Expected<std::unique_ptr<Source>> source = MakeSource();
  if (!source) return source.error();
  source_ = std::move(*source);
  if (Expected<void> e = source_->Start(); !e) return e;
  for (const RealEvent& ev : source_->Events())
    spdlog::info("event {}: sampling {} every {} (mean){}", ev.requested.name, ev.used, ev.period,
                 ev.fell_back ? ", fallback: the PMU lacks it" : "");
  {
    // The rate asked of every event together: each sample costs alike.
    double asked = 0;
    std::vector<uint64_t> periods;
    for (const RealEvent& ev : source_->Events()) {
      asked += options_.frequency && !options_.period ? static_cast<double>(options_.frequency)
                                                      : NominalSampleRate(ev.type, ev.period);
      periods.push_back(ev.period);
    }
    governor_.emplace(options_.max_overhead_pct, asked, std::move(periods));
    if (options_.sample_cost_ns > 0) governor_->SetKnownCost(options_.sample_cost_ns);
  }
  HoldBack();  // the unwinding's CPU allowance from the first stack on

  if (Expected<void> e = control_.Listen(options_.socket); !e) return e;

  writer_ = std::make_unique<MergeWriter>(*db_);
  // The rings are read from here on by the drain thread alone.
  drainer_ = std::make_unique<Drainer>(*source_, *sideband_);
  if (Expected<void> e = drainer_->Start(); !e) return e;
  next_flush_ = Clock::now() + std::chrono::seconds(options_.flush_interval);
  if (options_.calibrate_every > 0) {
    StartCalibration();
    next_periodic_calibration_ = Clock::now() + std::chrono::seconds(options_.calibrate_every);
  }
  spdlog::info("lcpid: source {}, {} processes found, epoch {}, database {}", source_->Name(),
               procs, epoch_, options_.db);
  return {};
}

bool Daemon::StartCalibration() {
  // A finished result not yet offered (TakeCalibration) would be replaced
  // by the new run's: it is taken first, at the loop's next turn.
  const CalibratorState s = calibrator_.State();
  if (!s.running && s.runs != calibrations_seen_) return false;
  CalibrationConfig c;
  if (!source_->Events().empty()) {
    c.type = source_->Events()[0].type;
    c.config = source_->Events()[0].config;
  }
  // The loop's samples come on top of lcpid's own; perf refuses an event
  // asking more than kernel.perf_event_max_sample_rate.
  const uint64_t top = std::min<uint64_t>(10000, MaxSampleRate(100000));
  c.rates = {0, top / 2, top};
  return calibrator_.Start(c);
}

void Daemon::TakeCalibration() {
  const CalibratorState c = calibrator_.State();
  if (c.running || c.runs == calibrations_seen_) return;
  const uint64_t failures_before = calibrations_seen_ ? last_failures_ : 0;
  // The calibrations' share of each CPU (those of the last
  // --calibrate-every, tries again included), held back from the budget.
  reserve_.Add(NowNs(), c.cpu_ns - calibration_cpu_seen_, c.runs - calibrations_seen_);
  HoldBack();
  calibrations_seen_ = c.runs;
  calibration_cpu_seen_ = c.cpu_ns;
  const bool failed = c.failures != failures_before;
  last_failures_ = c.failures;
  if (options_.sample_cost_ns > 0) return;  // the operator's figure is held
  const bool was_confirming = confirming_;
  confirming_ = false;
  next_retry_calibration_ = Clock::time_point::max();  // this result decides the next try
  if (failed || !c.last) {
    // one that could not run settles nothing either
    FollowUp(
        retry_.AfterOffer(RateGovernor::Offered::kRefused, was_confirming, CalibrationWanted()));
    return;
  }
  const uint64_t pooled_before = governor_->pooled(), pool = governor_->pool_size();
  const RateGovernor::Offered v = governor_->Offer(c.last->fit.slope, c.last->fit.half95);
  if (governor_->pooled() != pooled_before)
    spdlog::info(
        "calibration: {} refused ones pooled, {:.0f} ns +- {:.0f} a sample: offered as one",
        pool + 1, governor_->interrupt_ns(), governor_->interrupt_half95_ns());
  if (v == RateGovernor::Offered::kRefused) {
    spdlog::warn(
        "calibration refused: {:.0f} ns +- {:.0f} a sample, an interval over {:.0f} % of it;"
        " the governor keeps {:.0f} ns",
        c.last->fit.slope, c.last->fit.half95, 100 * governor_->steps().max_relative_half95,
        governor_->interrupt_ns());
    // A noisy moment must not leave the rate without an estimate, or held
    // up by an unconfirmed one, until the next hourly calibration.
    const bool wanted = CalibrationWanted();
    const CalibrationRetry::Next next = retry_.AfterOffer(v, was_confirming, wanted);
    if (next.after_s != 0 && wanted && governor_->TakeLowerBound()) {
      spdlog::warn(
          "no calibration accepted: the governor takes {:.0f} ns, the lower end of the {} "
          "refused ones pooled, unconfirmed",
          governor_->interrupt_ns(), governor_->pool_size());
      govern_early_ = true;
      HoldBack();  // the stacks' interrupts at that estimate
    }
    FollowUp(next);
    return;
  }
  govern_early_ = true;  // a new estimate: its rate from the next window on
  HoldBack();            // the stacks' interrupts at the new estimate
  // A step over x2 waits for a second calibration that agrees; one that
  // disagreed must not hold the rate a step short of the budget until the
  // next hourly calibration (5.9 % of a 1 % budget, once, on a loaded host).
  FollowUp(retry_.AfterOffer(v, was_confirming, governor_->awaits_confirmation()));
}

bool Daemon::CalibrationWanted() const {
  return options_.sample_cost_ns <= 0 && governor_->budget_pct() > 0 &&
         (governor_->interrupt_ns() <= 0 || governor_->awaits_confirmation());
}

void Daemon::FollowUp(const CalibrationRetry::Next& next) {
  if (next.after_s == 0 && StartCalibration()) {
    confirming_ = next.confirming;
    if (next.confirming) confirming_started_++;
    return;
  }
  if (next.after_s <= 0) return;
  next_retry_calibration_ = Clock::now() + std::chrono::seconds(next.after_s);
  spdlog::warn("calibration: none settled the estimate lately; trying again in {} s", next.after_s);
}

void Daemon::StartDueCalibration() {
  const Clock::time_point now = Clock::now();
  const bool periodic = now >= next_periodic_calibration_;
  if (!periodic && now < next_retry_calibration_) return;
  // one still running is left to finish (its result decides); a result
  // not yet taken is taken first, and this tried again at the next turn
  if (!StartCalibration() && !calibrator_.State().running) return;
  next_retry_calibration_ = Clock::time_point::max();
  if (periodic) {
    next_periodic_calibration_ = now + std::chrono::seconds(options_.calibrate_every);
    retry_.Settled();  // a new chain of tries: at once again, not an hour's wait
  }
}

int64_t Daemon::NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

void Daemon::HoldBack() {
  const long cpus = cpus_online_.online();
  // (no CPUs known: counted as one)
  aggregator_->set_unwind_cpu_allowance(
      StackReserve::UnwindAllowanceNsPerS(governor_->budget_pct(), cpus));
  if (cpus <= 0) return;
  calibration_reserved_pct_ = reserve_.Pct(NowNs(), cpus);
  stacks_cost_pct_ = stack_reserve_->CostPct(governor_->interrupt_ns(), cpus);
  stacks_reserved_pct_ =
      stack_reserve_->HeldPct(governor_->interrupt_ns(), cpus, governor_->budget_pct());
  governor_->set_reserved_pct(calibration_reserved_pct_ + stacks_reserved_pct_);
}

void Daemon::WatchCpusOnline() {
  if (!cpus_online_.Changed()) return;
  spdlog::info("{} CPUs online now: calibrating again", cpus_online_.online());
  governor_->ForgetPool();  // refused calibrations of the machine as it was
  if (StartCalibration()) cpu_online_calibrations_++;
}

std::vector<RealEvent> Daemon::WindowEvents() const {
  std::vector<RealEvent> events = source_->Events();
  const std::vector<uint64_t>& periods = governor_->periods();
  for (size_t e = 0; e < events.size() && e < periods.size(); ++e) events[e].period = periods[e];
  return events;
}

void Daemon::GovernEarly() {
  if (!govern_early_ || draining_ || writer_->busy() || failed_batch_) return;
  if (governor_->cost_ns() <= 0 && governor_->budget_pct() > 0) return;  // no estimate yet
  govern_early_ = false;
  if (!governor_->WouldChange()) return;
  spdlog::info("cost budget {} %: the window ends early for the new rate", governor_->budget_pct());
  StartMerge(true);
}

void Daemon::Process(Drained& d) {
  if (!d.error.empty()) spdlog::error("reading the source: {}", d.error);
  {
    SlowestStep::Timer t(slowest_step_, "side-band");
    sideband_->Apply(d.events);
  }
  {
    SlowestStep::Timer t(slowest_step_, "samples");
    for (const RecordBuffer& b : d.buffers) aggregator_->Add(b);
  }
  if (!d.mark) return;
  if (d.mark->last) last_mark_seen_ = true;
  if (draining_) {
    SlowestStep::Timer t(slowest_step_, "merge-take");
    TakeAndSubmit(*d.mark);
  }
}

void Daemon::TakeDrained(std::chrono::milliseconds wait) {
  std::deque<Drained> items;
  drainer_->Take(items, wait);
  for (Drained& d : items) Process(d);
}

uint64_t Daemon::MicrosSince(Clock::time_point since) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - since).count());
}

void Daemon::NoteHandover(Clock::time_point since) {
  last_handover_us_ = MicrosSince(since);
  max_handover_us_ = std::max(max_handover_us_, last_handover_us_);
}

void Daemon::StartMerge(bool close_window, bool wait_lookups) {
  if (failed_batch_) {
    // Retried first and alone: the counts pending since stay in the
    // aggregator, so nothing is counted twice and batches land in order.
    const Clock::time_point t0 = Clock::now();
    writer_->Submit(std::move(*failed_batch_));
    failed_batch_.reset();
    NoteHandover(t0);
    return;
  }
  // A window's end: the governor's rate for the next one, set at its mark.
  std::optional<std::vector<uint64_t>> periods;
  if (close_window) {
    WatchCpusOnline();
    // calibrations an interval old no longer count; this window's
    // unwinding does
    stack_reserve_->Update(aggregator_->unwind_counts().cpu_ns, NowNs());
    HoldBack();
    periods = governor_->Decide();
  }
  draining_ = Draining{close_window, wait_lookups, periods.has_value()};
  drainer_->RequestFlush(std::move(periods));
}

void Daemon::MeasureCost(MergeBatch& batch, const DrainStats& now) {
  // What these samples cost (window_costs), and whose they are: the reports
  // file lcpid's own samples under [lcpi: observer] by this pid.
  batch.cost = cost_meter_->Take(now.source, ThreadsCpuNs(calibrator_.running_tid()),
                                 static_cast<uint64_t>(NowNs()), calibrator_.State().last);
  batch.observer_pid = static_cast<uint32_t>(getpid());
  batch.observer_image = self_image_;
  // lcpid's own CPU per sample, shown beside the governor's estimate (not
  // governed: rate_governor.h says why); a batch of no samples says nothing.
  if (batch.cost && batch.cost->samples)
    governor_->set_daemon_ns_per_sample(static_cast<double>(batch.cost->daemon_ns) /
                                        static_cast<double>(batch.cost->samples));
}

void Daemon::TakeAndSubmit(const FlushMark& mark) {
  const Clock::time_point t0 = Clock::now();
  Draining want = *draining_;
  draining_.reset();
  // What was sampled before the request, named if the lookups under way
  // end soon (their results resolve waiting records and pending images).
  if (want.wait_lookups) lookups_->WaitIdle(kLookupWait);
  // The stacks taken before the request, unwound into this window.
  unwinds_->WaitIdle(kLookupWait);
  InFlight f;
  // Every address space that ended before the mark's time can be reaped
  // once the source has been drained: all its samples are resolved by now.
  f.reap_before = mark.reap_before;
  f.drained = mark.drained.has_value();
  if (f.drained) {
    tracker_.Reap(f.reap_before);
  } else {
    // Records may still sit in the tables, naming spaces that ended: keep
    // those spaces until a drain succeeds, or their samples go unknown.
    spdlog::error("draining the source: {}", mark.drained.error().message());
  }
  // The batch carries epoch_ as it is now: a window closing while this one
  // is written changes epoch_ only after it is in (FinishMerge), and no
  // new batch is taken before, so every count lands in its own window.
  f.entries = aggregator_->entries();
  f.close_window = want.close_window;
  Aggregator::TakenBatch taken = aggregator_->TakeBatch(epoch_, WindowEvents());
  f.entries -= aggregator_->held_entries();
  // What is drained from here on is the next window's (epoch_ changes before
  // the next batch is taken): its pids and stacks are admitted afresh now,
  // not when the write ends, or the pids admitted meanwhile under the old
  // window's set come on top of the next window's --max-processes (soak: 41
  // of 40). Should the write fail, the window goes on with the set reset.
  if (want.close_window) aggregator_->NewWindow();
  // The batch went at the periods it was sampled at; what follows the mark
  // is at the new ones.
  if (mark.periods) {
    if (mark.periods_set) {
      governor_->Applied(*mark.periods);
      spdlog::info("cost budget {} %: sampling {:.0f}/s/CPU from the next window (asked {:.0f})",
                   governor_->budget_pct(), governor_->rate(), governor_->asked_rate());
      // Still over the budget after a bounded step (at most x10 down): the
      // next window ends early too, so the rate reaches what the budget
      // allows within a few windows, not a --window later each (a
      // sample of 46 us on a loaded host: 5,000/s, 2,500, 250, 210).
      if (governor_->WouldStepDown()) govern_early_ = true;
    } else {
      if (governor_->error().empty())
        spdlog::warn("cost budget: the rate stays {:.0f}/s/CPU: {}", governor_->rate(),
                     mark.periods_set.error().message());
      governor_->Refused(mark.periods_set.error().message());
    }
  }
  const DrainStats& now = mark.stats;
  if (now.source.bad_records > stored_stats_.source.bad_records)
    spdlog::error(
        "{} malformed records in the perf rings since the last merge: the rest of "
        "each ring read was skipped (bad_records)",
        now.source.bad_records - stored_stats_.source.bad_records);
  if (now.queue_dropped_samples > stored_stats_.queue_dropped_samples)
    spdlog::error(
        "{} samples lost since the last merge: the loop fell behind the drain thread "
        "(queue_dropped_samples)",
        now.queue_dropped_samples - stored_stats_.queue_dropped_samples);
  AddSourceDeltas(taken.batch, now, stored_stats_, taken.held_samples_change);
  MeasureCost(taken.batch, now);
  // The deltas now belong to the batch, which is written or kept, never dropped.
  stored_stats_ = now;
  f.marks = std::move(taken.marks);
  in_flight_ = std::move(f);
  writer_->Submit(std::move(taken.batch));
  NoteHandover(t0);
}

Expected<void> Daemon::CompleteMerge() {
  while (draining_) {
    TakeDrained(kPoll);
    lookups_->RunCompletions();
    unwinds_->RunCompletions();
  }
  // (a refused batch's statistics follow it at once: FinishMerge)
  while (writer_->busy())
    if (Expected<void> e = FinishMerge(writer_->Wait()); !e) return e;
  return {};
}

void Daemon::DropHeld() {
  // The oldest first: the held batch's counts, then the pending ones.
  uint64_t dropped = DropCounts(*failed_batch_);
  Aggregator::TakenBatch taken = aggregator_->TakeBatch(epoch_, WindowEvents());
  const DrainStats now = drainer_->stats();
  AddSourceDeltas(taken.batch, now, stored_stats_, taken.held_samples_change);
  MeasureCost(taken.batch, now);
  stored_stats_ = now;  // its deltas go into the held batch, written later
  dropped += DropCounts(taken.batch);
  FoldInto(*failed_batch_, taken.batch);
  if (in_flight_) {
    in_flight_->entries = 0;
    // Their names were dropped too: nothing is marked stored on commit.
    in_flight_->marks = {};
  }
  if (pending_dropped_ == 0)
    spdlog::warn(
        "the database refuses merges ({}): held samples are dropped, oldest first, to "
        "stay within --max-pending-entries (counted as pending_dropped)",
        last_flush_error_);
  pending_dropped_ += dropped;
  ReturnFreedMemory();
}

void Daemon::ForgetImages() {
  std::vector<bool> in_use(images_.size(), false);
  tracker_.MarkImages(in_use);
  aggregator_->MarkImages(in_use);
  images_forgotten_ += images_.Forget(in_use);
}

Expected<void> Daemon::FinishMerge(MergeWriter::Done done) {
  if (!done.result && done.result.error().code() == Errc::kInvalidArgument) {
    // The store refuses the batch for what it holds, not for the state of
    // the disk: the same batch would be refused again every second, hold
    // every later count and be lost at exit. The rows of one bad image
    // never get here (ProfileDb::Merge sets them aside), so this is a bug
    // of lcpid's, said as such. Its rows are dropped, counted as "refused",
    // and its statistics written alone at once, before anything newer (the
    // loop and CompleteMerge collect that write too): the window still
    // adds up, and closes with them. Statistics refused alone are lost.
    last_flush_error_ = done.result.error().ToString();
    in_flight_->marks = {};  // nothing of it was stored
    if (HoldsRows(done.batch)) {
      refused_batches_++;
      refused_samples_ = SaturatingAdd(refused_samples_, DropCounts(done.batch, kDroppedAsRefused));
      in_flight_->entries = 0;
      spdlog::error(
          "the database refused a batch for its content: its rows dropped, its statistics "
          "written alone ({} samples so far, counted as refused): {}",
          refused_samples_, last_flush_error_);
      writer_->Submit(std::move(done.batch));
      return {};
    }
    spdlog::error("the database refused a batch's statistics alone, dropped: {}",
                  last_flush_error_);
    done.result = Expected<void>();
  }
  if (!done.result) {
    // Nothing was written: the batch is submitted again before any other.
    failed_flushes_++;
    last_flush_error_ = done.result.error().ToString();
    spdlog::error("flush failed, counts kept in memory, will retry: {}", last_flush_error_);
    failed_batch_ = std::move(done.batch);
    in_flight_->close_window = false;  // the window closes with a batch taken later
    return done.result;
  }
  if (done.report.quarantined_images > 0) {
    quarantined_images_ += done.report.quarantined_images;
    quarantined_rows_ += done.report.quarantined_rows;
    quarantined_samples_ += done.report.quarantined_samples;
    spdlog::warn(
        "merge: the rows of {} image(s) hold values the database cannot store (a hostile JIT "
        "map?): {} rows, {} samples set aside, the rest merged (quarantined_*)",
        done.report.quarantined_images, done.report.quarantined_rows,
        done.report.quarantined_samples);
  }
  InFlight f = std::move(*in_flight_);
  in_flight_.reset();
  aggregator_->Committed(f.marks);
  // Only now: the JIT names the committed counts needed are stored.
  if (f.drained) jit_.Reap(f.reap_before);
  ForgetImages();
  flushes_++;
  last_flush_error_.clear();
  spdlog::debug("merged {} entries in {} ms", f.entries, done.ms);
  if (Expected<ProfileDb::FileSize> size = db_->DatabaseSize(); size) db_bytes_ = size->bytes;
  ReturnFreedMemory();
  if (f.close_window) return CloseWindow();
  return {};
}

Expected<void> Daemon::Flush() {
  (void)CompleteMerge();  // a failure is held and retried
  if (failed_batch_) {
    StartMerge(false);
    if (Expected<void> e = CompleteMerge(); !e) return e;
  }
  StartMerge(false, true);
  return CompleteMerge();
}

int64_t Daemon::WindowEnd(int64_t now) const {
  return (now / options_.window + 1) * options_.window;
}

Expected<void> Daemon::CloseWindow() {
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  Expected<int64_t> id = db_->NewEpoch(std::nullopt, EpochKind::kWindow, now);
  if (!id) return id.error();
  spdlog::debug("window {} closed, window {} started", epoch_, *id);
  epoch_ = *id;  // the aggregator's window began when its batch was taken
  window_end_ = WindowEnd(now);
  ApplyRetention();
  return {};
}

void Daemon::ReadRetentionDropped() {
  if (Expected<std::map<std::string, int64_t>> st = db_->Stats(EpochSet::All()); st) {
    retention_dropped_samples_ = (*st)["retention_dropped.samples"];
    retention_dropped_counts_ =
        (*st)["retention_dropped.attributed"] + (*st)["retention_dropped.unknown"];
  }
}

void Daemon::ApplyRetention() {
  const uint64_t before = dropped_epochs_ + rolled_up_epochs_;
  DropAndRollUp();
  if (dropped_epochs_ + rolled_up_epochs_ == before) return;
  // Once a pass, not per drop or rollup: a scan of every process row.
  if (Expected<void> e = db_->DeleteUnreferenced(); !e) {
    last_retention_error_ = e.error().ToString();
    spdlog::error("retention: {}", last_retention_error_);
  }
}

void Daemon::DropAndRollUp() {
  RetentionPolicy policy = options_.retention;
  policy.hold_from = ship_hold_.Refresh();
  auto drop = [this](const std::vector<int64_t>& ids) {
    Expected<void> e = db_->DropEpochs(ids);
    if (!e) {
      last_retention_error_ = e.error().ToString();
      spdlog::error("retention: {}", last_retention_error_);
      return false;
    }
    dropped_epochs_ += ids.size();
    spdlog::info("retention: dropped {} epochs (oldest {})", ids.size(), ids.front());
    ReadRetentionDropped();
    return true;
  };
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  // Old windows of a day become one epoch first (at most 16 days a pass).
  Expected<std::vector<EpochInfo>> epochs = db_->ListEpochs();
  Expected<std::vector<EpochEvent>> facts = db_->EpochEvents(EpochSet::All());
  if (!epochs || !facts) return;
  std::vector<std::vector<int64_t>> groups = RollupGroups(*epochs, *facts, policy, now);
  for (size_t g = 0; g < groups.size() && g < 16; ++g) {
    if (Expected<void> e = db_->MergeEpochs(groups[g], options_.max_processes); !e) {
      last_retention_error_ = e.error().ToString();
      spdlog::error("retention: rollup: {}", last_retention_error_);
      return;
    }
    rolled_up_epochs_ += groups[g].size() - 1;
  }
  if (!groups.empty()) epochs = db_->ListEpochs();
  if (!epochs) return;
  std::vector<int64_t> expired = ExpiredEpochs(*epochs, policy, now);
  if (!expired.empty() && !drop(expired)) return;
  if (policy.max_bytes == 0) return;
  // Over the cap: the oldest go first, one at a time, until under it. A pass
  // drops at most 64, so the loop goes back to the rings soon; the next
  // window continues.
  for (int pass = 0; pass < 64; ++pass) {
    Expected<ProfileDb::FileSize> size = db_->DatabaseSize();
    if (!size || size->bytes - size->free_bytes <= policy.max_bytes) return;
    epochs = db_->ListEpochs();
    if (!epochs) return;
    std::optional<int64_t> oldest = NextOverCap(*epochs);
    if (!oldest) {
      spdlog::warn("retention: {} bytes, over the cap of {}, with only the current window left",
                   size->bytes, policy.max_bytes);
      return;
    }
    if (!drop({*oldest})) return;
    for (const EpochInfo& e : *epochs)
      if (e.id == *oldest) ship_hold_.Dropped(e);
  }
}

std::string Daemon::Status() {
  const Clock::time_point asked = Clock::now();
  // Fresh from the drain thread, and consistent with what this loop has
  // taken: what it drained since is still counted as queued.
  const DrainStats drain = drainer_->FreshStats(kStatsWait);
  const SourceStats& s = drain.source;
  const AggregateTotals& t = aggregator_->totals();
  double secs = std::chrono::duration<double>(Clock::now() - started_).count();
  uint64_t lost = s.lost + s.table.dropped + s.nested + drain.queue_dropped_samples;
  uint64_t all = s.table.samples + s.lost + s.nested;
  // Taken, neither counted nor lost yet: in the hash tables, on their way
  // from the drain thread, or waiting for a lookup.
  const uint64_t counted = t.samples + lost - s.lost - s.nested;
  uint64_t pending = s.table.samples > counted ? s.table.samples - counted : 0;
  std::ostringstream o;
  o << "ok\n";
  o << "source " << source_->Name() << "\n";
  for (size_t i = 0; i < source_->Events().size(); i++) {
    const RealEvent& ev = source_->Events()[i];
    o << "event." << i << " " << ev.requested.name << " sampled-as " << ev.used << " period "
      << ev.period << " precise " << ev.precise << (ev.fell_back ? " (fallback)" : "")
      << (ev.not_running ? " not running" : "") << "\n";
  }
  o << "database " << options_.db << "\n";
  o << "readers " << (access_.group_found ? "root and group " + access_.group : "root only")
    << "\n";
  o << "epoch " << epoch_ << "\n";
  o << "window " << FormatDuration(options_.window) << "\n";
  o << "window_ends " << FormatUtc(window_end_) << "\n";
  o << "retain " << FormatDuration(options_.retention.retain) << "\n";
  o << "retain_tagged " << FormatDuration(options_.retention.retain_tagged) << "\n";
  o << "keep_windows " << options_.retention.keep_newest << "\n";
  o << "max_db_size " << FormatSize(options_.retention.max_bytes) << "\n";
  if (!writer_->busy())  // else the writer has the connection: the last size
    if (Expected<ProfileDb::FileSize> size = db_->DatabaseSize(); size) db_bytes_ = size->bytes;
  o << "db_bytes " << db_bytes_ << "\n";
  o << "rollup_after "
    << (options_.retention.rollup_after > 0 ? FormatDuration(options_.retention.rollup_after)
                                            : std::string("never"))
    << "\n";
  o << "dropped_epochs " << dropped_epochs_ << "\n";
  ship_hold_.AppendStatus(o, static_cast<int64_t>(std::time(nullptr)));
  o << "rolled_up_epochs " << rolled_up_epochs_ << "\n";
  // What retention took away, still counted (ProfileDb::DropEpochs).
  o << "retention_dropped_samples " << retention_dropped_samples_ << "\n";
  o << "retention_dropped_counts " << retention_dropped_counts_ << "\n";
  o << "max_processes " << options_.max_processes << "\n";
  o << "processes_rolled_up " << aggregator_->processes_rolled_up() << "\n";
  // Rows the database could not hold, set aside by image (ProfileDb::Merge),
  // and whole batches it refused (their rows dropped, their statistics
  // written alone).
  o << "quarantined_images " << quarantined_images_ << "\n";
  o << "quarantined_rows " << quarantined_rows_ << "\n";
  o << "quarantined_samples " << quarantined_samples_ << "\n";
  o << "refused_batches " << refused_batches_ << "\n";
  o << "refused_samples " << refused_samples_ << "\n";
  if (!last_retention_error_.empty()) o << "last_retention_error " << last_retention_error_ << "\n";
  o << "uptime_s " << static_cast<uint64_t>(secs) << "\n";
  o << "samples " << all << "\n";
  o << "samples_per_s " << static_cast<uint64_t>(secs > 0 ? all / secs : 0) << "\n";
  o << "samples_as_of_ns " << s.as_of_ns << "\n";
  o << "attributed " << t.attributed << "\n";
  o << "unknown " << t.unknown << "\n";
  o << "lost " << lost << "\n";
  o << "throttle_events " << s.throttled << "\n";
  if (source_->Name() == "kmod")
    o << "throttled_lost_estimate " << s.throttled_lost_estimate << "\n";
  // kmod: how many samples the handler took in NMI context (a PMU overflow
  // on x86, or on arm64 with pseudo-NMIs; never a clock's hrtimer)
  if (source_->Name() == "kmod") o << "nmi_samples " << s.nmi_samples << "\n";
  o << "bad_records " << s.bad_records << "\n";
  o << "in_tables " << pending << "\n";
  o << "queued_samples " << drain.queued_samples << "\n";
  o << "waiting_samples " << aggregator_->waiting_samples() << "\n";
  o << "queue_dropped_samples " << drain.queue_dropped_samples << "\n";
  o << "queue_dropped_events " << drain.queue_dropped_events << "\n";
  // Call stacks (--stack-frequency): taken by the source, dropped on a full
  // queue; those beyond --max-stacks are in the windows' stacks_over_limit.
  o << "stack_frequency " << options_.stack_frequency << "\n";
  o << "stacks " << s.stacks << "\n";
  o << "queue_dropped_stacks " << drain.queue_dropped_stacks << "\n";
  o << "stacks_lost " << s.stacks_lost << "\n";
  o << "max_stacks " << options_.max_stacks << "\n";
  // The DWARF unwinder (unwind/): stacks that came with a copy of their
  // user stack, how they were walked and why walks stopped short.
  o << "stack_copy_bytes " << s.stack_copy_bytes << "\n";
  const Aggregator::UnwindCounts& uw = aggregator_->unwind_counts();
  o << "unwind_stacks " << uw.unwound << "\n";
  o << "unwind_not_in_time " << uw.not_unwound << "\n";
  o << "unwind_in_flight " << uw.in_flight << "\n";
  o << "unwind_dwarf_frames " << uw.dwarf_frames << "\n";
  o << "unwind_fp_frames " << uw.fp_frames << "\n";
  o << "unwind_ns_per_stack " << (uw.unwound ? uw.ns / uw.unwound : 0) << "\n";
  o << "unwind_end_no_table " << uw.no_table << "\n";
  o << "unwind_end_copy_short " << uw.copy_short << "\n";
  o << "unwind_end_jit " << uw.jit << "\n";
  o << "unwind_end_failed " << uw.failed << "\n";
  o << "unwind_end_budget " << uw.budget << "\n";
  o << "unwind_over_share " << uw.over_share << "\n";
  o << "unwind_over_cpu " << uw.over_cpu << "\n";
  o << "unwind_cpu_allowance_ns_per_s " << aggregator_->unwind_cpu_allowance() << "\n";
  o << "unwind_in_flight_bytes " << uw.in_flight_bytes << "\n";
  o << "unwind_snapshots " << uw.snapshots << "\n";
  // The unwinder's threads' CPU (lcpid's own cost, beside daemon_ns).
  o << "unwind_cpu_ns " << uw.cpu_ns << "\n";
  const UnwindTableStats ut = unwind_tables_->stats();
  o << "unwind_tables " << ut.held << "\n";
  o << "unwind_tables_missing " << ut.missing << "\n";
  o << "unwind_tables_evicted " << ut.evicted << "\n";
  o << "unwind_tables_bytes " << ut.bytes << "\n";
  o << "unwind_tables_cfi_refused " << ut.cfi_refused << "\n";
  o << "queued_event_bytes " << drain.queued_event_bytes << "\n";
  o << "waits_overflowed " << aggregator_->waits_overflowed() << "\n";
  o << "unknown_share_pct " << (t.samples ? 100.0 * t.unknown / t.samples : 0.0) << "\n";
  o << "hits " << s.table.hits << "\n";
  o << "misses " << s.table.misses << "\n";
  o << "evictions " << s.table.evictions << "\n";
  o << "miss_rate_pct " << (s.table.samples ? 100.0 * s.table.misses / s.table.samples : 0.0)
    << "\n";
  if (s.handler_ns_hit || s.handler_ns_miss) {  // the module times its handler
    o << "handler_ns_per_hit " << (s.table.hits ? s.handler_ns_hit / s.table.hits : 0) << "\n";
    o << "handler_ns_per_miss " << (s.table.misses ? s.handler_ns_miss / s.table.misses : 0)
      << "\n";
  }
  {
    BudgetFigures b;
    b.calibration = calibrator_.State();
    b.periodic = options_.calibrate_every > 0;
    b.every_s = options_.calibrate_every;
    b.daemon_cpu_ns = ThreadsCpuNs(calibrator_.running_tid());
    b.samples = all;
    b.asked_rate = governor_->asked_rate();
    b.budget_pct = governor_->budget_pct();
    b.governed_rate = governor_->rate();
    b.target_rate = governor_->target_rate();
    b.hysteresis = governor_->steps().hysteresis;
    b.governor_changes = governor_->changes();
    b.governor_error = governor_->error();
    b.governor_cost_ns = governor_->cost_ns();
    b.governor_interrupt_ns = governor_->interrupt_ns();
    b.governor_daemon_ns = governor_->daemon_ns_per_sample();
    b.calibration_reserved_pct = calibration_reserved_pct_;
    b.governor_reserved_pct = governor_->reserved_pct();
    b.stacks_cost_pct = stacks_cost_pct_;
    b.stacks_reserved_pct = stacks_reserved_pct_;
    b.stacks_unwind_ns_per_s = stack_reserve_->unwind_ns_per_s();
    b.estimate_confirmed = governor_->confirmed();
    b.calibrations_refused = governor_->refused();
    b.calibrations_confirming = confirming_started_;
    b.calibrations_pooled = governor_->pool_size();
    b.pooled_offers = governor_->pooled();
    b.calibration_later_tries = retry_.later_tries();
    b.cpu_online_calibrations = cpu_online_calibrations_;
    b.cpus_online = cpus_online_.online();
    b.module_timed = source_->Name() == "kmod";
    b.module_handler_ns = s.handler_ns_hit + s.handler_ns_miss;
    b.module_samples = s.table.hits + s.table.misses;
    WriteBudgetStatus(o, b);
  }
  o << "records " << t.records << "\n";
  o << "buffers " << t.buffers << "\n";
  o << "sideband_records " << sideband_->records() << "\n";
  o << "sideband_lost " << drain.sideband.lost << "\n";
  o << "sideband_bad_records " << drain.sideband.bad_records << "\n";
  o << "processes_tracked " << tracker_.processes() << "\n";
  const TrackerStats ts = tracker_.stats();
  o << "mappings " << ts.mappings << "\n";
  o << "mappings_refused " << ts.refused << "\n";
  o << "mappings_retired_forgotten " << ts.retired_forgotten << "\n";
  const CgroupReadStats cg = cgroups_.stats();
  o << "cgroups " << cg.paths << "\n";
  o << "cgroups_read " << cg.read << "\n";
  o << "cgroups_gone " << cg.gone << "\n";
  o << "cgroups_reused " << cg.reused << "\n";
  o << "cgroups_refused " << cg.refused << "\n";
  o << "cgroups_over_bound " << cg.over_bound << "\n";
  o << "cgroups_overflow " << cg.overflow << "\n";
  o << "cgroups_pending " << cg.pending << "\n";
  o << "images " << images_.live() << "\n";
  o << "images_pending " << images_.pending_count() << "\n";
  const LookupStats lk = lookups_->stats();
  o << "lookups " << lk.submitted << "\n";
  o << "lookups_queued " << lk.queued << "\n";
  o << "lookups_running " << lk.running << "\n";
  o << "lookups_refused " << lk.refused << "\n";
  o << "lookups_abandoned " << lk.abandoned << "\n";
  o << "lookups_overran " << lk.overran << "\n";
  o << "lookup_threads_stuck " << lk.stuck_threads << "\n";
  o << "images_file_stat " << images_.file_stat_count() << "\n";
  o << "images_build_id_conflicts " << images_.build_id_conflicts() << "\n";
  o << "images_forgotten " << images_forgotten_ << "\n";
  o << "images_files_refused " << images_.files_refused() << "\n";
  o << "kernel_symbol_reloads " << kernel_reload_.reloads() << "\n";
  o << "kernel_symbol_reload_failures " << kernel_reload_.failures() << "\n";
  if (!kernel_reload_.last_error().empty())
    o << "kernel_symbol_reload_error " << kernel_reload_.last_error() << "\n";
  const JitStats& jit = jit_.stats();
  o << "jit_processes_watched " << jit_.watched() << "\n";
  o << "jit_map_reads " << jit.reads << "\n";
  o << "jit_map_missing " << jit.missing << "\n";
  o << "jit_map_errors " << jit.errors << "\n";
  o << "jit_map_bad_lines " << jit.bad_lines << "\n";
  o << "jit_map_truncated " << jit.truncated << "\n";
  o << "jit_symbols " << jit.symbols << "\n";
  o << "jit_dump_reads " << jit.dump_reads << "\n";
  o << "jit_refused " << jit.refused << "\n";
  o << "jit_pids_reused " << jit.reused << "\n";
  o << "jit_name_bytes " << jit.name_bytes << "\n";
  o << "jit_names_over_budget " << jit.over_budget << "\n";
  if (image_cache_) {
    ImageCacheStats c = image_cache_->stats();
    o << "image_cache_hits " << c.hits << "\n";
    o << "image_cache_misses " << c.misses << "\n";
    o << "image_cache_failed " << c.failed << "\n";
    o << "image_cache_dropped " << c.dropped << "\n";
    o << "image_cache_evicted " << c.evicted << "\n";
    o << "image_cache_evicted_share " << c.evicted_share << "\n";
    o << "image_cache_stuck " << c.stuck << "\n";
    o << "image_cache_stuck_threads " << c.stuck_threads << "\n";
    o << "image_cache_replaced " << c.replaced << "\n";
    o << "image_cache_files " << c.files << "\n";
    o << "image_cache_private_files " << c.private_files << "\n";
    o << "image_cache_bytes " << c.bytes << "\n";
    o << "image_cache_max_bytes " << (options_.image_cache_mb << 20) << "\n";
    o << "image_cache_max_files " << ImageCacheConfig{}.max_files << "\n";
  }
  o << "pending_entries " << aggregator_->entries() << "\n";
  o << "max_pending_entries " << options_.max_pending_entries << "\n";
  o << "merges_in_flight " << (writer_->busy() ? 1 : 0) << "\n";
  o << "in_flight_entries " << (in_flight_ ? in_flight_->entries : 0) << "\n";
  o << "merge_retry_pending " << (failed_batch_ ? 1 : 0) << "\n";
  o << "last_merge_ms " << writer_->last_ms() << "\n";
  o << "max_merge_ms " << writer_->max_ms() << "\n";
  o << "last_handover_ms " << last_handover_us_ / 1000 << "\n";
  o << "max_handover_ms " << max_handover_us_ / 1000 << "\n";
  // What a status request waits for inside lcpid: the loop's longest time
  // away from the socket, then this reply's own making (the drain thread's
  // fresh statistics, the database's size), this one included.
  o << "max_loop_gap_ms " << max_loop_gap_us_ / 1000 << "\n";
  o << "slowest_loop_step " << slowest_step_.Text() << "\n";
  max_status_us_ = std::max(max_status_us_, MicrosSince(asked));
  o << "max_status_ms " << max_status_us_ / 1000 << "\n";
  o << "early_merges " << early_merges_ << "\n";
  o << "pending_dropped_samples " << pending_dropped_ << "\n";
  o << "daemon_cpu_ns_per_sample " << (all ? CpuNs() / all : 0) << "\n";
  o << "rss_bytes " << RssBytes() << "\n";
  o << "flushes " << flushes_ << "\n";
  o << "failed_flushes " << failed_flushes_ << "\n";
  if (!last_flush_error_.empty()) o << "last_flush_error " << last_flush_error_ << "\n";
  o << "\n";
  return o.str();
}

std::string Daemon::Handle(const std::string& request) {
  std::istringstream in(request);
  std::string verb, arg;
  in >> verb;
  std::getline(in >> std::ws, arg);
  if (verb == "status") {
    SlowestStep::Timer t(slowest_step_, "status");
    return Status();
  }
  if (verb == "flush") {
    Expected<void> e = Flush();
    return e ? "ok\nepoch " + std::to_string(epoch_) + "\n\n"
             : "error " + e.error().ToString() + "\n\n";
  }
  if (verb == "epoch") {
    // The old epoch's counts must be on disk before the new one starts.
    if (Expected<void> e = Flush(); !e) return "error " + e.error().ToString() + "\n\n";
    std::optional<std::string> tag;
    if (!arg.empty()) tag = arg;
    Expected<int64_t> id = db_->NewEpoch(tag);
    if (!id) return "error " + id.error().ToString() + "\n\n";
    epoch_ = *id;
    aggregator_->NewWindow();
    window_end_ = WindowEnd(static_cast<int64_t>(std::time(nullptr)));
    spdlog::info("new epoch {}{}", epoch_, tag ? " (" + *tag + ")" : "");
    return "ok\nepoch " + std::to_string(epoch_) + "\n\n";
  }
  if (verb == "budget") {
    Expected<double> pct = ParseBudgetPct(arg);
    if (!pct) return "error " + pct.error().message() + "\n\n";
    governor_->set_budget_pct(*pct);
    HoldBack();            // the stacks' share is bounded by the budget
    govern_early_ = true;  // the window ends early if the rate changes
    // A budget that now wants an estimate, or a step a confirmation: at
    // once, not at the next hourly calibration (one running decides).
    if (CalibrationWanted() && !calibrator_.State().running)
      FollowUp({0, governor_->interrupt_ns() > 0});
    spdlog::info("cost budget set to {} % of each CPU", *pct);
    return "ok\nmax_overhead_pct " + arg + "\n\n";
  }
  if (verb == "calibrate") {
    return StartCalibration() ? "ok\ncalibrating\n\n" : "ok\ncalibrating (already)\n\n";
  }
  if (verb == "stop") {
    stop_ = true;
    return "ok\nstopping\n\n";
  }
  return "error unknown request '" + verb +
         "' (status, flush, epoch [TAG], calibrate, budget PCT, stop)\n\n";
}

int Daemon::Run() {
  Clock::time_point served = Clock::now();
  while (!stop_) {
    TakeDrained(kPoll);
    {
      SlowestStep::Timer t(slowest_step_, "lookup-results");
      lookups_->RunCompletions();
      unwinds_->RunCompletions();
      if (image_cache_) image_cache_->Pump();  // what was offered while its lock was taken
    }
    // From the last look at the socket to this one: a request that came
    // meanwhile waited that long (a flush's own wait, which its client
    // asked for, is not counted).
    max_loop_gap_us_ = std::max(max_loop_gap_us_, MicrosSince(served));
    control_.ServePending([this](const std::string& r) { return Handle(r); });
    served = Clock::now();
    signalfd_siginfo si;
    while (read(signal_fd_, &si, sizeof(si)) == sizeof(si)) {
      if (si.ssi_signo == SIGHUP) {
        next_flush_ = Clock::now();  // SIGHUP: flush now
      } else {
        spdlog::info("signal {}: flushing and stopping", si.ssi_signo);
        stop_ = true;
      }
    }
    StartDueCalibration();
    // The writer has the database while a batch is in flight; the loop
    // only starts the next one (and only runs NewEpoch and retention) once
    // it has collected the last.
    if (writer_->busy()) {
      std::optional<MergeWriter::Done> done = writer_->Poll();
      if (!done) continue;
      const Clock::time_point t0 = Clock::now();
      SlowestStep::Timer t(slowest_step_, "merge-finish");
      Expected<void> e = FinishMerge(std::move(*done));
      done.reset();  // the written batch is freed here, on the loop: counted
      NoteHandover(t0);
      if (!e) {
        spdlog::error("merge: {}", e.error().message());
        retry_after_ = Clock::now() + kRetryAfterFailure;
      }
      if (writer_->busy()) continue;  // a refused batch's statistics, written alone
    }
    if (draining_) continue;  // a merge is starting: its mark comes from the drain thread
    TakeCalibration();
    GovernEarly();
    if (draining_) continue;
    // Counts of images still being identified stay pending: they do not
    // make merges start early.
    const size_t entries = aggregator_->entries() - aggregator_->held_entries();
    // While the database refuses merges, what is held stays under the cap:
    // the oldest goes first.
    if (failed_batch_ && entries >= options_.max_pending_entries) {
      SlowestStep::Timer t(slowest_step_, "drop-held");
      DropHeld();
    }
    const Clock::time_point now = Clock::now();
    if (now < retry_after_) continue;
    SlowestStep::Timer t(slowest_step_, "merge-start");
    if (std::time(nullptr) >= window_end_) {
      StartMerge(true);  // a held failed batch goes first; the window closes after the next
      next_flush_ = now + std::chrono::seconds(options_.flush_interval);
    } else if (now >= next_flush_) {
      StartMerge(false);
      next_flush_ = now + std::chrono::seconds(options_.flush_interval);
    } else if (entries >= options_.max_pending_entries) {
      // Over the cap: merge now rather than let the maps grow.
      early_merges_++;
      StartMerge(false);
    }
  }
  // The source stops and is drained a last time; what the lookups under
  // way find within kLookupWait is used, the rest is given up (its files
  // filed as unreadable, its records resolved with what is known).
  drainer_->RequestStop();
  (void)CompleteMerge();
  while (!last_mark_seen_) TakeDrained(kPoll);
  lookups_->WaitIdle(kLookupWait);
  lookups_->Stop();
  unwinds_->WaitIdle(kLookupWait);
  unwinds_->Stop();
  // A helper thread stuck in a system call (a hung mount) is left behind,
  // on every way out: lcpid then ends without waiting for it (main.cpp).
  auto stop_helpers = [this] {
    if (image_cache_ && !image_cache_->Stop(std::chrono::seconds(2))) {
      spdlog::warn("image cache: a copy did not finish; abandoned");
      (void)image_cache_.release();
      left_threads_behind_ = true;
    }
    if (lookups_->stats().running > 0) left_threads_behind_ = true;
  };
  // The last flush must land: retry while the database is busy or full.
  for (int attempt = 0;; attempt++) {
    Expected<void> e = Flush();
    if (e) break;
    if (attempt >= 30) {
      spdlog::critical("giving up: {} unflushed samples lost", aggregator_->totals().samples);
      stop_helpers();
      return 1;
    }
    sleep(1);
  }
  stop_helpers();
  const DrainStats d = drainer_->stats();
  const SourceStats& s = d.source;
  spdlog::info("stopped after {} flushes: {} samples taken, {} lost", flushes_,
               s.table.samples + s.lost + s.nested,
               s.lost + s.table.dropped + s.nested + d.queue_dropped_samples);
  return 0;
}

}  // namespace lcpi
