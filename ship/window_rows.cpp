// window_rows.cpp - a closed window as ClickHouse rows (window_rows.h).
#include "ship/window_rows.h"

#include <limits>
#include <map>

#include "libprofile/base/cgroup_label.h"
#include "libprofile/fleet/clickhouse_text.h"
#include "libprofile/fleet/fleet_schema.h"
#include "libprofile/report/fleet_window_facts.h"
#include "libprofile/report/report_symbols.h"

namespace lcpi::ship {

using fleet::AppendTsvField;

namespace {

// The first columns of every row of the window: host, window_id, attempt, started.
std::string RowPrefix(const EpochInfo& window, const std::string& host, uint64_t attempt) {
  std::string p;
  AppendTsvField(p, host);
  p += '\t';
  AppendTsvField(p, static_cast<uint64_t>(window.id));
  p += '\t';
  AppendTsvField(p, attempt);
  p += '\t';
  AppendTsvField(p, static_cast<uint64_t>(window.started));
  p += '\t';
  return p;
}

}  // namespace

Expected<WindowRows> ReadWindow(ProfileDb& db, const EpochInfo& window, const std::string& host,
                                uint64_t attempt) {
  auto snap = db.BeginSnapshot();
  if (!snap) return snap.error();
  SnapshotGuard guard(db);
  auto images = db.ListImages();
  if (!images) return images.error();
  auto events = db.ListEvents();
  if (!events) return events.error();
  const EpochSet only = EpochSet::Of({window.id});
  auto facts = db.EpochEvents(only);
  if (!facts) return facts.error();
  std::map<int64_t, const ImageInfo*> image_by_id;
  for (const ImageInfo& i : *images) image_by_id[i.id] = &i;
  // The event's name, what was sampled and its period in this window (the
  // events row for windows merged before the facts were kept per window).
  struct Event {
    std::string name, used;
    uint64_t period = 0;
  };
  std::map<int64_t, Event> event_by_id;
  for (const EventInfo& e : *events) event_by_id[e.id] = {e.name, e.used, e.period};
  for (const EpochEvent& f : *facts) {
    if (auto it = event_by_id.find(f.event_id); it != event_by_id.end()) {
      it->second.used = f.used;
      it->second.period = f.period;
    }
  }
  // The image and event a row names; kCorrupt if the database lacks one.
  struct Names {
    const ImageInfo* image;
    const Event* event;
  };
  auto names_of = [&](int64_t image_id, int64_t event_id) -> Expected<Names> {
    auto i = image_by_id.find(image_id);
    auto e = event_by_id.find(event_id);
    if (i == image_by_id.end() || e == event_by_id.end()) {
      return Error(Errc::kCorrupt, "window " + std::to_string(window.id) + " names image " +
                                       std::to_string(image_id) + " and event " +
                                       std::to_string(event_id) +
                                       ", one of which the database lacks");
    }
    return Names{i->second, &e->second};
  };

  WindowRows out;
  const std::string prefix = RowPrefix(window, host, attempt);
  auto totals = db.ImageTotals(only);
  if (!totals) return totals.error();
  for (const ImageTotal& t : *totals) {
    auto names = names_of(t.image_id, t.event_id);
    if (!names) return names.error();
    out.image_ids.insert(t.image_id);
    // The part of each row this image and event fix, escaped once.
    std::string fixed = prefix;
    AppendTsvField(fixed, names->image->identity);
    fixed += '\t';
    AppendTsvField(fixed, names->event->name);
    fixed += '\t';
    AppendTsvField(fixed, names->event->used);
    fixed += '\t';
    AppendTsvField(fixed, names->event->period);
    fixed += '\t';
    auto offsets =
        db.OffsetCounts(only, t.image_id, t.event_id, 0, std::numeric_limits<uint64_t>::max());
    if (!offsets) return offsets.error();
    for (const OffsetCount& o : *offsets) {
      out.counts += fixed;
      AppendTsvField(out.counts, o.offset);
      out.counts += '\t';
      AppendTsvField(out.counts, o.count);
      out.counts += '\n';
      out.count_rows++;
      out.samples += o.count;
    }
  }
  auto processes = db.ProcessTotals(only);
  if (!processes) return processes.error();
  for (const ProcessTotal& p : *processes) {
    auto names = names_of(p.image_id, p.event_id);
    if (!names) return names.error();
    out.image_ids.insert(p.image_id);
    const CgroupLabels labels = LabelsOfCgroup(p.cgroup);
    std::string& r = out.processes;
    r += prefix;
    AppendTsvField(r, static_cast<uint64_t>(p.pid));
    for (const std::string* s : {&p.comm, &p.cgroup, &labels.unit, &labels.container, &labels.pod,
                                 &names->image->identity, &names->event->name}) {
      r += '\t';
      AppendTsvField(r, *s);
    }
    r += '\t';
    AppendTsvField(r, p.count);
    r += '\n';
    out.process_rows++;
  }
  auto stats = db.Stats(only);
  if (!stats) return stats.error();
  auto cost = db.Cost(only);
  if (!cost) return cost.error();
  for (const report::WindowFact& f : report::WindowFacts(*stats, *cost)) {
    out.facts += prefix;
    AppendTsvField(out.facts, f.name);
    out.facts += '\t';
    out.facts += std::to_string(f.value);
    out.facts += '\n';
  }
  return out;
}

std::string SymbolRows(ProfileDb& db, const ImageInfo& image, const std::string& host,
                       uint64_t* rows, std::vector<std::string>* warnings) {
  auto symbols = report::ImageSymbolizer::Load(db, image, warnings).Procedures();
  if (symbols.size() > fleet::kMaxSymbolsPerImage) {
    warnings->push_back(image.path + " has " + std::to_string(symbols.size()) +
                        " symbols: the first " + std::to_string(fleet::kMaxSymbolsPerImage) +
                        " by offset are shipped (the fleet's limit per image)");
    symbols.resize(fleet::kMaxSymbolsPerImage);
  }
  std::string prefix;
  AppendTsvField(prefix, image.identity);
  prefix += '\t';
  AppendTsvField(prefix, host);
  std::string out;
  for (const SymbolInfo& s : symbols) {
    out += prefix;
    out += '\t';
    AppendTsvField(out, s.offset);
    out += '\t';
    AppendTsvField(out, s.size);
    out += '\t';
    AppendTsvField(out, s.name);
    out += '\n';
  }
  *rows = symbols.size();
  return out;
}

std::string WindowRow(const EpochInfo& window, const std::string& host, uint64_t attempt,
                      int64_t now, const WindowRows& rows) {
  std::string r;
  AppendTsvField(r, host);
  r += '\t';
  AppendTsvField(r, static_cast<uint64_t>(window.id));
  r += '\t';
  AppendTsvField(r, attempt);
  r += '\t';
  AppendTsvField(r, EpochKindName(window.kind));
  r += '\t';
  AppendTsvField(r, window.tag.value_or(""));
  for (int64_t t : {window.started, window.ended.value_or(window.started), now}) {
    r += '\t';
    AppendTsvField(r, static_cast<uint64_t>(t));
  }
  for (uint64_t n : {rows.count_rows, rows.process_rows, rows.samples}) {
    r += '\t';
    AppendTsvField(r, n);
  }
  r += '\n';
  return r;
}

}  // namespace lcpi::ship
