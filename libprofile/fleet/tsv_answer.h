// tsv_answer.h - a ClickHouse answer in TabSeparated, read row by row.
// The answer's text is bounded by ClickHouseHttp (256 MiB); what it parses
// into is bounded here: each row is handed to the caller as it is read (no
// table of every row is built), a row of the wrong width ends the reading
// at that row, and a query answering more than `max_rows` rows is refused
// (a hostile or mistaken server's 256 MiB of "\n" is 268 M rows).
#ifndef LCPI_LIBPROFILE_FLEET_TSV_ANSWER_H
#define LCPI_LIBPROFILE_FLEET_TSV_ANSWER_H

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi::fleet {

// The rows one query may answer (lcpiprof --fleet's reports read sums per
// image, label, process or sampled offset: a fleet's are well under this).
inline constexpr size_t kMaxAnswerRows = 5'000'000;

// Calls `row` with the fields of each line of `text` (split at tabs, as
// written, not unescaped: the reports read strings as hex()). kCorrupt at
// the first row without exactly `fields` fields, or when the answer has
// more than `max_rows` rows (before `row` sees the one past the limit);
// an error `row` returns ends the reading and is returned.
Expected<void> ForEachTsvRow(
    std::string_view text, size_t fields, size_t max_rows,
    const std::function<Expected<void>(const std::vector<std::string_view>&)>& row);

}  // namespace lcpi::fleet

#endif  // LCPI_LIBPROFILE_FLEET_TSV_ANSWER_H
