// percent.h - the one share helper of the reports: `part` of `whole` in
// percent, 0 when there is no whole (an event without samples).
#ifndef LCPI_LIBPROFILE_REPORT_PERCENT_H
#define LCPI_LIBPROFILE_REPORT_PERCENT_H

#include <cstdint>

namespace lcpi::report {

inline double Percent(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_PERCENT_H
