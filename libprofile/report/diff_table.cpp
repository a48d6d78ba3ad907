// diff_table.cpp - lcpidiff's report as a Document: two labelled sources (A
// and B), and per image or procedure the shares of one event in each, their
// change in points, the counts and new/vanished; or, with --callers SYM
// (--callees), each neighbour of SYM's share of the stacks through it. Text shows the numbers
// first; CSV and JSON the names first (as version 1 always has).
#include "libprofile/report/table.h"

namespace lcpi::report {

namespace {

// The table's columns, in the order they are added: a row lists its cells
// in this order.
enum DiffColumn : size_t { kShareA, kShareB, kDelta, kCountA, kCountB, kStatus, kName, kImage };

// The samples of `event` in a profile; 0 when it has no such event.
uint64_t EventSamples(const Header& h, const std::string& event) {
  for (size_t e = 0; e < h.events.size(); ++e) {
    if (h.events[e].name == event) return h.totals[e];
  }
  return 0;
}

}  // namespace

Document DiffDocument(const Diff& d) {
  const bool procs = d.view == View::kProcedures;
  const bool stacks = !d.symbol.empty();  // --callers / --callees
  const std::string view = !stacks ? ViewName(d.view) : d.callees ? "callees" : "callers";
  Document doc;
  doc.tool = "lcpidiff";
  if (stacks) {
    doc.title = "lcpidiff: " + view + " of " + d.symbol +
                ", shares of the stack samples through it, sorted by the largest change";
    doc.sources.push_back({d.a, "A", "a", d.through_a});
    doc.sources.push_back({d.b, "B", "b", d.through_b});
    doc.facts_before.push_back({"view", CellType::kText, view});
    doc.facts_before.push_back({"symbol", CellType::kText, d.symbol});
  } else {
    doc.title =
        "lcpidiff: " + view + ", event " + d.event + ", sorted by the largest change in share";
    doc.sources.push_back({d.a, "A", "a", EventSamples(d.a, d.event)});
    doc.sources.push_back({d.b, "B", "b", EventSamples(d.b, d.event)});
    doc.facts_before.push_back({"view", CellType::kText, view});
    doc.facts_before.push_back({"event", CellType::kText, d.event});
  }
  doc.omitted = Omitted{d.omitted, std::nullopt};
  doc.warnings = d.warnings;

  Table t;
  t.key = "rows";
  t.columns = {Column("A%", "percent_a", "percent_a", CellType::kPercent),
               Column("B%", "percent_b", "percent_b", CellType::kPercent),
               Column("delta", CellType::kDelta),
               Column("A", "count_a", "count_a", CellType::kCount),
               Column("B", "count_b", "count_b", CellType::kCount),
               Column("status", CellType::kText),
               stacks ? Column(view == "callees" ? "callee" : "caller",
                               view == "callees" ? "callee" : "caller", "name", CellType::kName)
               : procs ? Column("procedure", "procedure", "name", CellType::kName)
                       : Column("image", "image", "name", CellType::kPath),
               Column("image", CellType::kPath)};
  std::vector<size_t> names = {kName};
  if (procs) names.push_back(kImage);
  const std::vector<size_t> numbers = {kCountA, kCountB, kShareA, kShareB, kDelta, kStatus};
  Show(&t, Format::kText, Concat({kShareA, kShareB, kDelta, kCountA, kCountB, kStatus}, names));
  Show(&t, Format::kCsv, Concat(names, numbers));
  Show(&t, Format::kJson, Concat(names, numbers));

  for (const DiffRow& r : d.rows) {
    TableRow row;
    row.cells = {r.share_a,           r.share_b, r.delta, uint64_t{r.count_a},
                 uint64_t{r.count_b}, r.status,  r.name,  r.image};
    t.rows.push_back(std::move(row));
  }
  doc.tables.push_back(std::move(t));
  return doc;
}

}  // namespace lcpi::report
