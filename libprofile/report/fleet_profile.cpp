// fleet_profile.cpp - lcpiprof's report over the fleet's ClickHouse tables
// (fleet_profile.h): the sums are GROUP BYs in the engine; the rows are
// made, named, sorted and trimmed as a local report's (profile_rows.h).
#include "libprofile/report/fleet_profile.h"

#include <algorithm>
#include <map>
#include <set>

#include "libprofile/base/text.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/fleet/clickhouse_text.h"
#include "libprofile/fleet/fleet_schema.h"
#include "libprofile/image/image_id.h"
#include "libprofile/report/image_filter.h"
#include "libprofile/report/profile_rows.h"

namespace lcpi::report {

namespace {

using fleet::SqlString;

constexpr uint32_t kShippedRolledUpPid = 4294967295u;  // lcpi-ship's pid of rolled-up rows
// A query naming many images is sent in parts, each well under the
// server's max_query_size (256 KiB by default).
constexpr size_t kMaxInListBytes = 64 * 1024;

using Rows = std::vector<std::vector<std::string>>;

Expected<Rows> Select(fleet::ClickHouseHttp& ch, const std::string& sql) {
  auto text = ch.Query(sql + " FORMAT TabSeparated");
  if (!text) return text.error();
  Rows rows;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t end = text->find('\n', pos);
    if (end == std::string::npos) end = text->size();
    std::vector<std::string> fields;
    size_t f = pos;
    while (true) {
      const size_t tab = text->find('\t', f);
      if (tab == std::string::npos || tab > end) {
        fields.push_back(text->substr(f, end - f));
        break;
      }
      fields.push_back(text->substr(f, tab - f));
      f = tab + 1;
    }
    rows.push_back(std::move(fields));
    pos = end + 1;
  }
  return rows;
}

// Every string the reports read comes back as hex(...): any byte survives.
std::string Unhex(const std::string& hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return 0;
  };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1]));
  return out;
}

uint64_t Number(const std::string& text) { return std::strtoull(text.c_str(), nullptr, 10); }

Expected<std::vector<std::string>> Fields(const std::vector<std::string>& row, size_t n) {
  if (row.size() != n) {
    return Error(Errc::kCorrupt, "ClickHouse answered a row of " + std::to_string(row.size()) +
                                     " fields, not " + std::to_string(n));
  }
  return row;
}

// The SQL every query shares: the database, and the conditions on windows.
class FleetSql {
 public:
  FleetSql(const FleetSelection& f, const TimeRange& range) : db_(f.database) {
    if (!f.hosts.empty()) {
      std::string list;
      for (const std::string& h : f.hosts) list += (list.empty() ? "" : ", ") + SqlString(h);
      hosts_ = " AND host IN (" + list + ")";
    }
    std::string when;
    if (range.until) when += " AND toUInt32(started) < " + std::to_string(*range.until);
    if (range.since) {
      // As EpochsOverlapping: ends after since, or an instant at or after it.
      const std::string s = std::to_string(*range.since);
      when += " AND (toUInt32(ended) > " + s + " OR (ended = started AND toUInt32(ended) >= " + s +
              "))";
    }
    window_where_ = "1" + hosts_ + when;
    // GLOBAL IN: the windows are chosen once, on the server asked, and the
    // set sent to every shard (a plain IN over Distributed tables is refused).
    rows_where_ = "1" + hosts_;
    if (!when.empty())
      rows_where_ += " AND (host, window_id) GLOBAL IN (SELECT host, window_id FROM " +
                     Table("windows") + " WHERE " + window_where_ + ")";
    for (const std::string& b : f.build_ids) {
      build_ids_ += (build_ids_.empty() ? "" : " OR ") + std::string("identity = ") +
                    SqlString("build-id:" + b) + " OR identity LIKE " +
                    SqlString("build-id:" + b + ":%");
    }
    if (!build_ids_.empty()) build_ids_ = " AND (" + build_ids_ + ")";
  }
  std::string Table(const std::string& name) const { return db_ + "." + name; }
  const std::string& windows_where() const { return window_where_; }
  // Rows of the selected windows (and, with --build-id, images).
  std::string Where() const { return rows_where_ + build_ids_; }
  std::string WhereAllImages() const { return rows_where_; }

 private:
  std::string db_, hosts_, window_where_, rows_where_, build_ids_;
};

// The label column of the fleet's processes for a label key.
std::string LabelColumn(const std::string& key) { return key; }  // unit, container, pod, cgroup

std::string LabelConditions(const std::vector<LabelFilter>& labels) {
  std::string out;
  for (const LabelFilter& l : labels) {
    const std::string col = LabelColumn(l.key);
    std::string cond = col + " = " + SqlString(l.value);
    if (l.key == "container" && l.value.size() >= 12) {
      // docker ps shows 12 digits of an id
      cond += " OR (" + col + " != '' AND substring(" + col + ", 1, " +
              std::to_string(l.value.size()) + ") = " + SqlString(l.value) + ")";
    }
    out += " AND (" + cond + ")";
  }
  return out;
}

// The header: the windows read, the events and their totals.
Expected<Header> FleetHeader(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                             const FleetSelection& f, const ProfOptions& o) {
  Header h;
  h.database = ch.shown_url() + " database " + f.database;
  h.range = o.range;
  if (o.range.since && o.range.until && *o.range.since >= *o.range.until) {
    return Error(Errc::kInvalidArgument, "--since " + FormatUtc(*o.range.since) +
                                             " is not before --until " + FormatUtc(*o.range.until));
  }
  auto windows = Select(ch,
                        "SELECT count(), uniqExact(host), toUInt32(min(started)), "
                        "toUInt32(max(ended)) FROM " +
                            sql.Table("windows") + " WHERE " + sql.windows_where());
  if (!windows) return windows.error();
  if (windows->size() != 1 || windows->front().size() != 4 || Number(windows->front()[0]) == 0) {
    return Error(Errc::kNotFound, h.database + ": no window shipped" +
                                      (f.hosts.empty() ? "" : " by the hosts asked for") +
                                      (o.range.empty() ? "" : " in the time asked for"));
  }
  const auto& w = windows->front();
  EpochInfo span;
  span.tag = "fleet: " + w[0] + " windows of " + w[1] + " host" + (w[1] == "1" ? "" : "s");
  span.started = static_cast<int64_t>(Number(w[2]));
  span.ended = static_cast<int64_t>(Number(w[3]));
  span.kind = EpochKind::kWindow;
  h.epochs.push_back(span);

  auto events = Select(ch,
                       "SELECT hex(event), hex(argMax(used, started)), "
                       "argMax(period, started), groupUniqArray(period), sum(count) FROM " +
                           sql.Table("shipped_counts") + " WHERE " + sql.WhereAllImages() +
                           " GROUP BY event");
  if (!events) return events.error();
  struct Fact {
    EventInfo info;
    std::vector<uint64_t> periods;
    uint64_t total = 0;
  };
  std::map<std::string, Fact> by_name;
  for (const auto& row : *events) {
    auto r = Fields(row, 5);
    if (!r) return r.error();
    Fact fact;
    fact.info.name = Unhex((*r)[0]);
    fact.info.used = Unhex((*r)[1]);
    fact.info.period = Number((*r)[2]);
    std::string list = (*r)[3];  // [1000,2000]
    for (char& c : list)
      if (c == '[' || c == ']' || c == ',') c = ' ';
    for (size_t p = 0; p < list.size();) {
      char* end = nullptr;
      const uint64_t v = std::strtoull(list.c_str() + p, &end, 10);
      if (end == list.c_str() + p) break;
      fact.periods.push_back(v);
      p = static_cast<size_t>(end - list.c_str());
    }
    std::sort(fact.periods.begin(), fact.periods.end());
    fact.total = Number((*r)[4]);
    by_name[fact.info.name] = std::move(fact);
  }
  std::vector<std::string> names = o.events;
  if (names.empty())
    for (const auto& [name, fact] : by_name) names.push_back(name);
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      std::string known;
      for (const auto& [n, fact] : by_name) known += (known.empty() ? "" : ", ") + n;
      return Error(Errc::kNotFound, "no such event: " + name + " (the fleet has: " +
                                        (known.empty() ? "none" : known) + ")");
    }
    EventInfo e = it->second.info;
    e.id = static_cast<int64_t>(h.events.size()) + 1;
    h.events.push_back(e);
    h.totals.push_back(it->second.total);
    h.periods.push_back(it->second.periods.size() > 1 ? it->second.periods
                                                      : std::vector<uint64_t>{});
    h.precise.push_back(0);
    h.precise_levels.push_back({});
    h.time_enabled.push_back(0);
    h.time_running.push_back(0);
    h.scale.push_back(1.0);
  }
  return h;
}

std::optional<size_t> Column(const Header& h, const std::string& event) {
  for (size_t e = 0; e < h.events.size(); ++e)
    if (h.events[e].name == event) return e;
  return std::nullopt;
}

// identity -> (kind, path) from the fleet's images.
Expected<std::map<std::string, ImageInfo>> ImagesOf(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                                    const std::set<std::string>& identities) {
  std::map<std::string, ImageInfo> out;
  for (const std::string& id : identities) {  // an image the fleet has no row of
    ImageInfo& i = out[id];
    i.identity = id;
    i.path = id;
    i.kind = ImageKind::kUnknown;
  }
  for (const std::string& list :
       fleet::SqlInLists({identities.begin(), identities.end()}, kMaxInListBytes)) {
    auto rows =
        Select(ch, "SELECT hex(identity), any(kind), hex(any(path)) FROM " + sql.Table("images") +
                       " WHERE identity IN (" + list + ") GROUP BY identity");
    if (!rows) return rows.error();
    for (const auto& row : *rows) {
      auto r = Fields(row, 3);
      if (!r) return r.error();
      ImageInfo& i = out[Unhex((*r)[0])];
      i.kind = ParseImageKind((*r)[1]).value_or(ImageKind::kUnknown);
      i.path = Unhex((*r)[2]);
    }
  }
  int64_t next = 1;
  for (auto& [id, info] : out) info.id = next++;
  return out;
}

// Sums per (key..., event) read from `rows` whose last two fields are the
// event (hex) and the count, into one Row per key.
template <class Name>
Expected<std::vector<Row>> SumRows(const Header& h, const Rows& rows, size_t fields, Name name) {
  std::map<std::vector<std::string>, Row> sums;
  for (const auto& row : rows) {
    auto r = Fields(row, fields);
    if (!r) return r.error();
    auto e = Column(h, Unhex((*r)[fields - 2]));
    const uint64_t count = Number((*r)[fields - 1]);
    if (!e || count == 0) continue;
    std::vector<std::string> key(r->begin(), r->end() - 2);
    Row& out = sums[key];
    if (out.counts.empty()) {
      name(out, key);
      out.counts.resize(h.events.size(), 0);
    }
    out.counts[*e] += count;
  }
  std::vector<Row> out;
  for (auto& [k, r] : sums) out.push_back(std::move(r));
  return out;
}

Expected<std::vector<Row>> ImageRows(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                     const Header& h, const ProfOptions& o) {
  const std::string from = o.labels.empty() ? sql.Table("shipped_counts") + " WHERE " + sql.Where()
                                            : sql.Table("shipped_processes") + " WHERE " +
                                                  sql.Where() + LabelConditions(o.labels);
  auto rows = Select(ch, "SELECT hex(identity), hex(event), sum(count) FROM " + from +
                             " GROUP BY identity, event");
  if (!rows) return rows.error();
  std::set<std::string> ids;
  for (const auto& r : *rows)
    if (!r.empty()) ids.insert(Unhex(r[0]));
  auto images = ImagesOf(ch, sql, ids);
  if (!images) return images.error();
  return SumRows(h, *rows, 3, [&](Row& r, const std::vector<std::string>& key) {
    const ImageInfo& info = (*images)[Unhex(key[0])];
    r.name = info.path;
    r.identity = info.identity;
    r.kind = info.kind;
    r.image_id = info.id;
  });
}

// The shipped procedures of one image, ascending by offset, then name (as
// ProfileDb::Symbols orders a local database's).
Expected<std::map<std::string, std::vector<SymbolInfo>>> SymbolsOf(
    fleet::ClickHouseHttp& ch, const FleetSql& sql, const std::vector<std::string>& identities) {
  std::map<std::string, std::vector<SymbolInfo>> out;
  for (const std::string& list : fleet::SqlInLists(identities, kMaxInListBytes)) {
    // DISTINCT: two hosts may have sent an identity at once, and every
    // shard holds the copy of its own hosts.
    auto rows = Select(ch, "SELECT DISTINCT hex(identity), offset, size, hex(name) FROM " +
                               sql.Table("symbols") + " WHERE identity IN (" + list + ")");
    if (!rows) return rows.error();
    for (const auto& row : *rows) {
      auto r = Fields(row, 4);
      if (!r) return r.error();
      out[Unhex((*r)[0])].push_back({Number((*r)[1]), Number((*r)[2]), Unhex((*r)[3])});
    }
  }
  for (auto& [id, symbols] : out) {
    std::sort(symbols.begin(), symbols.end(), [](const SymbolInfo& a, const SymbolInfo& b) {
      return std::tie(a.offset, a.name) < std::tie(b.offset, b.name);
    });
  }
  return out;
}

Expected<std::vector<Row>> ProcedureRows(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                         const Header& h, const ProfOptions& o,
                                         std::vector<std::string>* warnings) {
  auto per_image = Select(ch, "SELECT DISTINCT hex(identity) FROM " + sql.Table("shipped_counts") +
                                  " WHERE " + sql.Where());
  if (!per_image) return per_image.error();
  std::set<std::string> ids;
  for (const auto& r : *per_image)
    if (!r.empty()) ids.insert(Unhex(r[0]));
  auto images = ImagesOf(ch, sql, ids);
  if (!images) return images.error();
  std::vector<std::string> wanted;
  for (const std::string& f : o.images) {
    if (std::none_of(images->begin(), images->end(),
                     [&](const auto& i) { return ImageMatches(i.second, f); }))
      return Error(Errc::kNotFound, "no such image with samples in the fleet: " + f);
  }
  for (const auto& image : *images) {  // no structured binding: clang 14 cannot capture one
    if (o.images.empty() || std::any_of(o.images.begin(), o.images.end(), [&](const auto& f) {
          return ImageMatches(image.second, f);
        }))
      wanted.push_back(image.first);
  }
  // image -> offset -> counts per event column: summed by the engine
  std::map<std::string, CountsByOffset> offsets;
  for (const std::string& list : fleet::SqlInLists(wanted, kMaxInListBytes)) {
    auto rows = Select(ch, "SELECT hex(identity), hex(event), offset, sum(count) FROM " +
                               sql.Table("shipped_counts") + " WHERE " + sql.Where() +
                               " AND identity IN (" + list + ") GROUP BY identity, event, offset");
    if (!rows) return rows.error();
    for (const auto& row : *rows) {
      auto r = Fields(row, 4);
      if (!r) return r.error();
      auto e = Column(h, Unhex((*r)[1]));
      if (!e) continue;
      auto& c = offsets[Unhex((*r)[0])][Number((*r)[2])];
      c.resize(h.events.size(), 0);
      c[*e] += Number((*r)[3]);
    }
  }
  auto symbols = SymbolsOf(ch, sql, wanted);
  if (!symbols) return symbols.error();
  std::vector<Row> rows;
  for (auto& [id, counts] : offsets) {
    const ImageInfo& info = (*images)[id];
    auto s = symbols->find(id);
    std::vector<SymbolInfo> shipped = s == symbols->end() ? std::vector<SymbolInfo>{} : s->second;
    if (shipped.empty() && info.kind != ImageKind::kUnknown)
      warnings->push_back("no symbols shipped for " + info.path + " (" + info.identity +
                          "): samples shown as offset ranges");
    // The file's symbols (sized, as ElfImage's) unless lcpid stored them.
    const bool elf = !HasStoredSymbols(info.kind) && info.path.rfind("[", 0) != 0;
    const ImageSymbolizer sym = ImageSymbolizer::FromShipped(std::move(shipped), elf);
    AddProcedureRows(counts, sym, info, h.events.size(), &rows);
  }
  return rows;
}

// -P (per host, pid and command) and --by (per label value).
Expected<std::vector<Row>> ProcessOrLabelRows(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                              const Header& h, const ProfOptions& o) {
  const std::string by = o.by.empty() ? "''" : LabelColumn(o.by);
  const std::string where = " WHERE " + sql.Where() + LabelConditions(o.labels);
  if (o.view == View::kLabels) {
    auto rows =
        Select(ch, "SELECT hex(" + by + "), hex(event), sum(count) FROM " +
                       sql.Table("shipped_processes") + where + " GROUP BY " + by + ", event");
    if (!rows) return rows.error();
    return SumRows(h, *rows, 3, [&](Row& r, const std::vector<std::string>& key) {
      r.label = Unhex(key[0]);
      r.name = r.label.empty() ? "[no " + o.by + "]" : r.label;
    });
  }
  auto rows = Select(ch, "SELECT hex(host), pid, hex(comm), hex(" + by +
                             "), hex(event), sum(count) FROM " + sql.Table("shipped_processes") +
                             where + " GROUP BY host, pid, comm, " + by + ", event");
  if (!rows) return rows.error();
  return SumRows(h, *rows, 6, [&](Row& r, const std::vector<std::string>& key) {
    const std::string comm = Unhex(key[2]);
    r.pid = static_cast<uint32_t>(Number(key[1]));
    // A pid names a process on its host only.
    r.name = (r.pid == kShippedRolledUpPid ? comm + " [rolled up]" : comm) + " @" + Unhex(key[0]);
    if (r.pid == kShippedRolledUpPid) r.pid = kRolledUpPid;
    r.label = Unhex(key[3]);
  });
}

}  // namespace

Expected<Profile> BuildFleetProfile(fleet::ClickHouseHttp& ch, const FleetSelection& f,
                                    const ProfOptions& options) {
  if (auto ok = fleet::CheckDatabaseName(f.database); !ok) return ok.error();
  if (!options.epoch.empty()) {
    return Error(Errc::kInvalidArgument,
                 "--epoch names one host's epochs: over --fleet choose windows with "
                 "--since/--until and --host");
  }
  for (const std::string& b : f.build_ids) {
    if (b.empty() || b.size() > 128 || !std::all_of(b.begin(), b.end(), [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        }))
      return Error(Errc::kInvalidArgument,
                   "--build-id takes a build-id in lowercase hex, not " + Printable(b));
  }
  if (auto ok = CheckProfOptions(options); !ok) return ok.error();
  const FleetSql sql(f, options.range);
  auto header = FleetHeader(ch, sql, f, options);
  if (!header) return header.error();
  auto started = StartProfile(options, std::move(*header));
  if (!started) return started.error();
  Profile& p = *started;
  Expected<std::vector<Row>> rows = std::vector<Row>{};
  switch (options.view) {
    case View::kImages:
      rows = ImageRows(ch, sql, p.header, options);
      break;
    case View::kProcedures:
      rows = ProcedureRows(ch, sql, p.header, options, &p.warnings);
      break;
    case View::kProcesses:
    case View::kLabels:
      rows = ProcessOrLabelRows(ch, sql, p.header, options);
      break;
  }
  if (!rows) return rows.error();
  p.rows = std::move(*rows);
  if (!p.header.events.empty()) SortRows(&p.rows, p.sort_column);
  Trim(&p, options.keep_percent, options.top);
  return started;
}

}  // namespace lcpi::report
