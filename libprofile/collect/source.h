// source.h - where overflow records come from. A source samples every CPU,
// aggregates samples in the shared per-CPU hash table (lcpi_hashtable.h) and
// hands out sealed overflow buffers, each with its CPU and time window.
// Two sources stand behind this interface: PerfSource (perf_event_open ring
// buffers, aggregated in user space) and KmodSource (/dev/lcpi), so lcpid
// treats both alike.
#ifndef LCPI_LIBPROFILE_COLLECT_SOURCE_H
#define LCPI_LIBPROFILE_COLLECT_SOURCE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lcpi_abi.h"
#include "libprofile/base/error.h"
#include "libprofile/collect/event_spec.h"
#include "libprofile/collect/stack_sample.h"

namespace lcpi {

// One sealed overflow buffer: header (CPU, sequence, time window, drops) and
// records. Records' event field indexes Source::Events().
struct RecordBuffer {
  lcpi_buffer_header header{};
  std::vector<lcpi_record> records;
  // Call stacks of the stack event (perf source, --stack-frequency), taken
  // in the buffer's window. A buffer of stacks has no records.
  std::vector<StackSample> stacks;
};

struct SourceOptions {
  std::vector<EventSpec> events;  // 1..LCPI_MAX_EVENTS
  uint64_t period = 0;            // mean period (events; ns for cpu-clock), or
  uint64_t frequency = 0;         // samples per second per CPU (exactly one is set)
  uint32_t jitter_pct = 10;       // period randomised by +- this %
  // Call stacks per second per CPU, sampled by a cpu-clock event of their
  // own beside the flat events (both sources: stack_rings.h); 0: none.
  uint64_t stack_frequency = 0;
};

struct SourceStats {
  lcpi_table_stats table{};  // summed over CPUs
  uint64_t lost = 0;         // samples the kernel lost before the table
  uint64_t throttled = 0;    // times perf's core throttled an event (not samples)
  // kmod: samples the throttled events would have taken, estimated from
  // each throttle's length and the event's interval (lcpi_abi.h); lost
  uint64_t throttled_lost_estimate = 0;
  uint64_t nested = 0;           // kmod: samples dropped, table in use (NMI nesting)
  uint64_t nmi_samples = 0;      // kmod: handler runs in NMI context (PMU overflows)
  uint64_t handler_ns_hit = 0;   // kmod: handler time spent on hits
  uint64_t handler_ns_miss = 0;  // kmod: handler time spent on misses
  uint64_t buffers = 0;          // buffers delivered
  // perf: records of impossible size in a sample ring; each ends that read
  // of the ring, whose rest (samples nobody can count) is skipped.
  uint64_t bad_records = 0;
  uint64_t stacks = 0;            // call stacks taken (perf source, --stack-frequency)
  uint64_t stacks_lost = 0;       // call stacks the kernel lost (their ring was full)
  uint64_t stack_copy_bytes = 0;  // of user stack copied with them (for the unwinder)
  // Per event (Source::Events() order), summed over CPUs: ns each event was
  // enabled, and ns it was really on the PMU counting. running < enabled
  // means the PMU multiplexed it: its samples undercount by running/enabled.
  uint64_t time_enabled[LCPI_MAX_EVENTS] = {};
  uint64_t time_running[LCPI_MAX_EVENTS] = {};
  // The time (ns, monotonic; perf's clock for the perf source) up to which
  // the sample counts above go: samples are counted when read, which can
  // lag their taking, so a rate is a difference of counts over one of these.
  uint64_t as_of_ns = 0;
};

// Sums (per-CPU totals) and differences (deltas since a baseline), field by field.
void AddTableStats(lcpi_table_stats& into, const lcpi_table_stats& from);
SourceStats operator-(const SourceStats& now, const SourceStats& before);

class Source {
 public:
  // Each buffer is handed over whole: a sink that keeps it moves it (one
  // copy out of the table in all, not one more per queue).
  using BufferSink = std::function<void(RecordBuffer&&)>;

  virtual ~Source() = default;
  // "perf" or "kmod".
  virtual std::string Name() const = 0;
  // Opens the events on every online CPU and starts sampling. An event the
  // PMU lacks is refused (logged, listed in Refused()) unless it may fall
  // back to cpu-clock; Start fails if no event is left, or on any other
  // error.
  virtual Expected<void> Start() = 0;
  // Stops sampling; buffers already sealed can still be drained by Flush().
  virtual void Stop() = 0;
  // Waits up to timeout_ms for sealed buffers and hands each to sink.
  virtual Expected<void> Poll(int timeout_ms, const BufferSink& sink) = 0;
  // What Poll waits on (POLLIN), valid after Start(): a caller that also
  // waits for other things polls these with its own, then calls Poll(0).
  virtual std::vector<int> PollFds() const = 0;
  // Drains every CPU's hash table and hands every buffer to sink, so all
  // samples taken before the call have been delivered when it returns.
  virtual Expected<void> Flush(const BufferSink& sink) = 0;
  virtual SourceStats Stats() const = 0;
  // What each sampled event really is (after any fallback); valid after
  // Start(). Refused events are not in it: records index this list.
  virtual const std::vector<RealEvent>& Events() const = 0;
  // The requested events Start() refused, each with its reason.
  virtual const std::vector<RefusedEvent>& Refused() const = 0;
  // Samples from now on at these mean periods (one per Events(), in their
  // unit), still randomised by the jitter: the cost budget's governed rate
  // (libprofile/budget/rate_governor.h). Called by the thread that polls
  // and flushes the source (the drain thread), at a window's mark; Events()
  // keeps the asked periods. Returns the mean periods sampled at from now
  // on, as the source has them (what a window stores as its period); a
  // source that cannot change them while it runs says why.
  virtual Expected<std::vector<uint64_t>> SetMeanPeriods(const std::vector<uint64_t>& periods) = 0;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_COLLECT_SOURCE_H
