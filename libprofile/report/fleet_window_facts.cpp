// fleet_window_facts.cpp - a window's statistics and cost as named values,
// and their sums back (fleet_window_facts.h).
#include "libprofile/report/fleet_window_facts.h"

#include <algorithm>
#include <limits>

namespace lcpi::report {

namespace {

constexpr const char* kStatPrefix = "stat.";

// The cost's fields by name, in WindowCost's order: the one list both
// directions read.
struct CostField {
  const char* name;
  uint64_t WindowCost::*field;
};
constexpr CostField kCostFields[] = {
    {"cost.samples", &WindowCost::samples},
    {"cost.cpu_ns", &WindowCost::cpu_ns},
    {"cost.interrupt_ns", &WindowCost::interrupt_ns},
    {"cost.interrupt_ci95_ns", &WindowCost::interrupt_ci95_ns},
    {"cost.daemon_ns", &WindowCost::daemon_ns},
    {"cost.module_samples", &WindowCost::module_samples},
    {"cost.module_handler_ns", &WindowCost::module_handler_ns},
    {"cost.stack_samples", &WindowCost::stack_samples},
};

// A sum as an integer of at most `top`: NaN and below 0 are 0.
template <typename T>
T Clamped(double sum) {
  constexpr T top = std::numeric_limits<T>::max();
  if (!(sum > 0)) return 0;
  // top as a double rounds up to 2^63 or 2^64: anything there or beyond is top
  if (sum >= static_cast<double>(top)) return top;
  return static_cast<T>(sum);
}

}  // namespace

std::vector<WindowFact> WindowFacts(const std::map<std::string, int64_t>& stats,
                                    const std::optional<WindowCost>& cost) {
  std::vector<WindowFact> out;
  for (const auto& [name, value] : stats) out.push_back({kStatPrefix + name, value});
  if (cost) {
    constexpr uint64_t top = std::numeric_limits<int64_t>::max();
    for (const CostField& f : kCostFields)
      out.push_back({f.name, static_cast<int64_t>(std::min((*cost).*f.field, top))});
  }
  return out;
}

std::vector<std::string> FactNamesRead() {
  std::vector<std::string> out;
  for (const char* stat : kShareStats) out.push_back(kStatPrefix + std::string(stat));
  for (const CostField& f : kCostFields) out.push_back(f.name);
  return out;
}

void FactSumsInto(const std::map<std::string, double>& sums, Header& h) {
  const std::string prefix = kStatPrefix;
  for (const auto& [name, sum] : sums)
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0)
      h.stats[name.substr(prefix.size())] = Clamped<int64_t>(sum);
  SetSampleShares(h);
  if (!sums.count(kCostFields[0].name)) return;  // no window of the selection shipped a cost
  WindowCost cost;
  for (const CostField& f : kCostFields)
    if (auto it = sums.find(f.name); it != sums.end())
      cost.*f.field = Clamped<uint64_t>(it->second);
  h.cost = cost;
}

}  // namespace lcpi::report
