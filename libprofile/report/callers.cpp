// callers.cpp - the callers and callees of one procedure, from the stored
// call stacks.
#include "libprofile/report/callers.h"

#include <algorithm>
#include <map>
#include <set>

#include "libprofile/base/saturating.h"
#include "libprofile/report/percent.h"
#include "libprofile/report/stack_names.h"

namespace lcpi::report {

Expected<Callers> BuildCallers(ProfileDb& db, const CallersOptions& options) {
  if (options.symbol.empty()) return Error(Errc::kInvalidArgument, "no procedure named");
  auto header = BeginReport(db, options.epoch, options.range, {});
  if (!header) return header.error();
  SnapshotGuard end(db);
  Callers c;
  c.header = std::move(*header);
  c.symbol = options.symbol;
  c.callees = options.callees;
  auto stacks = NamedStacks(db, c.header, &c.warnings);
  if (!stacks) return stacks.error();
  using Proc = NamedFrame;
  std::map<Proc, uint64_t> counts;
  for (const NamedStack& s : *stacks) {
    c.stack_samples = SaturatingAdd(c.stack_samples, s.count);
    const std::vector<Proc>& names = s.frames;
    std::set<Proc> seen;  // each neighbour once per stack
    for (size_t i = 0; i < names.size(); i++) {
      if (names[i].first != options.symbol) continue;
      Proc next;
      if (options.callees)
        next = i == 0 ? Proc{"[self]", ""} : names[i - 1];
      else
        next = i + 1 < names.size() ? names[i + 1] : Proc{StackEndFrame(s.end), ""};
      seen.insert(next);
    }
    if (seen.empty()) continue;
    c.through = SaturatingAdd(c.through, s.count);
    for (const Proc& p : seen) counts[p] = SaturatingAdd(counts[p], s.count);
  }
  if (c.through == 0) {
    // (what was not kept, which NamedStacks warns of, may be why none is here)
    std::string why;
    for (const std::string& w : c.warnings) why += "; " + w;
    return Error(Errc::kNotFound,
                 (c.stack_samples == 0
                      ? "no call stacks are stored for the epochs read (lcpid --stack-frequency)"
                      : "no call stack of the epochs read passes through '" + options.symbol +
                            "' (" + std::to_string(c.stack_samples) + " stack samples)") +
                     why);
  }
  for (const auto& [p, n] : counts) c.rows.push_back({p.first, p.second, n});
  std::stable_sort(c.rows.begin(), c.rows.end(),
                   [](const CallerRow& a, const CallerRow& b) { return a.count > b.count; });
  if (options.top && c.rows.size() > options.top) {
    c.omitted = c.rows.size() - options.top;
    c.rows.resize(options.top);
  }
  return c;
}

Document CallersDocument(const Callers& c) {
  const char* view = c.callees ? "callees" : "callers";
  Document doc;
  doc.tool = "lcpiprof";
  doc.title = std::string("lcpiprof: ") + view + " of " + c.symbol;
  doc.sources.push_back({c.header, "", "", 0});
  doc.header_notes.push_back("stacks:   " + std::to_string(c.through) + " of " +
                             std::to_string(c.stack_samples) + " stack samples pass through " +
                             c.symbol + " (% of those)");
  doc.facts_before.push_back({"view", CellType::kText, std::string(view)});
  doc.facts_before.push_back({"symbol", CellType::kText, c.symbol});
  doc.facts_after.push_back({"stack_samples", CellType::kCount, uint64_t{c.stack_samples}});
  doc.facts_after.push_back({"through", CellType::kCount, uint64_t{c.through}});
  if (c.omitted) doc.omitted = Omitted{c.omitted, std::nullopt};
  doc.warnings = c.warnings;
  Table t;
  t.key = "rows";
  t.columns = {Column(c.callees ? "callee" : "caller", c.callees ? "callee" : "caller", "name",
                      CellType::kName),
               Column("image", CellType::kPath), Column("stacks", CellType::kCount),
               Column("%", "percent", "percent", CellType::kPercent)};
  Show(&t, Format::kText, {2, 3, 0, 1});
  Show(&t, Format::kCsv, {0, 1, 2, 3});
  Show(&t, Format::kJson, {0, 1, 2, 3});
  for (const CallerRow& r : c.rows) {
    TableRow row = NewRow(t);
    row.cells[0] = r.name;
    row.cells[1] = r.image;
    row.cells[2] = uint64_t{r.count};
    row.cells[3] = Percent(r.count, c.through);
    t.rows.push_back(std::move(row));
  }
  doc.tables.push_back(std::move(t));
  return doc;
}

std::string RenderCallers(const Callers& callers, const RenderOptions& options) {
  return Render(CallersDocument(callers), options);
}

Expected<Diff> BuildCallersDiff(ProfileDb& db_a, ProfileDb& db_b, const DiffOptions& options) {
  CallersOptions co;
  co.symbol = options.symbol;
  co.callees = options.callees;
  co.epoch = options.epoch_a;
  co.range = options.range_a;
  auto a = BuildCallers(db_a, co);
  if (!a) return Error(a.error().code(), "A: " + a.error().message());
  co.epoch = options.epoch_b;
  co.range = options.range_b;
  auto b = BuildCallers(db_b, co);
  if (!b) return Error(b.error().code(), "B: " + b.error().message());
  Diff d;
  d.view = View::kProcedures;
  d.a = std::move(a->header);
  d.b = std::move(b->header);
  d.event = "stacks";
  d.symbol = options.symbol;
  d.callees = options.callees;
  d.through_a = a->through;
  d.through_b = b->through;
  AddWarnings(a->warnings, &d.warnings);
  AddWarnings(b->warnings, &d.warnings);
  std::map<std::pair<std::string, std::string>, DiffRow> rows;
  for (const CallerRow& r : a->rows) {
    DiffRow& dr = rows[{r.image, r.name}];
    dr.name = r.name;
    dr.image = r.image;
    dr.count_a += r.count;
  }
  for (const CallerRow& r : b->rows) {
    DiffRow& dr = rows[{r.image, r.name}];
    dr.name = r.name;
    dr.image = r.image;
    dr.count_b += r.count;
  }
  FinishDiff(std::move(rows), d.through_a, d.through_b, options, &d);
  return d;
}

}  // namespace lcpi::report
