// profile_table.cpp - lcpiprof's report as a Document: per image, procedure
// or process, each event's count, share and cumulative share, and the rows
// --top/--keep cut. Text shows the event columns first and the names last;
// CSV and JSON the names first (as version 1 always has).
#include "libprofile/base/saturating.h"
#include "libprofile/report/percent.h"
#include "libprofile/report/table.h"

namespace lcpi::report {

namespace {

// The columns naming a row, in the order they are added and a row lists its
// cells (every view has them all; each shows only its own); the per-event
// columns follow them.
enum NameColumn : size_t { kName, kImage, kIdentity, kKind, kSymbol, kLo, kHi, kPid, kLabel };

Column NameOf(View view, const std::string& by) {
  switch (view) {
    case View::kImages:
      return Column("image", "image", "name", CellType::kPath);
    case View::kProcedures:
      return Column("procedure", "procedure", "name", CellType::kName);
    case View::kLabels:
      return Column(by, by, "name", CellType::kText);
    case View::kProcesses:
      break;
  }
  return Column("command", "command", "name", CellType::kName);
}

// The name columns each format shows, per view: text, CSV, JSON.
std::array<std::vector<size_t>, 3> NamesShown(View view, bool label_column) {
  switch (view) {
    case View::kLabels:
      return {{{kName}, {kName}, {kName}}};
    case View::kImages:
      return {{{kName}, {kName, kIdentity, kKind}, {kName, kIdentity, kKind}}};
    case View::kProcedures:
      return {{{kName, kImage},
               {kName, kImage, kIdentity, kKind, kLo, kHi},
               {kName, kImage, kSymbol, kLo, kHi, kIdentity, kKind}}};
    case View::kProcesses:
      break;
  }
  if (label_column) return {{{kPid, kLabel, kName}, {kName, kPid, kLabel}, {kName, kPid, kLabel}}};
  return {{{kPid, kName}, {kName, kPid}, {kName, kPid}}};
}

}  // namespace

Document ProfileDocument(const Profile& p) {
  const Header& h = p.header;
  const std::string sort = h.events.empty() ? "" : h.events[p.sort_column].name;
  Document doc;
  doc.tool = "lcpiprof";
  // --by unit: "units"
  const std::string view = p.view == View::kLabels ? p.by + "s" : ViewName(p.view);
  doc.title = "lcpiprof: " + view + ", sorted by " + (sort.empty() ? "-" : sort);
  doc.sources.push_back({h, "", "", 0});
  doc.facts_before.push_back({"view", CellType::kText, std::string(ViewName(p.view))});
  // Only when asked for: reports without labels stay as they were.
  if (!p.by.empty()) doc.facts_before.push_back({"by", CellType::kText, p.by});
  if (!p.labels.empty()) {
    std::string labels;
    for (const LabelFilter& l : p.labels)
      labels += (labels.empty() ? "" : ",") + l.key + "=" + l.value;
    doc.facts_before.push_back({"labels", CellType::kText, labels});
    doc.header_notes.push_back("labels:   " + labels +
                               " (only these processes; percentages of all samples)");
  }
  doc.facts_after.push_back(
      {"sort", CellType::kText, sort.empty() ? Cell{} : Cell{std::string(sort)}});
  doc.omitted = Omitted{p.omitted, p.omitted_counts};
  doc.warnings = p.warnings;

  Table t;
  t.key = "rows";
  t.json_events_on_new_line = true;
  t.columns = {NameOf(p.view, p.by),
               Column("image", CellType::kPath),
               Column("identity", CellType::kText),
               Column("kind", CellType::kText),
               Column("symbol", CellType::kBool),
               Column("offset_lo", CellType::kHex),
               Column("offset_hi", CellType::kHex),
               Column("pid", CellType::kInteger),
               Column(p.by.empty() ? "label" : p.by, CellType::kText)};
  const EventColumnIds events =
      AddEventColumns(&t, h.events,
                      {{"counts", "", "", CellType::kCount},
                       {"percent", "_percent", "%", CellType::kPercent},
                       {"cum_percent", "_cum_percent", "cum%", CellType::kPercent}});
  const auto names = NamesShown(p.view, p.view == View::kProcesses && !p.by.empty());
  Show(&t, Format::kText, Concat(EventMajor(events), names[0]));
  Show(&t, Format::kCsv, Concat(names[1], EventMajor(events)));
  Show(&t, Format::kJson, Concat(names[2], KindMajor(events)));

  std::vector<uint64_t> cum(h.events.size(), 0);
  for (const Row& r : p.rows) {
    TableRow row;
    row.cells = {r.name,         r.image,
                 r.identity,     ImageKindName(r.kind),
                 r.symbol,       uint64_t{r.lo},
                 uint64_t{r.hi}, r.pid == kRolledUpPid ? int64_t{-1} : int64_t{r.pid},
                 r.label};
    row.cells.resize(t.columns.size());  // the per-event cells, set below
    for (size_t e = 0; e < h.events.size(); ++e) {
      // saturating: a fleet's counts may be clamped at 2^64-1
      cum[e] = SaturatingAdd(cum[e], r.counts[e]);
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
