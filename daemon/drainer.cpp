// drainer.cpp - the drain thread's loop, its bounded queue and its marks.
#include "daemon/drainer.h"

#include <sys/eventfd.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "libprofile/base/quiet_thread.h"

namespace lcpi {

namespace {

// What a queued side-band event holds: itself and its strings.
size_t EventBytes(const SidebandEvent& e) {
  return sizeof(e) + e.text.capacity() + e.file.path.capacity() + e.file.build_id.capacity();
}

}  // namespace

Drainer::~Drainer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
}

Expected<void> Drainer::Start() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    source_stats_ = source_.Stats();
    sideband_stats_ = sideband_.read_stats();
    refreshed_ = Snapshot();
  }
  wake_.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (wake_.get() < 0) return ErrnoError("drain thread: eventfd", errno);
  std::vector<int> fds = source_.PollFds();
  for (int fd : sideband_.fds()) fds.push_back(fd);
  fds.push_back(wake_.get());
  for (int fd : fds) pollfds_.push_back({fd, POLLIN, 0});
  thread_ = QuietThread([this] { Run(); });
  return {};
}

void Drainer::Wake() {
  if (wake_.get() < 0) return;
  const uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof(one));  // a full counter is awake already
}

void Drainer::RequestFlush(std::optional<std::vector<uint64_t>> periods) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!stopped_) {
    flush_requests_++;
    if (periods) periods_requested_ = std::move(periods);
    Wake();
    return;
  }
  // Nothing is left to drain: the mark can follow at once.
  Drained d;
  FlushMark mark;
  mark.reap_before = sideband_stats_.newest;
  mark.stats = refreshed_;
  mark.last = true;
  d.mark = std::move(mark);
  queue_.push_back(std::move(d));
  ready_.notify_all();
}

void Drainer::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  Wake();
}

void Drainer::Run() {
  for (;;) {
    Drained d;
    const int sleep_ms = static_cast<int>(longest_sleep_.count());
    if (poll(pollfds_.data(), pollfds_.size(), sleep_ms) < 0 && errno != EINTR)
      d.error = std::string("poll: ") + strerror(errno);
    uint64_t requests;
    (void)!read(wake_.get(), &requests, sizeof(requests));  // EAGAIN when none
    Expected<void> polled =
        source_.Poll(0, [&](RecordBuffer&& b) { d.buffers.push_back(std::move(b)); });
    if (!polled) d.error = polled.error().message();
    sideband_.Read(d.events);
    unsigned flushes;
    bool stop, refresh;
    std::optional<std::vector<uint64_t>> periods;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      flushes = std::exchange(flush_requests_, 0);
      periods = std::exchange(periods_requested_, std::nullopt);
      stop = stop_requested_;
      refresh = std::exchange(refresh_requested_, false);
    }
    const auto now = std::chrono::steady_clock::now();
    Push(std::move(d), refresh || now - stats_at_ >= kStatsEvery);
    if (stop) source_.Stop();
    // One mark per request: the loop counts them.
    // The periods change at the first of them.
    for (unsigned i = 0; i < flushes; ++i) Push(Flush(false, std::exchange(periods, {})), false);
    if (stop) {
      Push(Flush(true), false);
      return;
    }
  }
}

Drained Drainer::Flush(bool last, std::optional<std::vector<uint64_t>> periods) {
  Drained f;
  FlushMark mark;
  // Every address space that ended before this time has all its samples in
  // what the flush drains, or earlier: the loop may reap it after the mark.
  mark.reap_before = sideband_.read_stats().newest;
  mark.drained = source_.Flush([&](RecordBuffer&& b) { f.buffers.push_back(std::move(b)); });
  if (periods) {
    // The window stores what the source says it samples at now.
    Expected<std::vector<uint64_t>> set = source_.SetMeanPeriods(*periods);
    if (set)
      periods = std::move(*set);
    else
      mark.periods_set = set.error();
    mark.periods = std::move(periods);
  }
  sideband_.Read(f.events);
  mark.last = last;
  f.mark = std::move(mark);
  return f;
}

void Drainer::Push(Drained d, bool refresh) {
  const bool empty = d.buffers.empty() && d.events.empty() && !d.mark && d.error.empty();
  // (Taken before d is queued: d's samples are then counted as queued.)
  if (refresh || d.mark) {
    SourceStats source = source_.Stats();
    SidebandReadStats sideband = sideband_.read_stats();
    std::lock_guard<std::mutex> lock(mutex_);
    source_stats_ = source;
    sideband_stats_ = sideband;
    stats_at_ = std::chrono::steady_clock::now();
  }
  uint64_t stacks = 0;
  for (const RecordBuffer& b : d.buffers) {
    d.records += b.records.size();
    for (const lcpi_record& r : b.records) d.samples += r.count;
    // A call stack takes the room of records of its size (16 bytes each),
    // its user stack copy likewise, so stacks are bounded by the same queue.
    for (const StackSample& s : b.stacks)
      d.records += 1 + s.pcs.size() / 2 + s.user_stack.size() / sizeof(lcpi_record);
    stacks += b.stacks.size();
  }
  for (const SidebandEvent& e : d.events) d.event_bytes += EventBytes(e);
  std::lock_guard<std::mutex> lock(mutex_);
  if (d.records > 0 && queued_records_ + d.records > kMaxQueuedRecords) {
    // The loop is behind: these samples are lost, counted, never waited for.
    queue_dropped_samples_ += d.samples;
    queue_dropped_stacks_ += stacks;
    for (const RecordBuffer& b : d.buffers) queue_dropped_table_drops_ += b.header.dropped;
    d.buffers.clear();
    d.records = d.samples = 0;
  }
  // Side-band events are kept while there is room; past it, they are lost
  // as the kernel's ring would lose them (counted).
  if (queued_events_ + d.events.size() > kMaxQueuedEvents ||
      queued_event_bytes_ + d.event_bytes > kMaxQueuedEventBytes) {
    queue_dropped_events_ += d.events.size();
    std::vector<SidebandEvent>().swap(d.events);
    d.event_bytes = 0;
  }
  queued_records_ += d.records;
  queued_samples_ += d.samples;
  queued_events_ += d.events.size();
  queued_event_bytes_ += d.event_bytes;
  // One consistent moment: the source's counts, and what of them is queued.
  if (refresh || d.mark) {
    refreshed_ = Snapshot();
    refreshes_++;
  }
  if (d.mark) d.mark->stats = refreshed_;
  // With the last mark queued, a flush request is answered by the caller's
  // thread (RequestFlush): none may wait for this thread any more.
  if (d.mark && d.mark->last) stopped_ = true;
  if (!empty) queue_.push_back(std::move(d));
  ready_.notify_all();
}

void Drainer::Take(std::deque<Drained>& out, std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait_for(lock, wait, [&] { return !queue_.empty(); });
  while (!queue_.empty()) {
    Drained& d = queue_.front();
    queued_records_ -= d.records;
    queued_samples_ -= d.samples;
    queued_events_ -= d.events.size();
    queued_event_bytes_ -= d.event_bytes;
    out.push_back(std::move(d));
    queue_.pop_front();
  }
}

DrainStats Drainer::Snapshot() const {
  DrainStats s;
  s.source = source_stats_;
  s.sideband = sideband_stats_;
  s.queue_dropped_samples = queue_dropped_samples_;
  s.queue_dropped_stacks = queue_dropped_stacks_;
  s.queue_dropped_table_drops = queue_dropped_table_drops_;
  s.queue_dropped_events = queue_dropped_events_;
  s.queued_records = queued_records_;
  s.queued_event_bytes = queued_event_bytes_;
  s.queued_samples = queued_samples_;
  return s;
}

DrainStats Drainer::FreshStats(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!stopped_) {
    const uint64_t seen = refreshes_;
    refresh_requested_ = true;
    Wake();
    ready_.wait_for(lock, wait, [&] { return refreshes_ != seen || stopped_; });
  }
  return refreshed_;
}

DrainStats Drainer::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refreshed_;
}

}  // namespace lcpi
