// render_csv.cpp - a Document as CSV: the shown table's CSV columns, one
// heading row, then a row per table row. No header lines and no omitted
// summary: CSV is for programs that want the rows.
//
// Nor the notes the other formats carry (a multiplexed event's scale,
// epochs of different precise_ip): CSV has no comment or metadata
// convention to put them in, and a leading "#" line or a trailing section
// would appear only when the PMU multiplexed, breaking a reader (Python's
// csv, pprof_check.py) on exactly the data it was not tested on. The counts
// are scaled as everywhere; the tool's warning on stderr says so
// (docs/tools.md, "Multiplexed events are scaled").
#include "libprofile/report/cell_format.h"
#include "libprofile/report/table.h"

namespace lcpi::report {

std::string RenderCsv(const Document& doc) {
  const Table& table = doc.tables[doc.shown_table];
  const std::vector<size_t>& order = table.order[static_cast<size_t>(Format::kCsv)];
  std::string out;
  for (size_t i = 0; i < order.size(); ++i) {
    out += (i ? "," : "") + CsvField(table.columns[order[i]].name, false);
  }
  out += "\n";
  for (const TableRow& row : table.rows) {
    for (size_t i = 0; i < order.size(); ++i) {
      const size_t c = order[i];
      const Cell& cell = row.cells[c];
      // A text cell's own bytes: CsvField escapes them (Printable) and
      // quotes; CellText's display string would be escaped twice.
      const bool text = std::holds_alternative<std::string>(cell);
      out += (i ? "," : "") + (text ? CsvField(std::get<std::string>(cell), true)
                                    : CellText(table.columns[c], cell, Format::kCsv));
    }
    out += "\n";
  }
  return out;
}

}  // namespace lcpi::report
