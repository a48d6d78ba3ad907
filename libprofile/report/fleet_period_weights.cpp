// fleet_period_weights.cpp - the fleet's period weights (fleet_period_weights.h):
// refused periods, the reference as the lower median, saturated sums.
#include "libprofile/report/fleet_period_weights.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace lcpi::report {

bool FleetPeriodValid(uint64_t period) { return period >= 1 && period <= kMaxFleetPeriod; }

std::optional<size_t> ReferenceHost(const std::vector<HostPeriod>& newest) {
  std::vector<size_t> valid;
  for (size_t i = 0; i < newest.size(); ++i)
    if (FleetPeriodValid(newest[i].period)) valid.push_back(i);
  if (valid.empty()) return std::nullopt;
  // The lower median of the hosts' periods, ties by host name: no start
  // (any host may plant the newest window) and no lone host's period sets
  // it; a hostile host moves it by at most one place among the others.
  std::sort(valid.begin(), valid.end(), [&](size_t a, size_t b) {
    return std::tie(newest[a].period, newest[a].host) < std::tie(newest[b].period, newest[b].host);
  });
  return valid[(valid.size() - 1) / 2];
}

std::optional<long double> PeriodWeight::Of(uint64_t period) const {
  if (!FleetPeriodValid(period)) return std::nullopt;
  if (reference_ == 0) return 1.0L;
  // Both at most 2^62: exact in a long double's 64-bit mantissa, and the
  // weight (2^-62 .. 2^62) times any count stays far inside its range.
  return static_cast<long double>(period) / static_cast<long double>(reference_);
}

uint64_t WeighedCount(long double sum, bool* saturated) {
  constexpr long double kMaxCount = 18446744073709551615.0L;  // exact: 64-bit mantissa
  const long double rounded = std::round(sum);
  *saturated = !(rounded < kMaxCount);  // NaN too
  if (*saturated) return std::numeric_limits<uint64_t>::max();
  return rounded > 0 ? static_cast<uint64_t>(rounded) : 0;
}

}  // namespace lcpi::report
