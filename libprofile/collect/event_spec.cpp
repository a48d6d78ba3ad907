// event_spec.cpp - the table of known event names and the parser.
#include "libprofile/collect/event_spec.h"

#include <linux/perf_event.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "lcpi_abi.h"
#include "lcpi_attr.h"

namespace lcpi {
namespace {

struct KnownEvent {
  const char* name;
  uint32_t type;
  uint64_t config;
};

constexpr uint64_t CacheConfig(uint64_t cache, uint64_t op, uint64_t result) {
  return cache | (op << 8) | (result << 16);
}

const KnownEvent kKnownEvents[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"imiss", PERF_TYPE_HW_CACHE,
     CacheConfig(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ,
                 PERF_COUNT_HW_CACHE_RESULT_MISS)},
    {"dmiss", PERF_TYPE_HW_CACHE,
     CacheConfig(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                 PERF_COUNT_HW_CACHE_RESULT_MISS)},
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
};

// Only cycles may be sampled as the cpu-clock: time is an honest proxy for
// cycles, for nothing else.
bool IsCyclesName(const std::string& name) { return name == "cycles"; }

}  // namespace

std::string CpuPmuName(const std::string& devices_dir) {
  std::set<std::string> names;  // sorted: "cpu_atom/cpu_core"
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator(devices_dir, ec)) {
    std::string name = d.path().filename().string();
    uint32_t type = 0;
    std::ifstream t(d.path() / "type");
    bool raw = (t >> type) && type == PERF_TYPE_RAW;
    if (raw || std::filesystem::exists(d.path() / "cpus", ec)) names.insert(name);
  }
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : "/") + n;
  return out;
}

std::string RefusalReason(const EventSpec& event, const std::string& pmu,
                          const std::string& error) {
  std::string where = pmu.empty() ? "this host has no hardware PMU"
                                  : "the CPU's PMU (" + pmu + ") cannot sample it here";
  return "event '" + event.name + "' refused: " + where + " (" + error +
         "); it is not sampled as anything else (only 'cycles' may fall back to cpu-clock)";
}

OpenLevel ChooseOpenLevel(uint32_t type, uint64_t config,
                          const std::function<Expected<void>(const OpenLevel&)>& try_open) {
  // lcpi_attr_retry() decides the next attempt, as in the module. It needs
  // only whether the error was EINVAL, which ErrnoError alone maps to
  // kInvalidArgument; the fallback it may take at precise 0 is never
  // reached here (the perf source falls back itself).
  lcpi_event_config ev{};
  ev.type = type;
  ev.config = config;
  uint8_t precise = lcpi_attr_precise_first(&ev);
  uint8_t guest = 0;
  while (precise > 0) {
    Expected<void> opened = try_open(OpenLevel{precise, guest == 0});
    if (opened) break;
    long err = opened.error().code() == Errc::kInvalidArgument ? -EINVAL : -EIO;
    lcpi_attr_retry(&ev, &precise, &guest, err);
  }
  return OpenLevel{precise, guest == 0};
}

EventSpec CpuClockEvent() {
  return EventSpec{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false};
}

std::string PerfEventName(uint32_t type, uint64_t config) {
  for (const KnownEvent& k : kKnownEvents)
    if (k.type == type && k.config == config) return k.name;
  std::ostringstream os;
  os << "r:" << type << ":0x" << std::hex << config;
  return os.str();
}

Expected<EventSpec> ParseEvent(const std::string& name) {
  for (const KnownEvent& k : kKnownEvents)
    if (name == k.name) return EventSpec{name, k.type, k.config, IsCyclesName(name)};
  // r:TYPE:CONFIG, numbers in any base strtoull accepts
  if (name.rfind("r:", 0) == 0) {
    std::string rest = name.substr(2);
    size_t colon = rest.find(':');
    if (colon != std::string::npos && colon > 0 && colon + 1 < rest.size()) {
      try {
        size_t used1 = 0, used2 = 0;
        unsigned long type = std::stoul(rest.substr(0, colon), &used1, 0);
        unsigned long long config = std::stoull(rest.substr(colon + 1), &used2, 0);
        if (used1 == colon && used2 == rest.size() - colon - 1 && type <= UINT32_MAX)
          return EventSpec{name, static_cast<uint32_t>(type), config, false};
      } catch (const std::exception&) {
      }
    }
    return Error(Errc::kInvalidArgument, "bad raw event '" + name + "': want r:TYPE:CONFIG");
  }
  std::string known;
  for (const KnownEvent& k : kKnownEvents) known += std::string(known.empty() ? "" : ", ") + k.name;
  return Error(Errc::kInvalidArgument,
               "unknown event '" + name + "' (known: " + known + ", or r:TYPE:CONFIG)");
}

Expected<std::vector<EventSpec>> ParseEventList(const std::string& list) {
  std::vector<EventSpec> events;
  std::set<std::string> seen;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) return Error(Errc::kInvalidArgument, "empty event name in '" + list + "'");
    Expected<EventSpec> e = ParseEvent(item);
    if (!e) return e.error();
    if (!seen.insert(item).second)
      return Error(Errc::kInvalidArgument, "event '" + item + "' named twice");
    events.push_back(*e);
  }
  if (events.empty()) return Error(Errc::kInvalidArgument, "no events given");
  if (events.size() > LCPI_MAX_EVENTS)
    return Error(Errc::kInvalidArgument,
                 "at most " + std::to_string(LCPI_MAX_EVENTS) + " events at once");
  return events;
}

}  // namespace lcpi
