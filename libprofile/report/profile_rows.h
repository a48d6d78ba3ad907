// profile_rows.h - the steps of lcpiprof's report that do not depend on
// where the counts come from: checking the options, naming the samples of
// one image by procedure, sorting and --top/--keep. BuildProfile (a local
// database, report.cpp) and BuildFleetProfile (ClickHouse,
// fleet_profile.cpp) both build their Profile with these, so a fleet
// report's rows are made as a local one's are.
#ifndef LCPI_LIBPROFILE_REPORT_PROFILE_ROWS_H
#define LCPI_LIBPROFILE_REPORT_PROFILE_ROWS_H

#include <vector>

#include "libprofile/report/offset_counts.h"
#include "libprofile/report/report.h"
#include "libprofile/report/report_symbols.h"

namespace lcpi::report {

// What the labels of `o` ask is answerable: known keys, a view that can.
Expected<void> CheckLabels(const ProfOptions& o);
// --keep in [0, 100] and CheckLabels.
Expected<void> CheckProfOptions(const ProfOptions& o);
// A Profile of o's view, by and labels over `header`, its sort column set
// (kInvalidArgument: --sort names no event of the header).
Expected<Profile> StartProfile(const ProfOptions& o, Header header);
// The header's column of event `sort` ("" the first); kInvalidArgument if none.
Expected<size_t> SortColumn(const Header& h, const std::string& sort);
// The sampled offsets of `info` grouped by procedure (sym), the samples no
// symbol covers into ranges (kRangeGap apart at most), appended to *rows.
void AddProcedureRows(const CountsByOffset& offsets, const ImageSymbolizer& sym,
                      const ImageInfo& info, size_t events, std::vector<Row>* rows);
// Largest first by the sort column, ties by the others, then by name.
void SortRows(std::vector<Row>* rows, size_t column);
// --keep and --top over sorted rows; what they cut is counted.
void Trim(Profile* p, double keep, size_t top);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_PROFILE_ROWS_H
