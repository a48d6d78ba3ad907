// event_spec.h - naming the events lcpi samples: "cycles", "imiss", any perf
// event by name ("cpu-clock", "branch-misses", ...) or raw ("r:TYPE:CONFIG"),
// and what each really became on this host after any fallback.
//
// Events degrade honestly: only "cycles" may be sampled as the software
// cpu-clock where the PMU lacks it (time is an honest proxy for cycles, and
// the fallback is labelled). Any other event the PMU lacks is refused by
// name, never sampled as something else; a source runs with the events it
// can sample and fails only if none is left.
#ifndef LCPI_LIBPROFILE_COLLECT_EVENT_SPEC_H
#define LCPI_LIBPROFILE_COLLECT_EVENT_SPEC_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

struct EventSpec {
  std::string name;     // as the user wrote it, and as stored in the database
  uint32_t type = 0;    // perf_event_attr.type
  uint64_t config = 0;  // perf_event_attr.config
  // Where the PMU lacks the event, sample the software cpu-clock instead
  // (ParseEvent sets it for "cycles" only).
  bool fallback_to_cpu_clock = false;
};

// What a source really samples for one requested event.
struct RealEvent {
  EventSpec requested;
  uint32_t type = 0;
  uint64_t config = 0;
  std::string used;  // "cycles", or "cpu-clock" after a fallback
  bool fell_back = false;
  uint64_t period = 0;  // mean period in the event's unit (ns for cpu-clock)
  // perf_event_attr.precise_ip it was opened with: the highest of 3, 2, 1
  // the PMU accepted (x86 PEBS: 2 or 3, the exact instruction), else 0 (the
  // sample may skid past it; always 0 for software events).
  int precise = 0;
  // kmod: created, but its time_running did not advance on any CPU in the
  // module's probe after START (LCPI_EVENT_INFO_NOT_RUNNING): the PMU had
  // no counter for it (a user's pinned events, a constraint). Its samples
  // are missing until it runs; lcpictl status says "not running".
  bool not_running = false;
};

// A requested event a source could not sample (the PMU lacks it) and
// would not fake: reason says which event, which PMU, and why.
struct RefusedEvent {
  EventSpec requested;
  std::string reason;
};

// Parses one event name. Errors name the bad input.
Expected<EventSpec> ParseEvent(const std::string& name);

// Parses "cycles,imiss". At most LCPI_MAX_EVENTS, no duplicates.
Expected<std::vector<EventSpec>> ParseEventList(const std::string& list);

// How an event is opened: its perf_event_attr.precise_ip, and whether
// guest mode is excluded (exclude_guest).
struct OpenLevel {
  int precise = 0;
  bool exclude_guest = true;
};

// The best OpenLevel the PMU takes for (type, config), found by asking
// try_open (a perf_event_open with those attributes; an error if refused)
// with lcpi.ko's own rules (kmod/include/lcpi_attr.h, not a copy): precise
// from 3 down for hardware cycles and instructions, where Intel PEBS or AMD
// IBS can tag the exact instruction, only 0 for every other event (a raw or
// cache event PEBS cannot take may pass creation at 3 on Intel before
// Icelake and then never be scheduled); after EINVAL at a precise level with exclude_guest, the
// same level once without it (AMD's IBS PMUs refuse exclude_guest); on any other error, or if that
// fails too, one level lower with exclude_guest again. Never asks at precise 0: when every precise
// level was refused it returns {0, exclude_guest}, for the caller to open (and report or fall
// back).
OpenLevel ChooseOpenLevel(uint32_t type, uint64_t config,
                          const std::function<Expected<void>(const OpenLevel&)>& try_open);

// The cpu-clock event every host has.
EventSpec CpuClockEvent();

// "cpu-clock" for the software clock, else the event's name.
std::string PerfEventName(uint32_t type, uint64_t config);

// The CPU's PMU(s) as perf names them under devices_dir (a PMU of type
// PERF_TYPE_RAW or with a "cpus" list: "cpu", "cpu_core/cpu_atom",
// "armv8_pmuv3_0"), or "" when this host has none.
std::string CpuPmuName(const std::string& devices_dir = "/sys/bus/event_source/devices");

// The message for an event the PMU lacks: names the event, the PMU (pmu,
// "" for none) and the error, and says it is not sampled as anything else.
std::string RefusalReason(const EventSpec& event, const std::string& pmu, const std::string& error);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_COLLECT_EVENT_SPEC_H
