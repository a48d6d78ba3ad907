// render_csv.cpp - a Document as CSV: the shown table's CSV columns, one
// heading row, then a row per table row. No header lines and no omitted
// summary: CSV is for programs that want the rows.
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
      const CellType type = table.columns[c].type;
      const bool text = type == CellType::kText || type == CellType::kPath;
      out +=
          (i ? "," : "") + CsvField(CellText(table.columns[c], row.cells[c], Format::kCsv), text);
    }
    out += "\n";
  }
  return out;
}

}  // namespace lcpi::report
