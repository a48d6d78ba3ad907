// render_csv.cpp - a Document as CSV: the shown table's CSV columns, one
// heading row, then a row per table row. No header lines and no omitted
// summary: CSV is for programs that want the rows.
#include "libprofile/report/cell_format.h"
#include "libprofile/report/table.h"

namespace lcpi::report {

namespace {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

}  // namespace

std::string RenderCsv(const Document& doc) {
  const Table& table = doc.tables[doc.shown_table];
  const std::vector<size_t>& order = table.order[static_cast<size_t>(Format::kCsv)];
  std::string out;
  for (size_t i = 0; i < order.size(); ++i) {
    out += (i ? "," : "") + CsvField(table.columns[order[i]].name);
  }
  out += "\n";
  for (const TableRow& row : table.rows) {
    for (size_t i = 0; i < order.size(); ++i) {
      const size_t c = order[i];
      out += (i ? "," : "") + CsvField(CellText(table.columns[c], row.cells[c], Format::kCsv));
    }
    out += "\n";
  }
  return out;
}

}  // namespace lcpi::report
