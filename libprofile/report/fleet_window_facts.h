// fleet_window_facts.h - what a window says of itself beside its rows, as
// the fleet ships it (table window_facts, fleet_schema.h): lcpid's
// statistics of the window as "stat.NAME" (attributed, unknown, lost, ...)
// and what its sampling cost (window_costs, observer_cost.h) as
// "cost.FIELD", one (name, value) row each. lcpi-ship writes them
// (ship/window_rows.cpp) and the fleet header reads their sums back
// (fleet_profile.cpp), both through this one list of names.
#ifndef LCPI_LIBPROFILE_REPORT_FLEET_WINDOW_FACTS_H
#define LCPI_LIBPROFILE_REPORT_FLEET_WINDOW_FACTS_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libprofile/report/report.h"
#include "libprofile/store/profile_db.h"

namespace lcpi::report {

struct WindowFact {
  std::string name;
  int64_t value = 0;
};

// One window's facts: every statistic, and its cost where one was stored
// (none before lcpid's first calibration). A cost figure beyond 2^63-1 is
// shipped as that.
std::vector<WindowFact> WindowFacts(const std::map<std::string, int64_t>& stats,
                                    const std::optional<WindowCost>& cost);

// The names a fleet header reads (FactSumsInto): the statistics of its
// unknown, lost and throttled shares, and the cost's fields. Any host may
// ship any name; only these are asked for.
std::vector<std::string> FactNamesRead();

// Sums of facts over the windows of a fleet report (as doubles: any host
// may ship any value; the caller sums only values above 0) into its
// header: the statistics ("stat.NAME" as NAME), the unknown, lost and
// throttled shares of them, and the cost where any window shipped one.
// Each sum is clamped to its field's range (NaN and below 0: 0); names
// that are neither are ignored.
void FactSumsInto(const std::map<std::string, double>& sums, Header& h);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_FLEET_WINDOW_FACTS_H
