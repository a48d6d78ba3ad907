// daemon.h - lcpid's loop: takes what the drain thread read (side-band
// events and sample buffers, drainer.h), resolves and aggregates it, hands a
// batch to the merge writer's thread every flush interval or when the
// pending entries reach --max-pending-entries (and waits for it on request
// and on SIGTERM/SIGINT), and answers the control socket. What may block
// (identifying files, reading JIT maps, re-reading kallsyms) runs on the
// lookup worker's thread (lookup_worker.h), whose results come back here.
//
// lcpid's threads: this loop (main), the drain thread (the only reader of
// the rings and /dev/lcpi), the lookup worker, the merge writer (the only
// user of the database while a batch is in flight) and the image cache's
// copier.
#ifndef LCPI_DAEMON_DAEMON_H
#define LCPI_DAEMON_DAEMON_H

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "daemon/control_server.h"
#include "daemon/cost_meter.h"
#include "daemon/drainer.h"
#include "daemon/merge_writer.h"
#include "daemon/options.h"
#include "daemon/ship_hold.h"
#include "daemon/slowest_step.h"
#include "daemon/state_files.h"
#include "libprofile/aggregate/aggregator.h"
#include "libprofile/attribute/image_cache_writer.h"
#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/jit_maps.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/attribute/sideband.h"
#include "libprofile/base/lookup_worker.h"
#include "libprofile/budget/calibration_reserve.h"
#include "libprofile/budget/calibration_retry.h"
#include "libprofile/budget/calibrator.h"
#include "libprofile/budget/cpu_online_watch.h"
#include "libprofile/budget/rate_governor.h"
#include "libprofile/budget/stack_reserve.h"
#include "libprofile/collect/source.h"
#include "libprofile/image/kernel_symbols.h"
#include "libprofile/store/profile_db.h"

namespace lcpi {

class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();

  // Opens the database, the source, the side-band events and the socket.
  Expected<void> Start();
  // Runs until stopped (signal or "stop" request); returns the exit status.
  int Run();
  // After Run: a lookup or cache thread is still blocked in the kernel (a
  // hung mount) and can never be joined.
  bool left_threads_behind() const { return left_threads_behind_; }

 private:
  using Clock = std::chrono::steady_clock;

  Expected<std::unique_ptr<Source>> MakeSource();
  // What the drain thread read: side-band events applied first, so every
  // mapping made before a sample is known when the sample is resolved;
  // then the buffers; then a flush mark.
  void Process(Drained& d);
  // Takes what the drain thread has, waiting up to `wait`, and processes it.
  void TakeDrained(std::chrono::milliseconds wait);
  // Starts a merge: a batch whose write failed goes to the writer again,
  // first and alone; else the drain thread is asked to drain the tables,
  // and the batch is taken at its mark (TakeAndSubmit). Only while no merge
  // is under way. close_window: once this batch is in the database, the
  // current window ends (CloseWindow). wait_lookups: the batch waits (a
  // little) for lookups under way, as flush requests and shutdown want.
  void StartMerge(bool close_window, bool wait_lookups = false);
  // The tables are drained (the mark): everything pending goes to the
  // writer as one batch.
  void TakeAndSubmit(const FlushMark& mark);
  // Waits for the merge under way, if any: its mark, then its write.
  Expected<void> CompleteMerge();
  // A write finished: remembers what it stored, reaps JIT maps, closes the
  // window it was asked to; a failed batch is kept to be written again.
  Expected<void> FinishMerge(MergeWriter::Done done);
  // Waits until everything aggregated so far is in the database (control
  // requests, shutdown): blocks the loop, as those callers expect.
  Expected<void> Flush();
  // Starts the next window; the batch of the one ending is in the database.
  Expected<void> CloseWindow();
  // When the current window ends: the next multiple of --window (UTC).
  int64_t WindowEnd(int64_t now) const;
  // Drops what --retain, --retain-tagged and --max-db-size say must go,
  // then the cgroup paths no row names any more.
  void ApplyRetention();
  void DropAndRollUp();
  void ReadRetentionDropped();
  std::string Handle(const std::string& request);
  std::string Status();
  // Starts a calibration of what one sample costs (libprofile/budget) on
  // its own thread, for the first event sampled; false if one runs.
  bool StartCalibration();
  // A calibration finished since the last look: offered to the governor,
  // which keeps it only if its interval is narrow enough; one that would
  // lower the rate by more than x2 unconfirmed starts a second; failed and
  // refused ones, and confirmations that disagree, are tried again (retry_).
  void TakeCalibration();
  // Whether the governor wants a calibration: a budget, no cost given, and
  // no estimate or one awaiting its confirmation.
  bool CalibrationWanted() const;
  // Starts what retry_ says follows a calibration: one at once (counted as
  // confirming if it confirms), or one after_s seconds later.
  void FollowUp(const CalibrationRetry::Next& next);
  // Sets the governor's share held back from the budget as of now: for
  // calibrating (reserve_) and for call stacks (stack_reserve_); after each
  // calibration, and at each window's end, where the calibrations an
  // interval old stop counting and the window's stacks are measured.
  void HoldBack();
  // Clock::now() in ns.
  static int64_t NowNs();
  // From the loop: the periodic calibration, or a later try, when due.
  void StartDueCalibration();
  // At a window's end: a CPU came online (or went): calibrate again.
  void WatchCpusOnline();
  // The source's events as the current window samples them: the governed
  // periods in place of the asked ones (what the window's rows store).
  std::vector<RealEvent> WindowEvents() const;
  // The governor's decision takes effect at a window's end; a new budget
  // (lcpictl budget) or the first cost estimate ends the window early when
  // it changes the rate, so that an hour is not sampled at a rate over it.
  void GovernEarly();

  DaemonOptions options_;
  StateAccess access_;  // who may read the database
  std::unique_ptr<ProfileDb> db_;
  // After db_: destroyed first. While a batch is in flight the writer's
  // thread alone uses db_; the loop uses it only when writer_ is idle.
  std::unique_ptr<MergeWriter> writer_;
  // The batch the writer has (or a failed one held in failed_batch_): what
  // to do once it is in the database.
  struct InFlight {
    Aggregator::StoredMarks marks;
    uint64_t reap_before = 0;  // side-band time the drain before it reached
    bool drained = false;      // the source drain before it succeeded
    bool close_window = false;
    size_t entries = 0;
  };
  std::optional<InFlight> in_flight_;
  std::optional<MergeBatch> failed_batch_;  // written again before any new batch
  // A drain asked for and its mark not yet seen: the batch it is for.
  struct Draining {
    bool close_window = false;
    bool wait_lookups = false;
    bool new_periods = false;  // the governor's, set at this mark
  };
  std::optional<Draining> draining_;
  bool last_mark_seen_ = false;  // the drain thread has stopped
  int64_t epoch_ = 0;
  std::unique_ptr<Source> source_;
  ProcessTracker tracker_;
  CgroupReader cgroups_;  // each process's cgroup, read at exec (on lookups_) and at the /proc scan
  ImageTable images_;
  std::unique_ptr<ImageCacheWriter> image_cache_;  // null with --image-cache-size 0
  std::optional<KernelSymbols> kernel_;
  JitMaps jit_{images_};
  KernelSymbolsReloader kernel_reload_;
  std::unique_ptr<Sideband> sideband_;
  std::unique_ptr<Aggregator> aggregator_;
  // Images' unwind tables for the DWARF unwinder, used on the lookups'
  // threads: before lookups_, so destroyed after them.
  std::unique_ptr<UnwindTables> unwind_tables_;
  // After everything its results touch (images_, jit_, aggregator_,
  // image_cache_): destroyed first. Run stops it before returning.
  std::unique_ptr<LookupWorker> lookups_;
  // The DWARF unwinder's threads (Aggregator::UnwindWorkerLimits: two, a
  // user's walks on one at most; nice 0: stacks come at the rate the user
  // asked, and a nice-10 thread on a loaded host fell behind them).
  std::unique_ptr<LookupWorker> unwinds_;
  bool left_threads_behind_ = false;
  // After the source and the side-band it reads: stopped and gone first.
  std::unique_ptr<Drainer> drainer_;
  ControlServer control_;
  int signal_fd_ = -1;
  bool stop_ = false;

  Clock::time_point started_;
  // What a sample costs this host: measured at start, every
  // --calibrate-every and on request; never on this loop's thread.
  Calibrator calibrator_;
  // The cost budget (--max-overhead, lcpictl budget): the rate each window
  // samples at. Made once the source has started (its events' periods).
  std::optional<RateGovernor> governor_;
  bool govern_early_ = true;  // GovernEarly is due: at start and after lcpictl budget
  Clock::time_point next_periodic_calibration_ = Clock::time_point::max();
  Clock::time_point next_retry_calibration_ = Clock::time_point::max();  // retry_'s later try
  uint64_t calibrations_seen_ = 0;     // calibrator_'s runs offered to the governor
  uint64_t calibration_cpu_seen_ = 0;  // and their CPU, ns
  uint64_t last_failures_ = 0;
  bool confirming_ = false;          // the calibration running confirms the last one
  uint64_t confirming_started_ = 0;  // how many did (status)
  // When a calibration that settled nothing (failed, refused, or a
  // confirmation that disagreed) is tried again while one is wanted.
  CalibrationRetry retry_{options_.calibrate_every};
  CalibrationReserve reserve_{options_.calibrate_every};
  std::optional<StackReserve> stack_reserve_;  // set in Start
  // HoldBack's two shares, and what the stacks cost (over their share when
  // it is capped), for the status
  double calibration_reserved_pct_ = 0, stacks_reserved_pct_ = 0, stacks_cost_pct_ = 0;
  CpuOnlineWatch cpus_online_;  // their count at the last window's end
  uint64_t cpu_online_calibrations_ = 0;
  // What each batch's samples cost, for the window's row (set in Start).
  std::optional<CostMeter> cost_meter_;
  // The identity of lcpid's own executable (set in Start; empty: not
  // known), stored per window for the reports' observer line.
  std::string self_image_;
  // The batch's cost since the last (cost_meter_), lcpid's pid and executable.
  void MeasureCost(MergeBatch& batch, const DrainStats& now);
  Clock::time_point next_flush_;
  Clock::time_point retry_after_;  // no merge starts on its own before (after a failure)
  uint64_t early_merges_ = 0;      // started by --max-pending-entries
  // How long the loop itself spent handing a batch over (StartMerge) and
  // taking the result back (FinishMerge): sampling waits that long.
  uint64_t last_handover_us_ = 0, max_handover_us_ = 0;
  void NoteHandover(Clock::time_point since);
  static uint64_t MicrosSince(Clock::time_point since);
  // The longest the loop went without looking at the control socket, and
  // the longest a status reply took to make: what a status request waits
  // for inside lcpid is at most their sum.
  uint64_t max_loop_gap_us_ = 0, max_status_us_ = 0;
  SlowestStep slowest_step_;  // where the loop's longest step went
  // The database refuses merges (a batch is held) and the pending entries
  // reached --max-pending-entries: the held batch's counts are dropped, and
  // the pending ones taken and dropped into it (held_batch.h).
  void DropHeld();
  uint64_t pending_dropped_ = 0;  // samples dropped so, since start
  // After a merge is in: the images no address space maps and no pending
  // count names are forgotten (ImageTable::Forget), so the table follows
  // what runs, not everything that ever ran.
  void ForgetImages();
  uint64_t images_forgotten_ = 0;
  // What retention dropped, over the database (ProfileDb::DropEpochs keeps
  // it as retention_dropped.*): read where retention runs, with the writer
  // idle, since status may be asked while the writer has the connection.
  int64_t retention_dropped_samples_ = 0;
  int64_t retention_dropped_counts_ = 0;
  uint64_t db_bytes_ = 0;                   // the file's size when the writer was last idle
  int64_t window_end_ = 0;                  // unix seconds: CloseWindow is due
  uint64_t dropped_epochs_ = 0;             // by retention, since start
  uint64_t rolled_up_epochs_ = 0;           // merged into coarser ones, since start
  ShipHold ship_hold_{options_.ship_mark};  // the windows lcpi-ship has not sent
  std::string last_retention_error_;
  DrainStats stored_stats_;  // drain statistics already handed to a batch
  uint64_t flushes_ = 0;
  uint64_t failed_flushes_ = 0;
  // Since start: what merges set aside (MergeReport) and batches refused
  // for their content (dropped, not retried).
  uint64_t quarantined_images_ = 0, quarantined_rows_ = 0, quarantined_samples_ = 0;
  uint64_t refused_batches_ = 0, refused_samples_ = 0;
  std::string last_flush_error_;
};

}  // namespace lcpi

#endif  // LCPI_DAEMON_DAEMON_H
