// diff_table.cpp - lcpidiff's report as a Document: two labelled sources (A
// and B), and per image or procedure the shares of one event in each, their
// change in points, the counts and new/vanished. Text shows the numbers
// first; CSV and JSON the names first (as version 1 always has).
#include "libprofile/report/table.h"

namespace lcpi::report {

Document DiffDocument(const Diff& d) {
  const bool procs = d.view == View::kProcedures;
  Document doc;
  doc.tool = "lcpidiff";
  doc.title = std::string("lcpidiff: ") + ViewName(d.view) + ", event " + d.event +
              ", sorted by the largest change in share";
  doc.sources.push_back({d.a, "A", "a", d.event});
  doc.sources.push_back({d.b, "B", "b", d.event});
  doc.facts_before.push_back({"view", CellType::kText, std::string(ViewName(d.view))});
  doc.facts_before.push_back({"event", CellType::kText, d.event});
  doc.omitted = Omitted{d.omitted, std::nullopt};
  doc.warnings = d.warnings;

  Table t;
  t.key = "rows";
  const size_t share_a = AddColumn(&t, {"A%", "percent_a", "percent_a", CellType::kPercent});
  const size_t share_b = AddColumn(&t, {"B%", "percent_b", "percent_b", CellType::kPercent});
  const size_t delta = AddColumn(&t, {"delta", "delta", "delta", CellType::kDelta});
  const size_t count_a = AddColumn(&t, {"A", "count_a", "count_a", CellType::kCount});
  const size_t count_b = AddColumn(&t, {"B", "count_b", "count_b", CellType::kCount});
  const size_t status = AddColumn(&t, {"status", "status", "status", CellType::kText});
  const size_t name = procs ? AddColumn(&t, {"procedure", "procedure", "name", CellType::kText})
                            : AddColumn(&t, {"image", "image", "name", CellType::kPath});
  std::vector<size_t> names = {name};
  if (procs) names.push_back(AddColumn(&t, {"image", "image", "image", CellType::kPath}));
  const std::vector<size_t> numbers = {count_a, count_b, share_a, share_b, delta, status};
  Show(&t, Format::kText, Concat({share_a, share_b, delta, count_a, count_b, status}, names));
  Show(&t, Format::kCsv, Concat(names, numbers));
  Show(&t, Format::kJson, Concat(names, numbers));

  for (const DiffRow& r : d.rows) {
    TableRow row = NewRow(t);
    row.cells[name] = r.name;
    if (procs) row.cells[names[1]] = r.image;
    row.cells[share_a] = r.share_a;
    row.cells[share_b] = r.share_b;
    row.cells[delta] = r.delta;
    row.cells[count_a] = uint64_t{r.count_a};
    row.cells[count_b] = uint64_t{r.count_b};
    row.cells[status] = r.status;
    t.rows.push_back(std::move(row));
  }
  doc.tables.push_back(std::move(t));
  return doc;
}

}  // namespace lcpi::report
