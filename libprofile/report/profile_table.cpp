// profile_table.cpp - lcpiprof's report as a Document: per image, procedure
// or process, each event's count, share and cumulative share, and the rows
// --top/--keep cut. Text shows the event columns first and the names last;
// CSV and JSON the names first (as version 1 always has).
#include "libprofile/report/percent.h"
#include "libprofile/report/table.h"

namespace lcpi::report {

namespace {

// The columns naming a row, per view, and which of them each format shows.
struct NameColumns {
  size_t name = 0, image = 0, identity = 0, kind = 0, symbol = 0, lo = 0, hi = 0, pid = 0;
  std::vector<size_t> text, csv, json;
};

NameColumns AddNameColumns(Table* t, View view) {
  NameColumns n;
  switch (view) {
    case View::kImages:
      n.name = AddColumn(t, {"image", "image", "name", CellType::kPath});
      break;
    case View::kProcedures:
      n.name = AddColumn(t, {"procedure", "procedure", "name", CellType::kText});
      n.image = AddColumn(t, {"image", "image", "image", CellType::kPath});
      break;
    case View::kProcesses:
      n.name = AddColumn(t, {"command", "command", "name", CellType::kText});
      n.pid = AddColumn(t, {"pid", "pid", "pid", CellType::kInteger});
      break;
  }
  if (view == View::kProcesses) {
    n.text = {n.pid, n.name};
    n.csv = n.json = {n.name, n.pid};
    return n;
  }
  n.identity = AddColumn(t, {"identity", "identity", "identity", CellType::kText});
  n.kind = AddColumn(t, {"kind", "kind", "kind", CellType::kText});
  if (view == View::kImages) {
    n.text = {n.name};
    n.csv = n.json = {n.name, n.identity, n.kind};
    return n;
  }
  n.symbol = AddColumn(t, {"symbol", "symbol", "symbol", CellType::kBool});
  n.lo = AddColumn(t, {"offset_lo", "offset_lo", "offset_lo", CellType::kHex});
  n.hi = AddColumn(t, {"offset_hi", "offset_hi", "offset_hi", CellType::kHex});
  n.text = {n.name, n.image};
  n.csv = {n.name, n.image, n.identity, n.kind, n.lo, n.hi};
  n.json = {n.name, n.image, n.symbol, n.lo, n.hi, n.identity, n.kind};
  return n;
}

}  // namespace

Document ProfileDocument(const Profile& p) {
  const Header& h = p.header;
  Document doc;
  doc.tool = "lcpiprof";
  const std::string sort = h.events.empty() ? "" : h.events[p.sort_column].name;
  doc.title =
      std::string("lcpiprof: ") + ViewName(p.view) + ", sorted by " + (sort.empty() ? "-" : sort);
  doc.sources.push_back({h, "", "", ""});
  doc.facts_before.push_back({"view", CellType::kText, std::string(ViewName(p.view))});
  doc.facts_after.push_back(
      {"sort", CellType::kText, sort.empty() ? Cell{} : Cell{std::string(sort)}});
  doc.omitted = Omitted{p.omitted, p.omitted_counts};
  doc.warnings = p.warnings;

  Table t;
  t.key = "rows";
  t.json_events_on_new_line = true;
  const NameColumns n = AddNameColumns(&t, p.view);
  const EventColumnIds events =
      AddEventColumns(&t, h.events,
                      {{"counts", "", "", CellType::kCount},
                       {"percent", "_percent", "%", CellType::kPercent},
                       {"cum_percent", "_cum_percent", "cum%", CellType::kPercent}});
  Show(&t, Format::kText, Concat(EventMajor(events), n.text));
  Show(&t, Format::kCsv, Concat(n.csv, EventMajor(events)));
  Show(&t, Format::kJson, Concat(n.json, KindMajor(events)));

  std::vector<uint64_t> cum(h.events.size(), 0);
  for (const Row& r : p.rows) {
    TableRow row = NewRow(t);
    row.cells[n.name] = r.name;
    if (p.view == View::kProcesses) {
      row.cells[n.pid] = int64_t{r.pid};
    } else {
      row.cells[n.identity] = r.identity;
      row.cells[n.kind] = r.kind;
    }
    if (p.view == View::kProcedures) {
      row.cells[n.image] = r.image;
      row.cells[n.symbol] = r.symbol;
      row.cells[n.lo] = uint64_t{r.lo};
      row.cells[n.hi] = uint64_t{r.hi};
    }
    for (size_t e = 0; e < h.events.size(); ++e) {
      cum[e] += r.counts[e];
      row.cells[events[0][e]] = uint64_t{r.counts[e]};
      row.cells[events[1][e]] = Percent(r.counts[e], h.totals[e]);
      row.cells[events[2][e]] = Percent(cum[e], h.totals[e]);
    }
    t.rows.push_back(std::move(row));
  }
  doc.tables.push_back(std::move(t));
  return doc;
}

}  // namespace lcpi::report
