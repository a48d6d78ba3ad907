// fleet_profile.cpp - lcpiprof's report over the fleet's ClickHouse tables
// (fleet_profile.h): the sums are GROUP BYs in the engine; the rows are
// made, named, sorted and trimmed as a local report's (profile_rows.h).
#include "libprofile/report/fleet_profile.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "libprofile/base/text.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/fleet/clickhouse_text.h"
#include "libprofile/fleet/fleet_schema.h"
#include "libprofile/fleet/tsv_answer.h"
#include "libprofile/image/image_id.h"
#include "libprofile/report/fleet_period_weights.h"
#include "libprofile/report/image_filter.h"
#include "libprofile/report/profile_rows.h"

namespace lcpi::report {

namespace {

using fleet::SqlString;

constexpr uint32_t kShippedRolledUpPid = 4294967295u;  // lcpi-ship's pid of rolled-up rows
// A query naming many images is sent in parts, each well under the
// server's max_query_size (256 KiB by default).
constexpr size_t kMaxInListBytes = 64 * 1024;

using Fields = std::vector<std::string_view>;

// Runs a SELECT and hands each row of its answer (exactly `fields` fields)
// to `row` as it is read; at most fleet::kMaxAnswerRows rows (tsv_answer.h).
Expected<void> Select(fleet::ClickHouseHttp& ch, const std::string& sql, size_t fields,
                      const std::function<Expected<void>(const Fields&)>& row) {
  auto text = ch.Query(sql + " FORMAT TabSeparated");
  if (!text) return text.error();
  return fleet::ForEachTsvRow(*text, fields, fleet::kMaxAnswerRows, row);
}

// Every string the reports read comes back as hex(...): any byte survives.
std::string Unhex(std::string_view hex) {
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

uint64_t Number(std::string_view text) {
  uint64_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

// Each event column's weight for a window sampled at `period`: its period
// over the header's (the reference: fleet_period_weights.h), as a local
// report weighs epochs (ProfileDb::WeightsByPeriod), when the windows read
// differ in period; else 1. A period refused (0, beyond 2^62) weighs
// nothing: its counts were counted in the header's warning.
class Weights {
 public:
  explicit Weights(const Header& h) {
    for (size_t e = 0; e < h.events.size(); ++e)
      of_.emplace_back(h.periods[e].size() > 1 ? h.events[e].period : 0);
  }
  long double Of(size_t column, uint64_t period) const {
    return of_[column].Of(period).value_or(0.0L);
  }

 private:
  std::vector<PeriodWeight> of_;
};

// Weighed sums as counts, saturating; one warning if any was clamped.
class Counts {
 public:
  explicit Counts(std::vector<std::string>* warnings) : warnings_(warnings) {}
  uint64_t Of(long double sum) {
    bool saturated = false;
    const uint64_t n = WeighedCount(sum, &saturated);
    static const std::string kSaturated =
        "a weighed count beyond 2^64-1 (a host shipped counts that large) is shown as "
        "18446744073709551615";
    if (saturated &&
        std::find(warnings_->begin(), warnings_->end(), kSaturated) == warnings_->end())
      warnings_->push_back(kSaturated);
    return n;
  }

 private:
  std::vector<std::string>* warnings_;
};

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
  // Count rows at a period a report weighs (FleetPeriodValid): the others
  // are refused, and name nothing either.
  static std::string ValidPeriod() {
    return "(period BETWEEN 1 AND " + std::to_string(kMaxFleetPeriod) + ")";
  }

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
                             const FleetSelection& f, const ProfOptions& o,
                             std::vector<std::string>* warnings) {
  Header h;
  h.database = ch.shown_url() + " database " + f.database;
  h.range = o.range;
  if (o.range.since && o.range.until && *o.range.since >= *o.range.until) {
    return Error(Errc::kInvalidArgument, "--since " + FormatUtc(*o.range.since) +
                                             " is not before --until " + FormatUtc(*o.range.until));
  }
  std::vector<std::string> w;
  auto windows = Select(ch,
                        "SELECT count(), uniqExact(host), toUInt32(min(started)), "
                        "toUInt32(max(ended)) FROM " +
                            sql.Table("windows") + " WHERE " + sql.windows_where(),
                        4, [&](const Fields& r) -> Expected<void> {
                          w.assign(r.begin(), r.end());
                          return {};
                        });
  if (!windows) return windows.error();
  if (w.empty() || Number(w[0]) == 0) {
    return Error(Errc::kNotFound, h.database + ": no window shipped" +
                                      (f.hosts.empty() ? "" : " by the hosts asked for") +
                                      (o.range.empty() ? "" : " in the time asked for"));
  }
  EpochInfo span;
  span.tag = "fleet: " + w[0] + " windows of " + w[1] + " host" + (w[1] == "1" ? "" : "s");
  span.started = static_cast<int64_t>(Number(w[2]));
  span.ended = static_cast<int64_t>(Number(w[3]));
  span.kind = EpochKind::kWindow;
  h.epochs.push_back(span);

  // Per event: each host's newest window of a valid period (what it
  // sampled, the period) and the samples each host shipped at a refused
  // period; the reference (the header's period) is chosen from the hosts'
  // (ReferenceHost), then the samples per valid period are weighed to it.
  struct Fact {
    EventInfo info;
    std::vector<HostPeriod> newest;           // per host
    std::vector<std::string> used;            // per host, as newest
    std::map<std::string, uint64_t> refused;  // host -> samples at a refused period
    std::map<uint64_t, uint64_t> by_period;   // valid period -> samples
  };
  std::map<std::string, Fact> by_name;
  const std::string valid = FleetSql::ValidPeriod();
  // A host's newest window: by start, then by id, as a local report takes
  // the newest epoch; starts are whole seconds, and two windows of one
  // second made argMax pick either (fleet-report failed so in CI).
  const std::string newest = "(started, window_id)";
  auto events =
      Select(ch,
             "SELECT hex(event), hex(host), argMaxIf(period, " + newest + ", " + valid +
                 "), toUInt32(maxIf(started, " + valid + ")), hex(argMaxIf(used, " + newest + ", " +
                 valid + ")), sumIf(count, NOT " + valid + ") FROM " + sql.Table("shipped_counts") +
                 " WHERE " + sql.WhereAllImages() + " GROUP BY event, host",
             6, [&](const Fields& r) -> Expected<void> {
               Fact& fact = by_name[Unhex(r[0])];
               fact.info.name = Unhex(r[0]);
               const std::string host = Unhex(r[1]);
               fact.newest.push_back({host, static_cast<int64_t>(Number(r[3])), Number(r[2])});
               fact.used.push_back(Unhex(r[4]));
               if (Number(r[5]) > 0) fact.refused[host] = Number(r[5]);
               return {};
             });
  if (!events) return events.error();
  for (auto& [name, fact] : by_name) {
    if (auto ref = ReferenceHost(fact.newest)) {
      fact.info.period = fact.newest[*ref].period;
      fact.info.used = fact.used[*ref];
    }
  }
  auto periods =
      Select(ch,
             "SELECT hex(event), period, sum(count) FROM " + sql.Table("shipped_counts") +
                 " WHERE " + sql.WhereAllImages() + " AND " + valid + " GROUP BY event, period",
             3, [&](const Fields& r) -> Expected<void> {
               auto it = by_name.find(Unhex(r[0]));
               if (it != by_name.end() && FleetPeriodValid(Number(r[1])))
                 it->second.by_period[Number(r[1])] += Number(r[2]);
               return {};
             });
  if (!periods) return periods.error();
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
    if (!it->second.refused.empty()) {
      uint64_t samples = 0;
      std::string hosts;
      for (const auto& [host, n] : it->second.refused) {
        samples = n > UINT64_MAX - samples ? UINT64_MAX : samples + n;
        if (hosts.size() < 200) hosts += (hosts.empty() ? "" : ", ") + Printable(host);
      }
      warnings->push_back(std::to_string(samples) + " samples of " + Printable(name) +
                          " shipped at a period of 0 or beyond 2^62 (no source samples so) by " +
                          std::to_string(it->second.refused.size()) + " host(s) (" + hosts +
                          (hosts.size() >= 200 ? ", ..." : "") + "): not counted");
    }
    h.events.push_back(e);
    std::vector<uint64_t> seen;
    for (const auto& [period, n] : it->second.by_period) seen.push_back(period);
    h.periods.push_back(seen.size() > 1 ? seen : std::vector<uint64_t>{});
    h.precise.push_back(0);
    h.precise_levels.push_back({});
    h.time_enabled.push_back(0);
    h.time_running.push_back(0);
    h.scale.push_back(1.0);
  }
  const Weights weights(h);
  Counts counts(warnings);
  for (size_t e = 0; e < h.events.size(); ++e) {
    long double total = 0;
    for (const auto& [period, n] : by_name[h.events[e].name].by_period)
      total += static_cast<long double>(n) * weights.Of(e, period);
    h.totals.push_back(counts.Of(total));
  }
  return h;
}

std::optional<size_t> Column(const Header& h, const std::string& event) {
  for (size_t e = 0; e < h.events.size(); ++e)
    if (h.events[e].name == event) return e;
  return std::nullopt;
}

// identity -> the host whose image row and symbols name it: the host with
// the most samples of it in the selection, ties by the least host name.
// Every host ships its own (schema 2), so no host outside the selection
// names it, nor, without --host, one that shipped a few count rows of
// another's image (every host's word is trusted for its own counts: to
// rename, it must outweigh the others' samples, in plain sight).
using NamingHosts = std::map<std::string, std::string>;

Expected<NamingHosts> NamingHostsOf(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                    const std::set<std::string>& identities) {
  NamingHosts out;
  for (const std::string& list :
       fleet::SqlInLists({identities.begin(), identities.end()}, kMaxInListBytes)) {
    auto ok = Select(ch,
                     "SELECT hex(identity), hex(host) FROM (SELECT identity, host, sum(count) AS n "
                     "FROM " +
                         sql.Table("shipped_counts") + " WHERE " + sql.WhereAllImages() + " AND " +
                         FleetSql::ValidPeriod() + " AND identity IN (" + list +
                         ") GROUP BY identity, host) ORDER BY identity, n DESC, host "
                         "LIMIT 1 BY identity",
                     2, [&](const Fields& r) -> Expected<void> {
                       out[Unhex(r[0])] = Unhex(r[1]);
                       return {};
                     });
    if (!ok) return ok.error();
  }
  return out;
}

// The hex strings of a TabSeparated Array(String) of hex(...): ['41','42'].
std::vector<std::string> HexArray(std::string_view text) {
  std::vector<std::string> out;
  bool in = false;
  for (char c : text) {
    if (c == '\'') {
      in = !in;
      if (in) out.emplace_back();
    } else if (in) {
      out.back() += c;
    }
  }
  return out;
}

// A warning per identity whose hosts with samples of it in the selection
// shipped different symbols (a build's symbols are the same on every host
// that ran it: a difference is a hostile or broken shipper). The naming
// host's are used; the warning names the first 5 hosts by name, and at
// most kMaxDisagreeWarnings identities are named (then one line counts the
// rest): a hostile host may disagree on every image.
constexpr size_t kMaxDisagreeWarnings = 10;
Expected<void> WarnDisagreeingSymbols(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                      const std::vector<std::string>& identities,
                                      const NamingHosts& naming,
                                      std::vector<std::string>* warnings) {
  size_t disagree = 0;
  for (const std::string& list : fleet::SqlInLists(identities, kMaxInListBytes)) {
    // FINAL: a repeated try's copies are folded only at the next merge;
    // FINAL folds them as it reads, in the table's order, where DISTINCT
    // held every symbol of every host in memory (the kernel's, 100 hosts:
    // over the 1 GB a query may use in the fleet bench).
    auto ok = Select(
        ch,
        "SELECT hex(identity), uniqExact(host), arraySlice(arraySort(groupArray(hex(host))), 1, 5) "
        "FROM (SELECT identity, "
        "host, groupBitXor(cityHash64(offset, size, name)) AS h, count() AS n FROM " +
            sql.Table("symbols") + " FINAL WHERE identity IN (" + list +
            ") AND (identity, host) GLOBAL IN (SELECT identity, host FROM " +
            sql.Table("shipped_counts") + " WHERE " + sql.WhereAllImages() + " AND " +
            FleetSql::ValidPeriod() + " AND identity IN (" + list +
            ")) GROUP BY identity, host) GROUP BY identity HAVING uniqExact(h, n) > 1 "
            "ORDER BY identity",
        3, [&](const Fields& r) -> Expected<void> {
          if (++disagree > kMaxDisagreeWarnings) return {};
          const std::string id = Unhex(r[0]);
          std::string hosts;
          for (const std::string& h : HexArray(r[2]))
            hosts += (hosts.empty() ? "" : ", ") + Printable(Unhex(h));
          auto named = naming.find(id);
          warnings->push_back("the hosts disagree on the symbols of " + Printable(id) + " (" +
                              std::string(r[1]) + " hosts: " + hosts +
                              (Number(r[1]) > 5 ? ", ..." : "") + "): named from " +
                              (named == naming.end() ? "none" : Printable(named->second)) +
                              "'s, the host with the most samples of it");
          return {};
        });
    if (!ok) return ok.error();
  }
  if (disagree > kMaxDisagreeWarnings)
    warnings->push_back("the hosts disagree on the symbols of " +
                        std::to_string(disagree - kMaxDisagreeWarnings) + " more images");
  return {};
}

// Runs `query(host, list)` for each naming host and each IN list of the
// identities it names.
Expected<void> PerNamingHost(
    const NamingHosts& hosts,
    const std::function<Expected<void>(const std::string&, const std::string&)>& query) {
  std::map<std::string, std::vector<std::string>> by_host;
  for (const auto& [id, host] : hosts) by_host[host].push_back(id);
  for (const auto& [host, ids] : by_host) {
    for (const std::string& list : fleet::SqlInLists(ids, kMaxInListBytes)) {
      if (auto ok = query(host, list); !ok) return ok.error();
    }
  }
  return {};
}

// identity -> (kind, path) from its naming host's images row.
Expected<std::map<std::string, ImageInfo>> ImagesOf(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                                    const std::set<std::string>& identities,
                                                    NamingHosts* naming) {
  std::map<std::string, ImageInfo> out;
  for (const std::string& id : identities) {  // an image the fleet has no row of
    ImageInfo& i = out[id];
    i.identity = id;
    i.path = id;
    i.kind = ImageKind::kUnknown;
  }
  auto hosts = NamingHostsOf(ch, sql, identities);
  if (!hosts) return hosts.error();
  auto ok = PerNamingHost(*hosts, [&](const std::string& host, const std::string& list) {
    return Select(ch,
                  "SELECT hex(identity), any(kind), hex(any(path)) FROM " + sql.Table("images") +
                      " WHERE host = " + SqlString(host) + " AND identity IN (" + list +
                      ") GROUP BY identity",
                  3, [&](const Fields& r) -> Expected<void> {
                    auto it = out.find(Unhex(r[0]));
                    if (it == out.end()) return {};
                    it->second.kind =
                        ParseImageKind(std::string(r[1])).value_or(ImageKind::kUnknown);
                    it->second.path = Unhex(r[2]);
                    return {};
                  });
  });
  if (!ok) return ok.error();
  int64_t next = 1;
  for (auto& [id, info] : out) info.id = next++;
  if (naming) *naming = std::move(*hosts);
  return out;
}

// Sums per key, one event column each, weighed by period (Weights) when
// the windows read differ in period.
class RowSums {
 public:
  RowSums(const Header& h, bool weighed) : h_(h), weights_(h), weighed_(weighed) {}
  // A row's last three fields: event (hex), period, count; the rest: the key.
  Expected<void> Add(const Fields& r) {
    const size_t n = r.size();
    auto e = Column(h_, Unhex(r[n - 3]));
    const uint64_t count = Number(r[n - 1]);
    const uint64_t period = Number(r[n - 2]);
    if (!e || count == 0 || (weighed_ && !FleetPeriodValid(period))) return {};  // refused
    std::vector<long double>& sums = sums_[std::vector<std::string>(r.begin(), r.end() - 3)];
    sums.resize(h_.events.size(), 0);
    sums[*e] += static_cast<long double>(count) * (weighed_ ? weights_.Of(*e, period) : 1.0L);
    return {};
  }
  template <class Name>
  std::vector<Row> Rows(Name name, Counts* counts) const {
    std::vector<Row> out;
    for (const auto& [key, sums] : sums_) {
      Row r;
      name(r, key);
      for (long double s : sums) r.counts.push_back(counts->Of(s));
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  const Header& h_;
  Weights weights_;
  bool weighed_;
  std::map<std::vector<std::string>, std::vector<long double>> sums_;
};

Expected<std::vector<Row>> ImageRows(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                     const Header& h, const ProfOptions& o, Counts* rounding) {
  const std::string from = o.labels.empty() ? sql.Table("shipped_counts") + " WHERE " + sql.Where()
                                            : sql.Table("shipped_processes") + " WHERE " +
                                                  sql.Where() + LabelConditions(o.labels);
  RowSums sums(h, /*weighed=*/o.labels.empty());
  std::set<std::string> ids;
  auto ok = Select(ch,
                   "SELECT hex(identity), hex(event), " +
                       std::string(o.labels.empty() ? "period" : "0") + ", sum(count) FROM " +
                       from + " GROUP BY identity, event" + (o.labels.empty() ? ", period" : ""),
                   4, [&](const Fields& r) -> Expected<void> {
                     ids.insert(Unhex(r[0]));
                     return sums.Add(r);
                   });
  if (!ok) return ok.error();
  auto images = ImagesOf(ch, sql, ids, nullptr);
  if (!images) return images.error();
  return sums.Rows(
      [&](Row& r, const std::vector<std::string>& key) {
        const ImageInfo& info = (*images)[Unhex(key[0])];
        r.name = info.path;
        r.identity = info.identity;
        r.kind = info.kind;
        r.image_id = info.id;
      },
      rounding);
}

// The procedures shipped by each identity's naming host, ascending by
// offset, then name (as ProfileDb::Symbols orders a local database's). An
// (identity, host) with more than kMaxSymbolsPerImage is not read (a
// warning says so): its samples are shown as offset ranges.
Expected<std::map<std::string, std::vector<SymbolInfo>>> SymbolsOf(
    fleet::ClickHouseHttp& ch, const FleetSql& sql, const NamingHosts& naming,
    std::vector<std::string>* warnings) {
  NamingHosts readable;
  auto counted = PerNamingHost(naming, [&](const std::string& host, const std::string& list) {
    return Select(ch,
                  "SELECT hex(identity), uniqExact(offset, size, name) FROM " +
                      sql.Table("symbols") + " WHERE host = " + SqlString(host) +
                      " AND identity IN (" + list + ") GROUP BY identity",
                  2, [&](const Fields& r) -> Expected<void> {
                    const std::string id = Unhex(r[0]);
                    if (Number(r[1]) <= fleet::kMaxSymbolsPerImage) {
                      readable[id] = host;
                    } else {
                      warnings->push_back(Printable(host) + " shipped " + std::string(r[1]) +
                                          " symbols for " + Printable(id) +
                                          ", more than the fleet's limit of " +
                                          std::to_string(fleet::kMaxSymbolsPerImage) +
                                          " per image: not read, samples shown as offset ranges");
                    }
                    return {};
                  });
  });
  if (!counted) return counted.error();
  std::map<std::string, std::vector<SymbolInfo>> out;
  auto ok = PerNamingHost(readable, [&](const std::string& host, const std::string& list) {
    // DISTINCT: a try cut short and repeated sends an identity twice (the
    // Replacing engine folds the copies only at its next merge).
    return Select(ch,
                  "SELECT DISTINCT hex(identity), offset, size, hex(name) FROM " +
                      sql.Table("symbols") + " WHERE host = " + SqlString(host) +
                      " AND identity IN (" + list + ")",
                  4, [&](const Fields& r) -> Expected<void> {
                    out[Unhex(r[0])].push_back({Number(r[1]), Number(r[2]), Unhex(r[3])});
                    return {};
                  });
  });
  if (!ok) return ok.error();
  for (auto& [id, symbols] : out) {
    std::sort(symbols.begin(), symbols.end(), [](const SymbolInfo& a, const SymbolInfo& b) {
      return std::tie(a.offset, a.name) < std::tie(b.offset, b.name);
    });
  }
  return out;
}

Expected<std::vector<Row>> ProcedureRows(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                         const Header& h, const ProfOptions& o,
                                         std::vector<std::string>* warnings, Counts* rounding) {
  std::set<std::string> ids;
  auto per_image = Select(
      ch,
      "SELECT DISTINCT hex(identity) FROM " + sql.Table("shipped_counts") + " WHERE " + sql.Where(),
      1, [&](const Fields& r) -> Expected<void> {
        ids.insert(Unhex(r[0]));
        return {};
      });
  if (!per_image) return per_image.error();
  NamingHosts naming;
  auto images = ImagesOf(ch, sql, ids, &naming);
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
  // image -> offset -> weighed counts per event column: summed by the engine
  const Weights weights(h);
  std::map<std::string, std::map<uint64_t, std::vector<long double>>> sums;
  for (const std::string& list : fleet::SqlInLists(wanted, kMaxInListBytes)) {
    auto ok = Select(ch,
                     "SELECT hex(identity), hex(event), offset, period, sum(count) FROM " +
                         sql.Table("shipped_counts") + " WHERE " + sql.Where() +
                         " AND identity IN (" + list + ") GROUP BY identity, event, offset, period",
                     5, [&](const Fields& r) -> Expected<void> {
                       auto e = Column(h, Unhex(r[1]));
                       if (!e || !FleetPeriodValid(Number(r[3]))) return {};  // refused
                       auto& c = sums[Unhex(r[0])][Number(r[2])];
                       c.resize(h.events.size(), 0);
                       c[*e] +=
                           static_cast<long double>(Number(r[4])) * weights.Of(*e, Number(r[3]));
                       return {};
                     });
    if (!ok) return ok.error();
  }
  NamingHosts naming_wanted;
  for (const std::string& id : wanted)
    if (auto it = naming.find(id); it != naming.end()) naming_wanted.insert(*it);
  auto symbols = SymbolsOf(ch, sql, naming_wanted, warnings);
  if (!symbols) return symbols.error();
  if (auto ok = WarnDisagreeingSymbols(ch, sql, wanted, naming_wanted, warnings); !ok)
    return ok.error();
  std::vector<Row> rows;
  for (auto& [id, by_offset] : sums) {
    CountsByOffset counts;
    for (const auto& [offset, c] : by_offset)
      for (long double x : c) counts[offset].push_back(rounding->Of(x));
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

// The period each host's window sampled each event at, keyed by hex host,
// window id and hex event, read from its count rows: process rows carry
// none. A window whose counts were all at a refused period has none, and
// its process rows are refused as its counts are.
using WindowPeriods = std::map<std::tuple<std::string, uint64_t, std::string>, uint64_t>;
Expected<WindowPeriods> ReadWindowPeriods(fleet::ClickHouseHttp& ch, const FleetSql& sql) {
  WindowPeriods out;
  // min: one period a window and event as lcpid ships them; a host that
  // ships several weighs only its own rows, within 2^-62..2^62
  auto ok = Select(ch,
                   "SELECT hex(host), window_id, hex(event), min(period) FROM " +
                       sql.Table("shipped_counts") + " WHERE " + sql.WhereAllImages() + " AND " +
                       FleetSql::ValidPeriod() + " GROUP BY host, window_id, event",
                   4, [&](const Fields& r) -> Expected<void> {
                     out[{std::string(r[0]), Number(r[1]), std::string(r[2])}] = Number(r[3]);
                     return {};
                   });
  if (!ok) return ok.error();
  return out;
}

// -P (per host, pid and command) and --by (per label value), weighed by
// period as the other views when the windows read differ in period: then
// summed per window by the engine and weighed here by each window's period
// (ReadWindowPeriods); else summed by the engine alone.
Expected<std::vector<Row>> ProcessOrLabelRows(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                              const Header& h, const ProfOptions& o,
                                              Counts* rounding) {
  const std::string by = o.by.empty() ? "''" : LabelColumn(o.by);
  const std::string where = " WHERE " + sql.Where() + LabelConditions(o.labels);
  const bool weighed = std::any_of(h.periods.begin(), h.periods.end(),
                                   [](const std::vector<uint64_t>& p) { return p.size() > 1; });
  WindowPeriods periods;
  if (weighed) {
    auto read = ReadWindowPeriods(ch, sql);
    if (!read) return read.error();
    periods = std::move(*read);
  }
  RowSums sums(h, weighed);
  // Weighed, the engine sums per window: a row starts with its hex host and
  // window id, whose period goes before the count (RowSums reads event,
  // period, count last); the window id leaves the key, the host too for
  // --by. Not weighed, a 0 stands for the period.
  const std::string window = weighed ? "hex(host), window_id, " : "";
  const std::string period = weighed ? "" : "0, ";
  auto add = [&](const Fields& r) -> Expected<void> {
    if (!weighed) return sums.Add(r);
    const size_t n = r.size();
    auto p = periods.find({std::string(r[0]), Number(r[1]), std::string(r[n - 2])});
    const std::string of = std::to_string(p == periods.end() ? 0 : p->second);  // 0: refused
    Fields keyed = {r[0]};
    keyed.insert(keyed.end(), r.begin() + 2, r.end() - 1);
    if (o.view == View::kLabels) keyed.erase(keyed.begin());
    keyed.push_back(of);
    keyed.push_back(r[n - 1]);
    return sums.Add(keyed);
  };
  if (o.view == View::kLabels) {
    auto ok = Select(ch,
                     "SELECT " + window + "hex(" + by + "), hex(event), " + period +
                         "sum(count) FROM " + sql.Table("shipped_processes") + where +
                         " GROUP BY " + (weighed ? "host, window_id, " : "") + by + ", event",
                     4 + (weighed ? 1 : 0), add);
    if (!ok) return ok.error();
    return sums.Rows(
        [&](Row& r, const std::vector<std::string>& key) {
          r.label = Unhex(key[0]);
          r.name = r.label.empty() ? "[no " + o.by + "]" : r.label;
        },
        rounding);
  }
  auto ok = Select(ch,
                   "SELECT " + (weighed ? window : "hex(host), ") + "pid, hex(comm), hex(" + by +
                       "), hex(event), " + period + "sum(count) FROM " +
                       sql.Table("shipped_processes") + where + " GROUP BY host, " +
                       (weighed ? "window_id, " : "") + "pid, comm, " + by + ", event",
                   7, add);
  if (!ok) return ok.error();
  return sums.Rows(
      [&](Row& r, const std::vector<std::string>& key) {
        const std::string comm = Unhex(key[2]);
        r.pid = static_cast<uint32_t>(Number(key[1]));
        // A pid names a process on its host only.
        r.name =
            (r.pid == kShippedRolledUpPid ? comm + " [rolled up]" : comm) + " @" + Unhex(key[0]);
        if (r.pid == kShippedRolledUpPid) r.pid = kRolledUpPid;
        r.label = Unhex(key[3]);
      },
      rounding);
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
  std::vector<std::string> warnings;
  auto header = FleetHeader(ch, sql, f, options, &warnings);
  if (!header) return header.error();
  auto started = StartProfile(options, std::move(*header));
  if (!started) return started.error();
  Profile& p = *started;
  p.warnings.insert(p.warnings.end(), warnings.begin(), warnings.end());
  Counts rounding(&p.warnings);
  Expected<std::vector<Row>> rows = std::vector<Row>{};
  switch (options.view) {
    case View::kImages:
      rows = ImageRows(ch, sql, p.header, options, &rounding);
      break;
    case View::kProcedures:
      rows = ProcedureRows(ch, sql, p.header, options, &p.warnings, &rounding);
      break;
    case View::kProcesses:
    case View::kLabels:
      rows = ProcessOrLabelRows(ch, sql, p.header, options, &rounding);
      break;
  }
  if (!rows) return rows.error();
  p.rows = std::move(*rows);
  if (!p.header.events.empty()) SortRows(&p.rows, p.sort_column);
  Trim(&p, options.keep_percent, options.top);
  return started;
}

}  // namespace lcpi::report
