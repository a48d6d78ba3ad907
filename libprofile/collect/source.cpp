// source.cpp - arithmetic on source statistics.
#include "libprofile/collect/source.h"

namespace lcpi {

void AddTableStats(lcpi_table_stats& into, const lcpi_table_stats& from) {
  into.samples += from.samples;
  into.hits += from.hits;
  into.misses += from.misses;
  into.evictions += from.evictions;
  into.saturations += from.saturations;
  into.flushed += from.flushed;
  into.swaps += from.swaps;
  into.dropped += from.dropped;
}

SourceStats operator-(const SourceStats& now, const SourceStats& before) {
  SourceStats d = now;
  const lcpi_table_stats& b = before.table;
  d.table.samples -= b.samples;
  d.table.hits -= b.hits;
  d.table.misses -= b.misses;
  d.table.evictions -= b.evictions;
  d.table.saturations -= b.saturations;
  d.table.flushed -= b.flushed;
  d.table.swaps -= b.swaps;
  d.table.dropped -= b.dropped;
  d.lost -= before.lost;
  d.throttled -= before.throttled;
  d.throttled_lost_estimate -= before.throttled_lost_estimate;
  d.nested -= before.nested;
  d.nmi_samples -= before.nmi_samples;
  d.handler_ns_hit -= before.handler_ns_hit;
  d.handler_ns_miss -= before.handler_ns_miss;
  d.buffers -= before.buffers;
  d.bad_records -= before.bad_records;
  d.stacks -= before.stacks;
  d.stacks_lost -= before.stacks_lost;
  d.stack_copy_bytes -= before.stack_copy_bytes;
  for (size_t e = 0; e < LCPI_MAX_EVENTS; ++e) {
    d.time_enabled[e] -= before.time_enabled[e];
    d.time_running[e] -= before.time_running[e];
  }
  return d;
}

}  // namespace lcpi
