// event_spec.h - naming the events lcpi samples: "cycles", "imiss", any perf
// event by name ("cpu-clock", "branch-misses", ...) or raw ("r:TYPE:CONFIG"),
// and what each really became on this host after any fallback.
#ifndef LCPI_LIBPROFILE_COLLECT_EVENT_SPEC_H
#define LCPI_LIBPROFILE_COLLECT_EVENT_SPEC_H

#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

struct EventSpec {
  std::string name;     // as the user wrote it, and as stored in the database
  uint32_t type = 0;    // perf_event_attr.type
  uint64_t config = 0;  // perf_event_attr.config
  // Where the PMU lacks the event, sample the software cpu-clock instead.
  bool fallback_to_cpu_clock = true;
};

// What a source really samples for one requested event.
struct RealEvent {
  EventSpec requested;
  uint32_t type = 0;
  uint64_t config = 0;
  std::string used;  // "cycles", or "cpu-clock" after a fallback
  bool fell_back = false;
  uint64_t period = 0;  // mean period in the event's unit (ns for cpu-clock)
};

// Parses one event name. Errors name the bad input.
Expected<EventSpec> ParseEvent(const std::string& name);

// Parses "cycles,imiss". At most LCPI_MAX_EVENTS, no duplicates.
Expected<std::vector<EventSpec>> ParseEventList(const std::string& list);

// The cpu-clock event every host has.
EventSpec CpuClockEvent();

// "cpu-clock" for the software clock, else the event's name.
std::string PerfEventName(uint32_t type, uint64_t config);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_COLLECT_EVENT_SPEC_H
