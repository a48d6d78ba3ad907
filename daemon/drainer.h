// drainer.h - lcpid's drain thread: the only thread that reads the sampling
// source (the perf rings and their hash tables, or /dev/lcpi) and the
// side-band rings. It does nothing else: no file is opened, no /proc read,
// no database touched, no socket read, so nothing a local user does (a FIFO,
// a hung mount, a huge binary, a slow control client) and no long merge can
// keep it from the rings.
//
// It sleeps until a sample ring or the module's device has a quarter's worth
// (perf's wakeup watermark; the module wakes on a sealed buffer), a
// side-band ring an eighth, the loop asks for something (an eventfd), or
// kLongestSleep passes. Every wake-up costs lcpid tens of microseconds
// whatever it reads (bench/results/daemon_ab.md: 43-47 us), so it should be
// rare: at 5,000 samples/s/CPU a ring reaches its watermark about once a
// second.
//
// What it reads goes to lcpid's loop as Drained items through a bounded
// queue: the side-band events first (they are applied before the buffers
// are resolved: every mapping made before a sample was written to the
// side-band before the sample was taken), then the sample buffers. When the
// loop falls behind and the queue holds kMaxQueuedRecords, a new item's
// buffers are dropped and their samples counted as lost (queue_dropped_*),
// never waited for; side-band events beyond kMaxQueuedEvents or
// kMaxQueuedEventBytes (their paths: up to two of 4 KiB each) likewise.
//
// The loop asks for a flush (RequestFlush): the drain thread drains the
// tables and queues an item carrying a FlushMark after everything sampled
// before the request. Stop: the source stops, a last flush, a last mark.
#ifndef LCPI_DAEMON_DRAINER_H
#define LCPI_DAEMON_DRAINER_H

#include <poll.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "libprofile/attribute/sideband.h"
#include "libprofile/base/unique_fd.h"
#include "libprofile/collect/source.h"

namespace lcpi {

// What the drain thread counted, as of one moment.
struct DrainStats {
  SourceStats source;
  SidebandReadStats sideband;
  uint64_t queue_dropped_samples = 0;      // in buffers dropped on a full queue
  uint64_t queue_dropped_table_drops = 0;  // their headers' drops (already lost in the table)
  uint64_t queue_dropped_events = 0;       // side-band events dropped on a full queue
  uint64_t queue_dropped_stacks = 0;       // call stacks dropped on a full queue
  size_t queued_records = 0;               // in the queue now
  size_t queued_event_bytes = 0;
  uint64_t queued_samples = 0;
};

// The tables were drained: every sample taken before the request is in
// this item or an earlier one.
struct FlushMark {
  Expected<void> drained;    // the source's Flush
  uint64_t reap_before = 0;  // side-band time read before the tables were drained
  DrainStats stats;          // as of the drain
  bool last = false;         // the source is stopped; nothing follows
  // The flush was asked to change the source's periods (RequestFlush): set
  // right after the drain, so every sample before the mark is at the old
  // ones and (to the microseconds of the ioctls) every one after at the new.
  // Once set, the periods the source says it samples at (a source may
  // raise one to its floor), or the asked ones if it refused them.
  std::optional<std::vector<uint64_t>> periods;
  Expected<void> periods_set;  // whether the source took them, if periods
};

struct Drained {
  std::vector<SidebandEvent> events;  // apply first
  std::vector<RecordBuffer> buffers;  // then resolve
  std::optional<FlushMark> mark;      // then, if set: the flush is complete
  std::string error;                  // reading the source failed: for the loop to log
  uint64_t records = 0, samples = 0;  // in buffers (set by the drain thread)
  uint64_t event_bytes = 0;           // of events (likewise)
};

class Drainer {
 public:
  static constexpr size_t kMaxQueuedRecords = 1u << 19;  // 8 MiB of 16-byte records
  static constexpr size_t kMaxQueuedEvents = 1u << 18;
  static constexpr size_t kMaxQueuedEventBytes = 64u << 20;  // EventBytes of each
  // The longest the thread sleeps with nothing to read and nothing asked:
  // the period jitter changes once a second, and the statistics age.
  static constexpr std::chrono::milliseconds kLongestSleep{1000};
  // How often the thread reads the source's statistics (for the module, a
  // GET_STATS per CPU, which reads each counter's times by IPI).
  static constexpr auto kStatsEvery = std::chrono::milliseconds(250);

  Drainer(Source& source, Sideband& sideband,
          std::chrono::milliseconds longest_sleep = kLongestSleep)
      : source_(source), sideband_(sideband), longest_sleep_(longest_sleep) {}
  ~Drainer();  // stops the thread (after RequestStop, it has ended already)
  Drainer(const Drainer&) = delete;
  Drainer& operator=(const Drainer&) = delete;

  // Starts the thread (signals blocked in it: lcpid's main thread takes them).
  Expected<void> Start();
  // The thread drains the tables and queues a FlushMark. Once the thread
  // has stopped, the mark is queued at once (nothing is left to drain).
  // periods: the source samples at these mean periods after the drain
  // (Source::SetMeanPeriods), a window's governed rate.
  void RequestFlush(std::optional<std::vector<uint64_t>> periods = std::nullopt);
  // The thread stops the source, drains it a last time and queues the
  // last FlushMark, then ends.
  void RequestStop();
  // Moves what is queued into `out`, waiting up to `wait` for something.
  void Take(std::deque<Drained>& out, std::chrono::milliseconds wait);
  // The statistics as of the last refresh (at most kStatsEvery old, or
  // the last mark's once the thread has stopped).
  DrainStats stats() const;
  // Statistics the thread takes after this call (it is woken for them;
  // the last ones if `wait` passes first): consistent with what the caller
  // has taken, since everything drained before them is counted as taken or
  // still queued.
  DrainStats FreshStats(std::chrono::milliseconds wait);

 private:
  void Run();
  // Ends the thread's sleep (any thread; after a request is recorded).
  void Wake();
  // On the thread: the tables drained into one item with its mark.
  Drained Flush(bool last, std::optional<std::vector<uint64_t>> periods = std::nullopt);
  // On the thread: queues d (within the bounds), with fresh statistics
  // when `refresh` (a mark's are taken for it).
  void Push(Drained d, bool refresh);
  DrainStats Snapshot() const;  // with mutex_ held

  Source& source_;
  Sideband& sideband_;
  const std::chrono::milliseconds longest_sleep_;
  UniqueFd wake_;                // an eventfd: the loop's requests
  std::vector<pollfd> pollfds_;  // the source's, the side-band's, wake_
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Drained> queue_;
  unsigned flush_requests_ = 0;
  std::optional<std::vector<uint64_t>> periods_requested_;  // for the next mark
  bool refresh_requested_ = false;
  uint64_t refreshes_ = 0;  // statistics taken so far
  DrainStats refreshed_;    // the last taken
  bool stop_requested_ = false;
  bool stopped_ = false;  // the thread has ended
  // Written by the thread under mutex_ after each read.
  SourceStats source_stats_;
  SidebandReadStats sideband_stats_;
  uint64_t queue_dropped_samples_ = 0, queue_dropped_table_drops_ = 0, queue_dropped_events_ = 0;
  uint64_t queue_dropped_stacks_ = 0;
  size_t queued_records_ = 0, queued_events_ = 0, queued_event_bytes_ = 0;
  uint64_t queued_samples_ = 0;
  std::chrono::steady_clock::time_point stats_at_{};  // the thread's: last refresh
  std::thread thread_;
};

}  // namespace lcpi

#endif  // LCPI_DAEMON_DRAINER_H
