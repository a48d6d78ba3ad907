// report.cpp - the data behind lcpiprof and lcpidiff: the header of a report
// (epochs, events, statistics), per-image, per-procedure and per-process rows,
// sorting, --top/--keep, and the comparison of two profiles.
#include "libprofile/report/report.h"
#include "libprofile/report/observer.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <set>
#include <tuple>

#include "libprofile/base/cgroup_label.h"
#include "libprofile/base/saturating.h"
#include "libprofile/base/text.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/image/image_id.h"
#include "libprofile/report/image_filter.h"
#include "libprofile/report/offset_counts.h"
#include "libprofile/report/percent.h"
#include "libprofile/report/profile_rows.h"
#include "libprofile/report/report_symbols.h"
#include "libprofile/store/epoch_select.h"

namespace lcpi::report {

namespace {

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

int64_t Stat(const std::map<std::string, int64_t>& stats, const char* name) {
  auto it = stats.find(name);
  return it == stats.end() ? 0 : it->second;
}

Expected<std::map<int64_t, ImageInfo>> ImagesById(ProfileDb& db) {
  auto images = db.ListImages();
  if (!images) return images.error();
  std::map<int64_t, ImageInfo> out;
  for (ImageInfo& i : *images) out.emplace(i.id, std::move(i));
  return out;
}

// image id -> counts per event column, for images with samples in them.
Expected<std::map<int64_t, std::vector<uint64_t>>> CountsByImage(ProfileDb& db, const Header& h) {
  auto totals = db.ImageTotals(QueryEpoch(h));
  if (!totals) return totals.error();
  std::map<int64_t, std::vector<uint64_t>> out;
  for (const ImageTotal& t : *totals) {
    for (size_t e = 0; e < h.events.size(); ++e) {
      if (h.events[e].id != t.event_id || t.count == 0) continue;
      auto& counts = out[t.image_id];
      counts.resize(h.events.size(), 0);
      counts[e] = SaturatingAdd(counts[e], ScaleCount(h, e, t.count));
    }
  }
  return out;
}

Expected<std::vector<Row>> ImageRows(ProfileDb& db, const Header& h) {
  auto images = ImagesById(db);
  if (!images) return images.error();
  auto counts = CountsByImage(db, h);
  if (!counts) return counts.error();
  std::vector<Row> rows;
  for (auto& [id, c] : *counts) {
    Row r;
    const ImageInfo& info = (*images)[id];
    r.name = info.path;
    r.identity = info.identity;
    r.kind = info.kind;
    r.image_id = id;
    r.counts = c;
    rows.push_back(std::move(r));
  }
  return rows;
}

Expected<std::vector<Row>> ProcedureRows(ProfileDb& db, const Header& h,
                                         const std::vector<std::string>& filters,
                                         std::vector<std::string>* warnings) {
  auto images = ImagesById(db);
  if (!images) return images.error();
  auto counts = CountsByImage(db, h);
  if (!counts) return counts.error();
  for (const std::string& f : filters) {
    bool any = false;
    for (const auto& [id, info] : *images) any = any || ImageMatches(info, f);
    if (!any) return Error(Errc::kNotFound, "no such image: " + f);
  }
  std::vector<Row> rows;
  for (const auto& [id, image_total] : *counts) {  // the images with samples
    const ImageInfo& info = (*images)[id];
    if (!ImageChosen(info, filters)) continue;
    auto offsets = CountOffsets(db, h, id, 0, std::numeric_limits<uint64_t>::max());
    if (!offsets) return offsets.error();
    ImageSymbolizer sym = ImageSymbolizer::Load(db, info, warnings);
    AddProcedureRows(*offsets, sym, info, h.events.size(), &rows);
  }
  return rows;
}

bool IsLabelKey(std::string_view key) {
  const auto& keys = CgroupLabelKeys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Whether a cgroup path has every label asked for. A value matches by its
// bytes, or, for a filter no path matches by bytes (`printed`), as every
// report prints it (control bytes and bytes that are not UTF-8 as \xNN), so
// what is copied from a report selects it, and a name that is literally
// "\x0a" never mixes with one holding a newline.
bool MatchesLabels(const std::string& path, const std::vector<LabelFilter>& labels,
                   const std::vector<bool>& printed) {
  for (size_t i = 0; i < labels.size(); i++) {
    const LabelFilter& l = labels[i];
    const std::string value = CgroupLabelValue(path, l.key);
    if (printed[i] ? Printable(value) == l.value : value == l.value) continue;
    // docker ps shows 12 digits of an id
    const bool short_id = l.key == "container" && l.value.size() >= 12 && !value.empty() &&
                          value.compare(0, l.value.size(), l.value) == 0;
    if (!short_id) return false;
  }
  return true;
}

// The process rows of the processes whose cgroup matches `labels` (all of
// them without), each cgroup parsed once.
Expected<std::vector<ProcessTotal>> MatchingProcessTotals(ProfileDb& db, const Header& h,
                                                          const std::vector<LabelFilter>& labels) {
  auto totals = db.ProcessTotals(QueryEpoch(h));
  if (!totals || labels.empty()) return totals;
  std::set<std::string, std::less<>> paths;
  for (const ProcessTotal& t : *totals) paths.insert(t.cgroup);
  std::vector<bool> printed(labels.size(), true);
  for (size_t i = 0; i < labels.size(); i++) {
    for (const std::string& p : paths) {
      if (CgroupLabelValue(p, labels[i].key) == labels[i].value) printed[i] = false;
    }
  }
  std::map<std::string, bool, std::less<>> matches;
  for (const std::string& p : paths) matches.emplace(p, MatchesLabels(p, labels, printed));
  std::vector<ProcessTotal> out;
  for (ProcessTotal& t : *totals) {
    if (matches.find(t.cgroup)->second) out.push_back(std::move(t));
  }
  return out;
}

// The value of label `by` of each cgroup path, each parsed once.
class LabelOf {
 public:
  explicit LabelOf(std::string by) : by_(std::move(by)) {}
  const std::string& operator()(const std::string& path) {
    auto it = values_.find(path);
    if (it == values_.end()) it = values_.emplace(path, CgroupLabelValue(path, by_)).first;
    return it->second;
  }

 private:
  std::string by_;
  std::map<std::string, std::string, std::less<>> values_;
};

// The process rows summed into one Row per key_of(total), with a count
// column per event (scaled); name(row, total) names a row from its totals.
template <class Key, class KeyOf, class Name>
std::vector<Row> SumProcessTotals(const Header& h, const std::vector<ProcessTotal>& totals,
                                  KeyOf key_of, Name name) {
  std::map<Key, Row> sums;
  for (const ProcessTotal& t : totals) {
    for (size_t e = 0; e < h.events.size(); ++e) {
      if (h.events[e].id != t.event_id || t.count == 0) continue;
      Row& r = sums[key_of(t)];
      name(r, t);
      r.counts.resize(h.events.size(), 0);
      r.counts[e] = SaturatingAdd(r.counts[e], ScaleCount(h, e, t.count));
    }
  }
  std::vector<Row> rows;
  for (auto& [key, r] : sums) rows.push_back(std::move(r));
  return rows;
}

// Per process (pid and command; with `by`, and that label's value).
Expected<std::vector<Row>> ProcessRows(ProfileDb& db, const Header& h, const ProfOptions& o) {
  auto totals = MatchingProcessTotals(db, h, o.labels);
  if (!totals) return totals.error();
  LabelOf label_of(o.by);
  auto label = [&](const ProcessTotal& t) { return o.by.empty() ? "" : label_of(t.cgroup); };
  // lcpid's samples apart from a pid's in other windows (the observer line).
  return SumProcessTotals<std::tuple<uint32_t, std::string, std::string, bool>>(
      h, *totals,
      [&](const ProcessTotal& t) { return std::tuple(t.pid, t.comm, label(t), t.observer); },
      [&](Row& r, const ProcessTotal& t) {
        r.observer = t.observer;
        // The pids lcpid did not keep apart (--max-processes), summed by command.
        r.name = t.pid == kRolledUpPid ? t.comm + " [rolled up]" : t.comm;
        r.pid = t.pid;
        r.label = label(t);
      });
}

// Per value of label `by` (lcpiprof --by): the process rows summed.
Expected<std::vector<Row>> LabelRows(ProfileDb& db, const Header& h, const ProfOptions& o) {
  auto totals = MatchingProcessTotals(db, h, o.labels);
  if (!totals) return totals.error();
  LabelOf label_of(o.by);
  return SumProcessTotals<std::string>(
      h, *totals, [&](const ProcessTotal& t) { return label_of(t.cgroup); },
      [&](Row& r, const ProcessTotal& t) {
        r.label = label_of(t.cgroup);
        r.name = r.label.empty() ? "[no " + o.by + "]" : r.label;
      });
}

// Per image, of the processes whose cgroup matches o.labels: their process
// rows summed (kept per process and image, so exact).
Expected<std::vector<Row>> LabelledImageRows(ProfileDb& db, const Header& h, const ProfOptions& o) {
  auto images = ImagesById(db);
  if (!images) return images.error();
  auto totals = MatchingProcessTotals(db, h, o.labels);
  if (!totals) return totals.error();
  return SumProcessTotals<int64_t>(
      h, *totals, [](const ProcessTotal& t) { return t.image_id; },
      [&](Row& r, const ProcessTotal& t) {
        const ImageInfo& info = (*images)[t.image_id];
        r.name = info.path;
        r.identity = info.identity;
        r.kind = info.kind;
        r.image_id = t.image_id;
      });
}

}  // namespace

// Sorts rows by the sort column, largest first; ties by the other columns,
// then by name so that the order is stable across runs.
void SortRows(std::vector<Row>* rows, size_t column) {
  std::sort(rows->begin(), rows->end(), [column](const Row& a, const Row& b) {
    if (a.counts[column] != b.counts[column]) return a.counts[column] > b.counts[column];
    if (a.counts != b.counts) return a.counts > b.counts;
    return std::tie(a.name, a.image, a.pid) < std::tie(b.name, b.image, b.pid);
  });
}

// Applies --keep and --top to sorted rows.
void Trim(Profile* p, double keep, size_t top) {
  const uint64_t total = p->header.totals.empty() ? 0 : p->header.totals[p->sort_column];
  size_t n = 0;
  while (n < p->rows.size()) {
    if (top && n >= top) break;
    if (keep > 0 && Percent(p->rows[n].counts[p->sort_column], total) < keep) break;
    ++n;
  }
  p->omitted_counts.assign(p->header.events.size(), 0);
  for (size_t i = n; i < p->rows.size(); ++i) {
    for (size_t e = 0; e < p->omitted_counts.size(); ++e) {
      p->omitted_counts[e] = SaturatingAdd(p->omitted_counts[e], p->rows[i].counts[e]);
    }
  }
  p->omitted = p->rows.size() - n;
  p->rows.resize(n);
}

// What the labels of `o` ask is answerable: known keys, a view that can.
Expected<void> CheckLabels(const ProfOptions& o) {
  auto bad = [](const std::string& why) { return Error(Errc::kInvalidArgument, why); };
  const std::string keys = "unit, container, pod or cgroup";
  if (o.view == View::kLabels && o.by.empty()) return bad("--by needs a label: " + keys);
  if (!o.by.empty() && !IsLabelKey(o.by))
    return bad("cannot group by " + Printable(o.by) + ": a label is " + keys);
  for (const LabelFilter& l : o.labels)
    if (!IsLabelKey(l.key)) return bad("no label " + Printable(l.key) + ": a label is " + keys);
  if (o.view == View::kProcedures && (!o.by.empty() || !o.labels.empty()))
    return bad(
        "--by and --label work per image (the default) and per process (-P): counts per "
        "procedure are stored per image, not per process");
  if (o.view == View::kImages && !o.by.empty())
    return bad("--by groups processes: use it alone or with -P");
  return {};
}

Expected<size_t> SortColumn(const Header& h, const std::string& sort) {
  if (sort.empty()) return size_t{0};
  for (size_t e = 0; e < h.events.size(); ++e) {
    if (h.events[e].name == sort) return e;
  }
  return Error(Errc::kInvalidArgument, "cannot sort by " + sort + ": not an event of the report");
}

Expected<void> CheckProfOptions(const ProfOptions& o) {
  if (o.keep_percent < 0 || o.keep_percent > 100) {
    return Error(Errc::kInvalidArgument, "--keep takes a percentage from 0 to 100");
  }
  return CheckLabels(o);
}

Expected<Profile> StartProfile(const ProfOptions& o, Header header) {
  Profile p;
  p.view = o.view;
  p.by = o.by;
  p.labels = o.labels;
  p.header = std::move(header);
  auto column = SortColumn(p.header, o.sort);
  if (!column) return column.error();
  p.sort_column = *column;
  return p;
}

void AddProcedureRows(const CountsByOffset& offsets, const ImageSymbolizer& sym,
                      const ImageInfo& info, size_t events, std::vector<Row>* rows) {
  std::map<std::pair<uint64_t, std::string>, Row> procs;  // by (lo, name)
  Row* range = nullptr;                                   // the open range of unsymbolized samples
  for (const auto& [offset, c] : offsets) {
    std::optional<Procedure> proc = sym.Find(offset);
    Row* row;
    if (proc) {
      row = &procs[{proc->lo, proc->name}];
      if (row->counts.empty()) {
        row->name = proc->name;
        row->lo = proc->lo;
        row->hi = proc->hi;
      }
      range = nullptr;
    } else {
      if (!range || offset - range->hi > kRangeGap) {
        range = &procs[{offset, std::string()}];
        range->symbol = false;
        range->lo = offset;
      }
      range->hi = offset;  // the last sampled offset
      row = range;
    }
    row->counts.resize(events, 0);
    for (size_t e = 0; e < c.size(); ++e) row->counts[e] = SaturatingAdd(row->counts[e], c[e]);
  }
  for (auto& [key, r] : procs) {
    if (!r.symbol) r.name = RangeName(info.path, r.lo, r.hi);
    r.image = info.path;
    r.identity = info.identity;
    r.kind = info.kind;
    r.image_id = info.id;
    rows->push_back(std::move(r));
  }
}

const char* ViewName(View view) {
  switch (view) {
    case View::kImages:
      return "images";
    case View::kProcedures:
      return "procedures";
    case View::kProcesses:
      return "processes";
    case View::kLabels:
      return "labels";
  }
  return "?";
}

Expected<LabelFilter> ParseLabel(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return Error(Errc::kInvalidArgument, "--label takes KEY=VALUE, not " + Printable(text));
  LabelFilter l{text.substr(0, eq), text.substr(eq + 1)};
  if (!IsLabelKey(l.key))
    return Error(Errc::kInvalidArgument,
                 "no label " + Printable(l.key) + ": a label is unit, container, pod or cgroup");
  return l;
}

Expected<Format> ParseFormat(const std::string& name) {
  if (name == "text") return Format::kText;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  if (name == "html") return Format::kHtml;
  if (name == "pprof") return Format::kPprof;
  return Error(Errc::kInvalidArgument,
               "unknown format " + name + " (text, csv, json, html or pprof)");
}

EpochSet QueryEpoch(const Header& header) {
  if (header.all_epochs) return EpochSet::All();
  return IdsOf(header.epochs);
}

Expected<Header> ReadHeader(ProfileDb& db, const std::string& epoch, const TimeRange& range,
                            const std::vector<std::string>& events) {
  Header h;
  h.database = db.path();
  h.range = range;
  if (range.since && range.until && *range.since >= *range.until) {
    return Error(Errc::kInvalidArgument, "--since " + FormatUtc(*range.since) +
                                             " is not before --until " + FormatUtc(*range.until));
  }
  auto epochs = db.ListEpochs();
  if (!epochs) return epochs.error();
  if (epoch == "all" || (epoch.empty() && !range.empty())) {
    h.all_epochs = range.empty();
    h.epochs = *epochs;
  } else {
    Expected<int64_t> id = epoch.empty() ? db.CurrentEpoch() : db.FindEpoch(epoch);
    if (!id) {
      if (id.error().code() != Errc::kNotFound) return id.error();
      return Error(Errc::kNotFound, epoch.empty() ? db.path() + ": no epochs yet"
                                                  : db.path() + ": no such epoch: " + epoch +
                                                        " (lcpiprof --epochs lists them)");
    }
    // A number names one epoch or window; a tag names its span.
    const bool by_id = !epoch.empty() && std::all_of(epoch.begin(), epoch.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
    if (by_id || epoch.empty()) {
      for (const EpochInfo& e : *epochs) {
        if (e.id == *id) h.epochs.push_back(e);
      }
    } else {
      h.epochs = SpanOf(*epochs, *id);
    }
    if (h.epochs.empty()) return Error(Errc::kNotFound, "no such epoch: " + epoch);
  }
  if (!range.empty()) {
    const std::string wanted = h.epochs.size() == epochs->size() ? "" : " of epoch " + epoch;
    h.epochs = EpochsOverlapping(h.epochs, range.since, range.until, Now());
    if (h.epochs.empty()) {
      return Error(Errc::kNotFound, db.path() + ": no epoch or window" + wanted + " between " +
                                        (range.since ? FormatUtc(*range.since) : "the first") +
                                        " and " + (range.until ? FormatUtc(*range.until) : "now") +
                                        " (lcpiprof --epochs lists them)");
    }
  }
  auto all_events = db.ListEvents();
  if (!all_events) return all_events.error();
  auto totals = db.ImageTotals(QueryEpoch(h));
  if (!totals) return totals.error();
  std::map<int64_t, uint64_t> by_event;
  for (const ImageTotal& t : *totals)
    by_event[t.event_id] = SaturatingAdd(by_event[t.event_id], t.count);
  if (events.empty()) {
    for (const EventInfo& e : *all_events) {
      if (by_event[e.id] > 0) h.events.push_back(e);
    }
    if (h.events.empty()) h.events = *all_events;
  } else {
    for (const std::string& name : events) {
      auto it = std::find_if(all_events->begin(), all_events->end(),
                             [&](const EventInfo& e) { return e.name == name; });
      if (it == all_events->end()) {
        std::string known;
        for (const EventInfo& e : *all_events) known += (known.empty() ? "" : ", ") + e.name;
        return Error(Errc::kNotFound, "no such event: " + name + " (the database has: " +
                                          (known.empty() ? "none" : known) + ")");
      }
      h.events.push_back(*it);
    }
  }

  // What each event really was in these epochs: the newest epoch's facts.
  auto facts = db.EpochEvents(QueryEpoch(h));
  if (!facts) return facts.error();
  for (EventInfo& e : h.events) {
    std::set<uint64_t> seen;
    std::set<int> levels;
    int precise = 0;
    for (const EpochEvent& f : *facts) {  // oldest epoch first: the newest wins
      if (f.event_id == e.id) {
        e.used = f.used;
        e.period = f.period;
        precise = f.precise;
        seen.insert(f.period);
        levels.insert(f.precise);
      }
    }
    h.periods.push_back(seen.size() > 1 ? std::vector<uint64_t>(seen.begin(), seen.end())
                                        : std::vector<uint64_t>{});
    h.precise.push_back(precise);
    h.precise_levels.push_back(levels.size() > 1 ? std::vector<int>(levels.begin(), levels.end())
                                                 : std::vector<int>{});
    // Summed over the epochs read, so the scale is the share of the whole
    // span the event counted (as perf stat scales a count over its run).
    uint64_t enabled = 0, running = 0;
    for (const EpochEvent& f : *facts) {
      if (f.event_id != e.id) continue;
      enabled = SaturatingAdd(enabled, f.time_enabled);
      running = SaturatingAdd(running, f.time_running);
    }
    h.time_enabled.push_back(enabled);
    h.time_running.push_back(running);
    h.scale.push_back(MultiplexScale(enabled, running));
  }
  for (size_t e = 0; e < h.events.size(); ++e)
    h.totals.push_back(ScaleCount(h, e, by_event[h.events[e].id]));
  auto stats = db.Stats(QueryEpoch(h));
  if (!stats) return stats.error();
  h.stats = *stats;
  SetSampleShares(h);
  auto cost = db.Cost(QueryEpoch(h));
  if (!cost) return cost.error();
  h.cost = *cost;
  auto images = db.ObserverImages(QueryEpoch(h));
  if (!images) return images.error();
  h.observer_images = std::move(*images);
  return h;
}

void SetSampleShares(Header& h) {
  // As doubles, each at least 0: a crafted database's negative or huge
  // figures give a share in [0, 100], never an overflowed sum.
  auto figure = [&](const char* name) {
    return std::max(0.0, static_cast<double>(Stat(h.stats, name)));
  };
  // Lost: taken but in no count, whatever the reason: the kernel's and
  // lcpid's drops, a held batch dropped while the database refused merges
  // or a batch it refused (held_batch.h: moved out of attributed and
  // unknown), and the rows of an image it set aside (still in attributed).
  const double quarantined = figure("quarantined.samples");
  const double attributed = std::max(0.0, figure("attributed") - quarantined);
  const double unknown = figure("unknown");
  const double lost = figure("lost") + figure("dropped") + figure(kPendingDroppedStat) +
                      figure(kRefusedStat) + quarantined;
  const double throttled = figure("throttled_lost_estimate");
  h.unknown_percent = h.lost_percent = h.throttled_percent = 0;
  if (attributed + unknown > 0) h.unknown_percent = 100.0 * unknown / (attributed + unknown);
  if (attributed + unknown + lost > 0)
    h.lost_percent = 100.0 * lost / (attributed + unknown + lost);
  if (throttled > 0)
    h.throttled_percent = 100.0 * throttled / (attributed + unknown + lost + throttled);
}

double MultiplexScale(uint64_t time_enabled, uint64_t time_running) {
  if (time_running == 0 || time_running >= time_enabled) return 1.0;
  return static_cast<double>(time_enabled) / static_cast<double>(time_running);
}

uint64_t ScaleCount(const Header& header, size_t e, uint64_t count) {
  if (e >= header.scale.size() || header.scale[e] == 1.0) return count;
  // llround is undefined beyond 2^63: a scaled count there is clamped.
  const double scaled = std::round(static_cast<double>(count) * header.scale[e]);
  if (!(scaled > 0)) return 0;
  if (scaled >= 0x1p64) return UINT64_MAX;
  return static_cast<uint64_t>(scaled);
}

namespace {
// The share of its enabled time event column e had the PMU (scaled only).
double RunningPercent(const Header& header, size_t e) {
  return 100.0 * static_cast<double>(header.time_running[e]) /
         static_cast<double>(header.time_enabled[e]);
}
}  // namespace

std::string MultiplexNote(const Header& header, size_t e) {
  if (e >= header.scale.size() || header.scale[e] == 1.0) return "";
  char note[128];
  std::snprintf(note, sizeof note, "multiplexed: scaled by %.2f, running %.1f%% of enabled",
                header.scale[e], RunningPercent(header, e));
  return note;
}

void AddWarnings(const std::vector<std::string>& from, std::vector<std::string>* to) {
  for (const std::string& w : from)
    if (std::find(to->begin(), to->end(), w) == to->end()) to->push_back(w);
}

std::vector<std::string> EventWarnings(const Header& header) {
  std::vector<std::string> out;
  for (size_t e = 0; e < header.precise_levels.size() && e < header.events.size(); ++e) {
    const std::vector<int>& levels = header.precise_levels[e];
    if (levels.empty()) continue;
    std::string list;
    for (size_t i = 0; i < levels.size(); ++i)
      list += (i == 0 ? "" : i + 1 == levels.size() ? " and " : ", ") + std::to_string(levels[i]);
    out.push_back("event " + header.events[e].name +
                  ": the epochs read were sampled at precise_ip " + list + "; their skid differs");
  }
  for (size_t e = 0; e < header.scale.size() && e < header.events.size(); ++e) {
    if (header.scale[e] == 1.0) continue;
    char text[160];
    std::snprintf(text, sizeof(text),
                  "event %s multiplexed: counts scaled by %.2f (running %.1f%% of enabled)",
                  header.events[e].name.c_str(), header.scale[e], RunningPercent(header, e));
    out.push_back(text);
  }
  if (const int64_t throttles = Stat(header.stats, "throttle_events"); throttles > 0) {
    const int64_t lost = Stat(header.stats, "throttled_lost_estimate");
    char text[200];
    if (lost > 0) {
      std::snprintf(text, sizeof(text),
                    "perf throttled sampling %" PRId64 " times: about %" PRId64
                    " samples (%.1f%% of those asked for) were never taken; the counts are "
                    "of the samples taken (an estimate of lcpi.ko's)",
                    throttles, lost, header.throttled_percent);
    } else {
      std::snprintf(text, sizeof(text),
                    "perf throttled sampling %" PRId64
                    " times; the samples that cost are not estimated (only lcpi.ko does)",
                    throttles);
    }
    out.push_back(text);
  }
  return out;
}

Expected<Header> BeginReport(ProfileDb& db, const std::string& epoch, const TimeRange& range,
                             const std::vector<std::string>& events) {
  auto snap = db.BeginSnapshot();
  if (!snap) return snap.error();
  auto header = ReadHeader(db, epoch, range, events);
  if (!header) (void)db.EndSnapshot();
  return header;
}

// "build-id conflict" warnings for the images in `rows` whose build-id an
// image of another layout claims too (image_id.h): one of them is not the
// file it claims to be, and each one's samples are its own. Identities
// recorded before layouts were part of them (the build-id alone) conflict
// with nothing.
Expected<std::vector<std::string>> BuildIdConflicts(ProfileDb& db, const std::vector<Row>& rows) {
  auto images = db.ListImages();
  if (!images) return images.error();
  std::map<std::string, std::vector<const ImageInfo*>> by_build_id;
  for (const ImageInfo& i : *images) {
    const std::string build_id = BuildIdOfIdentity(i.identity);
    if (!build_id.empty() && i.identity.size() > 9 + build_id.size())
      by_build_id[build_id].push_back(&i);
  }
  std::set<int64_t> shown;
  for (const Row& r : rows) shown.insert(r.image_id);
  std::vector<std::string> out;
  for (const auto& [build_id, claims] : by_build_id) {
    if (claims.size() < 2) continue;
    for (const ImageInfo* i : claims) {
      if (!shown.contains(i->id)) continue;
      out.push_back("build-id conflict: " + i->path + " (" + i->identity + ") claims build-id " +
                    build_id + ", as " + std::to_string(claims.size() - 1) +
                    " other image(s) of another layout do; its samples are its own");
    }
  }
  return out;
}

Expected<Profile> BuildProfile(ProfileDb& db, const ProfOptions& options) {
  if (auto ok = CheckProfOptions(options); !ok) return ok.error();
  auto header = BeginReport(db, options.epoch, options.range, options.events);
  if (!header) return header.error();
  SnapshotGuard end(db);
  auto started = StartProfile(options, std::move(*header));
  if (!started) return started.error();
  Profile& p = *started;
  Expected<std::vector<Row>> rows = std::vector<Row>{};
  switch (options.view) {
    case View::kImages:
      rows = options.labels.empty() ? ImageRows(db, p.header)
                                    : LabelledImageRows(db, p.header, options);
      break;
    case View::kProcedures:
      rows = ProcedureRows(db, p.header, options.images, &p.warnings);
      break;
    case View::kProcesses:
      rows = ProcessRows(db, p.header, options);
      break;
    case View::kLabels:
      rows = LabelRows(db, p.header, options);
      break;
  }
  if (!rows) return rows.error();
  p.rows = std::move(*rows);
  // lcpi's own samples on a line of their own (observer.h)
  if (!options.observer_inline)
    if (auto ok = AttributeObserver(db, p.header, options.view, !options.labels.empty(), &p.rows);
        !ok)
      return ok.error();
  if (options.view != View::kProcesses && options.view != View::kLabels) {
    auto conflicts = BuildIdConflicts(db, p.rows);
    if (!conflicts) return conflicts.error();
    for (std::string& w : *conflicts) p.warnings.push_back(std::move(w));
  }
  if (!p.header.events.empty()) SortRows(&p.rows, p.sort_column);
  Trim(&p, options.keep_percent, options.top);
  for (std::string& w : EventWarnings(p.header)) p.warnings.push_back(std::move(w));
  return started;
}

void FinishDiff(std::map<std::pair<std::string, std::string>, DiffRow> rows, uint64_t total_a,
                uint64_t total_b, const DiffOptions& options, Diff* diff) {
  Diff& d = *diff;
  for (auto& [k, dr] : rows) {
    if (dr.count_a == 0 && dr.count_b == 0) continue;
    dr.share_a = Percent(dr.count_a, total_a);
    dr.share_b = Percent(dr.count_b, total_b);
    dr.delta = dr.share_b - dr.share_a;
    dr.status = dr.count_a == 0 ? "new" : dr.count_b == 0 ? "vanished" : "";
    d.rows.push_back(dr);
  }
  std::sort(d.rows.begin(), d.rows.end(), [](const DiffRow& x, const DiffRow& y) {
    const double ax = std::fabs(x.delta), ay = std::fabs(y.delta);
    if (ax != ay) return ax > ay;
    return std::tie(x.image, x.name) < std::tie(y.image, y.name);
  });
  size_t n = 0;
  while (n < d.rows.size()) {
    if (options.top && n >= options.top) break;
    if (options.keep_points > 0 && std::fabs(d.rows[n].delta) < options.keep_points) break;
    ++n;
  }
  d.omitted = d.rows.size() - n;
  d.rows.resize(n);
}

namespace {

// A and B compared: each row's counts of the event in each, by path (and
// procedure).
Expected<Diff> DiffProfiles(const Profile& a, const Profile& b, const DiffOptions& options) {
  Diff d;
  d.view = options.view;
  d.a = a.header;
  d.b = b.header;
  // What both sides warn of (the same database's conflicts, the same
  // fleet's hosts) is said once.
  AddWarnings(a.warnings, &d.warnings);
  AddWarnings(b.warnings, &d.warnings);
  // The event: asked for, or the first of A's columns that B has too.
  auto column = [](const Header& h, const std::string& name) -> std::optional<size_t> {
    for (size_t e = 0; e < h.events.size(); ++e) {
      if (h.events[e].name == name) return e;
    }
    return std::nullopt;
  };
  if (!options.event.empty()) {
    d.event = options.event;
  } else {
    for (const EventInfo& e : d.a.events) {
      if (column(d.b, e.name)) {
        d.event = e.name;
        break;
      }
    }
  }
  auto ca = column(d.a, d.event), cb = column(d.b, d.event);
  if (d.event.empty() || !ca || !cb) {
    return Error(Errc::kNotFound, d.event.empty() ? "the two profiles have no event in common"
                                                  : "no such event in both profiles: " + d.event);
  }
  const uint64_t total_a = d.a.totals[*ca], total_b = d.b.totals[*cb];
  // By path (and procedure): a rebuilt binary has a new identity and is
  // still the same program to compare.
  std::map<std::pair<std::string, std::string>, DiffRow> rows;
  auto key = [&](const Row& r) {
    return options.view == View::kImages ? std::make_pair(r.name, std::string())
                                         : std::make_pair(r.image, r.name);
  };
  for (const Row& r : a.rows) {
    DiffRow& dr = rows[key(r)];
    dr.name = r.name;
    dr.image = r.image;
    dr.count_a = SaturatingAdd(dr.count_a, r.counts[*ca]);
  }
  for (const Row& r : b.rows) {
    DiffRow& dr = rows[key(r)];
    dr.name = r.name;
    dr.image = r.image;
    dr.count_b = SaturatingAdd(dr.count_b, r.counts[*cb]);
  }
  FinishDiff(std::move(rows), total_a, total_b, options, &d);
  return d;
}

}  // namespace

Expected<Diff> BuildDiffWith(const DiffOptions& options, const BuildSide& build) {
  if (options.view == View::kProcesses || options.view == View::kLabels) {
    return Error(Errc::kInvalidArgument, "lcpidiff compares images or procedures");
  }
  ProfOptions po;
  po.view = options.view;
  po.images = options.images;
  po.epoch = options.epoch_a;
  po.range = options.range_a;
  auto a = build(po, false);
  if (!a) return a.error();
  po.epoch = options.epoch_b;
  po.range = options.range_b;
  auto b = build(po, true);
  if (!b) return b.error();
  return DiffProfiles(*a, *b, options);
}

Expected<Diff> BuildDiff(ProfileDb& db_a, ProfileDb& db_b, const DiffOptions& options) {
  return BuildDiffWith(options, [&](const ProfOptions& po, bool side_b) {
    return BuildProfile(side_b ? db_b : db_a, po);
  });
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

}  // namespace lcpi::report
