// fleet_period_weights.h - how lcpiprof --fleet weighs windows sampled at
// different periods (docs/fleet.md): every period and count comes from a
// shipping host, so a hostile one's must not reach past its own rows.
#ifndef LCPI_LIBPROFILE_REPORT_FLEET_PERIOD_WEIGHTS_H
#define LCPI_LIBPROFILE_REPORT_FLEET_PERIOD_WEIGHTS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lcpi::report {

// The longest period a fleet report weighs: lcpi.ko takes periods below
// 2^62 (lcpi_attr.h) and lcpid's perf events ask far less; a row shipped at
// 0 or beyond is refused (not summed; the report warns), so a weight is
// within 2^-62..2^62 and no product of it overflows a long double.
inline constexpr uint64_t kMaxFleetPeriod = uint64_t{1} << 62;
bool FleetPeriodValid(uint64_t period);  // 1..kMaxFleetPeriod

// One host's newest window of an event in the selection, as shipped.
struct HostPeriod {
  std::string host;
  int64_t started = 0;  // its start: the host's word, so not used to choose
  uint64_t period = 0;
};

// The host whose period every window of the event is weighed to (its
// index in `newest`): the lower median of the valid periods, ties by host
// name; nullopt: none valid. Not the newest window: its start is the
// host's word, and one host planting a far-future window at period 1 (or
// 2^62) would scale every host's counts by up to 2^62.
std::optional<size_t> ReferenceHost(const std::vector<HostPeriod>& newest);

// An event column's weight for a window sampled at `period`: its period
// over `reference` (0: the selection has one period: not weighed).
class PeriodWeight {
 public:
  explicit PeriodWeight(uint64_t reference) : reference_(reference) {}
  // nullopt: a period refused (its counts are not summed)
  std::optional<long double> Of(uint64_t period) const;

 private:
  uint64_t reference_;
};

// A weighed sum as a count: rounded, and clamped at 2^64-1 (*saturated
// set), never wrapped nor llround's unspecified value.
uint64_t WeighedCount(long double sum, bool* saturated);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_FLEET_PERIOD_WEIGHTS_H
