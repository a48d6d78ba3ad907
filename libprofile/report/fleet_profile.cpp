// fleet_profile.cpp - lcpiprof's report over the fleet's ClickHouse tables
// (fleet_profile.h): the sums are GROUP BYs in the engine; the rows are
// made, named, sorted and trimmed as a local report's (profile_rows.h).
#include "libprofile/report/fleet_profile.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "libprofile/base/saturating.h"
#include "libprofile/base/text.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/fleet/clickhouse_text.h"
#include "libprofile/fleet/fleet_schema.h"
#include "libprofile/fleet/tsv_answer.h"
#include "libprofile/image/image_id.h"
#include "libprofile/report/fleet_period_weights.h"
#include "libprofile/report/fleet_window_facts.h"
#include "libprofile/report/image_filter.h"
#include "libprofile/report/pprof_profile.h"
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

// How the engine sums counts: as Float64, exact while a sum stays below
// 2^53 (every honest fleet's), and never wrapped. A UInt64 sum(count)
// wraps: two hostile rows of 2^63 added to a procedure's samples give the
// honest count back, with nothing to say they were there.
const std::string kCountSum = "sum(toFloat64(count))";

// A Float64 sum (kCountSum's) read back: 0 for what no count sums to
// (negative, NaN).
long double Samples(std::string_view text) {
  const long double n = std::strtold(std::string(text).c_str(), nullptr);
  return n > 0 ? n : 0;
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
      rows_where_ +=
          " AND (host, window_id, attempt) GLOBAL IN (SELECT host, window_id, "
          "attempt FROM " +
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
// Per committed window (host, window id, attempt) and event: the period
// it was sampled at (p), what was sampled (used_as) and its start
// (started_at), from its count rows. A window lcpid shipped has one period
// an event; one with several (a host may insert any row) is taken at the
// period of most of its samples, so a few forged rows move nothing. Rows
// of a refused period or of no samples do not vote. The header's
// reference and each process row's weight (ProcessesWithPeriods) are read
// from this one definition.
std::string WindowPeriods(const FleetSql& sql) {
  return "SELECT host, window_id, attempt, event, argMax(period, n) AS p, argMax(used_0, n) AS "
         "used_as, max(started_0) AS started_at FROM (SELECT host, window_id, attempt, event, "
         "period, any(used) AS used_0, max(started) AS started_0, " +
         kCountSum + " AS n FROM " + sql.Table("shipped_counts") + " WHERE " +
         sql.WhereAllImages() + " AND " + FleetSql::ValidPeriod() +
         " AND count > 0 GROUP BY host, window_id, attempt, event, period) GROUP BY host, "
         "window_id, attempt, event";
}

// The selected windows' statistics and costs (fleet_window_facts.h) into
// the header: the names it reads, each summed over the windows' rows of a
// value above 0, as a double (any host may ship any value), so that no
// sum wraps.
Expected<void> ReadWindowFacts(fleet::ClickHouseHttp& ch, const FleetSql& sql, Header& h) {
  std::string names;
  for (const std::string& n : FactNamesRead()) names += (names.empty() ? "" : ", ") + SqlString(n);
  std::map<std::string, double> sums;
  auto read = Select(ch,
                     "SELECT hex(name), sum(if(value > 0, toFloat64(value), 0)) FROM " +
                         sql.Table("shipped_window_facts") + " WHERE " + sql.WhereAllImages() +
                         " AND name IN (" + names + ") GROUP BY name",
                     2, [&](const Fields& r) -> Expected<void> {
                       sums[Unhex(r[0])] = static_cast<double>(std::min<long double>(
                           Samples(r[1]), std::numeric_limits<double>::max()));
                       return {};
                     });
  if (!read) return read.error();
  FactSumsInto(sums, h);
  return {};
}

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
  h.fleet_windows = Number(w[0]);
  if (auto facts = ReadWindowFacts(ch, sql, h); !facts) {
    // a fleet database whose Distributed tables predate window_facts, a
    // shard no current lcpi-ship has passed over yet, or the server's error
    warnings->push_back("the windows' statistics and costs are not read (" +
                        facts.error().message() +
                        "; where the table is missing: a pass of a current lcpi-ship on every "
                        "shard makes it, and lcpi-ship --create-distributed the fleet's): the "
                        "header's unknown, lost and cost lines are not measured");
  }

  // Per event: each host's newest window of a valid period (what it
  // sampled, the period) and the samples each host shipped at a refused
  // period; the reference (the header's period) is chosen from the hosts'
  // (ReferenceHost), then the samples per valid period are weighed to it.
  struct Fact {
    EventInfo info;
    std::vector<HostPeriod> newest;              // per host
    std::vector<std::string> used;               // per host, as newest
    std::map<std::string, long double> refused;  // host -> samples at a refused period
    std::map<uint64_t, long double> by_period;   // valid period -> samples
  };
  std::map<std::string, Fact> by_name;
  const std::string valid = FleetSql::ValidPeriod();
  // Each host's newest window (by start, then id and attempt, as a local
  // report takes the newest epoch; starts are whole seconds, and two
  // windows of one second made argMax pick either) at its period
  // (WindowPeriods).
  const std::string newest = "(started_at, window_id, attempt)";
  auto events = Select(
      ch,
      "SELECT hex(event), hex(host), argMax(p, " + newest +
          "), toUInt32(max(started_at)), hex(argMax(used_as, " + newest + ")) FROM (" +
          WindowPeriods(sql) + ") GROUP BY event, host",
      5, [&](const Fields& r) -> Expected<void> {
        Fact& fact = by_name[Unhex(r[0])];
        fact.info.name = Unhex(r[0]);
        fact.newest.push_back({Unhex(r[1]), static_cast<int64_t>(Number(r[3])), Number(r[2])});
        fact.used.push_back(Unhex(r[4]));
        return {};
      });
  if (!events) return events.error();
  auto refused =
      Select(ch,
             "SELECT hex(event), hex(host), " + kCountSum + " FROM " + sql.Table("shipped_counts") +
                 " WHERE " + sql.WhereAllImages() + " AND NOT " + valid + " GROUP BY event, host",
             3, [&](const Fields& r) -> Expected<void> {
               Fact& fact = by_name[Unhex(r[0])];
               fact.info.name = Unhex(r[0]);
               if (const long double n = Samples(r[2]); n > 0) fact.refused[Unhex(r[1])] = n;
               return {};
             });
  if (!refused) return refused.error();
  for (auto& [name, fact] : by_name) {
    if (auto ref = ReferenceHost(fact.newest)) {
      fact.info.period = fact.newest[*ref].period;
      fact.info.used = fact.used[*ref];
    }
  }
  auto periods = Select(ch,
                        "SELECT hex(event), period, " + kCountSum + " FROM " +
                            sql.Table("shipped_counts") + " WHERE " + sql.WhereAllImages() +
                            " AND " + valid + " AND count > 0 GROUP BY event, period",
                        3, [&](const Fields& r) -> Expected<void> {
                          auto it = by_name.find(Unhex(r[0]));
                          if (it != by_name.end() && FleetPeriodValid(Number(r[1])))
                            it->second.by_period[Number(r[1])] += Samples(r[2]);
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
      long double samples = 0;
      std::string hosts;
      for (const auto& [host, n] : it->second.refused) {
        samples += n;
        if (hosts.size() < 200) hosts += (hosts.empty() ? "" : ", ") + Printable(host);
      }
      const uint64_t count = Counts(warnings).Of(samples);
      warnings->push_back(std::to_string(count) + " samples of " + Printable(name) +
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
      total += n * weights.Of(e, period);
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
    auto ok =
        Select(ch,
               "SELECT hex(identity), hex(host) FROM (SELECT identity, host, " + kCountSum +
                   " AS n FROM " + sql.Table("shipped_counts") + " WHERE " + sql.WhereAllImages() +
                   " AND " + FleetSql::ValidPeriod() + " AND identity IN (" + list +
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

// Sums per key, one event column each, weighed by period (Weights: 1
// where the windows read have one period); a row at a refused period is
// not summed.
class RowSums {
 public:
  explicit RowSums(const Header& h) : h_(h), weights_(h) {}
  // A row's last three fields: event (hex), period, count; the rest: the key.
  Expected<void> Add(const Fields& r) {
    const size_t n = r.size();
    auto e = Column(h_, Unhex(r[n - 3]));
    const long double count = Samples(r[n - 1]);
    const uint64_t period = Number(r[n - 2]);
    if (!e || count == 0 || !FleetPeriodValid(period)) return {};  // refused
    std::vector<long double>& sums = sums_[std::vector<std::string>(r.begin(), r.end() - 3)];
    sums.resize(h_.events.size(), 0);
    sums[*e] += count * weights_.Of(*e, period);
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
  std::map<std::vector<std::string>, std::vector<long double>> sums_;
};

// Process rows carry no period: joined here to the one their window's
// count rows were sampled at (WindowPeriods: per host, window, attempt and
// event; p), so that -P, --by and --label are weighed as images and -p,
// and summed per period by the engine. A window and event whose counts
// have no valid period get p = 0, which RowSums refuses: its process rows
// are not counted, as its counts are not.
std::string ProcessesWithPeriods(const FleetSql& sql) {
  return sql.Table("shipped_processes") +
         " GLOBAL ANY LEFT JOIN (SELECT host, window_id, attempt, event, p FROM (" +
         WindowPeriods(sql) + ")) USING (host, window_id, attempt, event)";
}

// Process rows' samples of the selected events a report leaves out
// (ProcessesWithPeriods): one warning with their sum.
class RefusedProcessSamples {
 public:
  explicit RefusedProcessSamples(const Header& h) : h_(h) {}
  // A row as RowSums::Add reads it.
  void Add(const Fields& r) {
    const size_t n = r.size();
    if (!Column(h_, Unhex(r[n - 3])) || FleetPeriodValid(Number(r[n - 2]))) return;
    samples_ += Samples(r[n - 1]);
  }
  void Warn(std::vector<std::string>* warnings) const {
    if (samples_ > 0)
      warnings->push_back(std::to_string(Counts(warnings).Of(samples_)) +
                          " samples of process rows in windows whose count rows have no valid "
                          "period: not counted");
  }

 private:
  const Header& h_;
  long double samples_ = 0;
};

// The images view; with --label, of the labelled processes' rows.
Expected<std::vector<Row>> ImageRows(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                     const Header& h, const ProfOptions& o, Counts* rounding,
                                     std::vector<std::string>* warnings) {
  const bool labelled = !o.labels.empty();
  const std::string from =
      labelled ? ProcessesWithPeriods(sql) + " WHERE " + sql.Where() + LabelConditions(o.labels)
               : sql.Table("shipped_counts") + " WHERE " + sql.Where();
  const std::string period = labelled ? "p" : "period";
  RowSums sums(h);
  RefusedProcessSamples refused(h);
  std::set<std::string> ids;
  auto ok = Select(ch,
                   "SELECT hex(identity), hex(event), " + period + ", " + kCountSum + " FROM " +
                       from + " GROUP BY identity, event, " + period,
                   4, [&](const Fields& r) -> Expected<void> {
                     ids.insert(Unhex(r[0]));
                     if (labelled) refused.Add(r);
                     return sums.Add(r);
                   });
  if (!ok) return ok.error();
  refused.Warn(warnings);
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
    // FINAL: a try cut short and repeated sends an identity twice (the
    // Replacing engine folds the copies only at its next merge), and the
    // disagreement check reads them so too (WarnDisagreeingSymbols).
    return Select(ch,
                  "SELECT hex(identity), offset, size, hex(name) FROM " + sql.Table("symbols") +
                      " FINAL WHERE host = " + SqlString(host) + " AND identity IN (" + list + ")",
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

// One image's sampled offsets over the selection, weighed and rounded,
// and its symbols (its naming host's).
struct ImageOffsets {
  ImageInfo info;
  CountsByOffset counts;
  std::unique_ptr<ImageSymbolizer> sym;
};

// The sampled offsets of every image `filters` choose (-i; kNotFound
// when one matches no image sampled), summed per image, event, offset and
// period by the engine: lcpiprof -p's and pprof's samples.
Expected<std::vector<ImageOffsets>> OffsetsOf(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                              const Header& h,
                                              const std::vector<std::string>& filters,
                                              std::vector<std::string>* warnings,
                                              Counts* rounding) {
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
  // As a local report: an image the fleet knows but did not sample in the
  // selection is no error, only no rows (lcpidiff's other side may have
  // it); one it has never heard of is.
  for (const std::string& f : filters) {
    if (std::any_of(images->begin(), images->end(),
                    [&](const auto& i) { return ImageMatches(i.second, f); }))
      continue;
    uint64_t known = 0;
    auto ok =
        Select(ch,
               "SELECT count() FROM " + sql.Table("images") + " WHERE identity = " + SqlString(f) +
                   " OR position(path, " + SqlString(f) + ") > 0",
               1, [&](const Fields& r) -> Expected<void> {
                 known = Number(r[0]);
                 return {};
               });
    if (!ok) return ok.error();
    if (known == 0) return Error(Errc::kNotFound, "no such image in the fleet: " + f);
  }
  std::vector<std::string> wanted;
  for (const auto& [id, info] : *images)
    if (ImageChosen(info, filters)) wanted.push_back(id);
  // image -> offset -> weighed counts per event column: summed by the engine
  const Weights weights(h);
  std::map<std::string, std::map<uint64_t, std::vector<long double>>> sums;
  for (const std::string& list : fleet::SqlInLists(wanted, kMaxInListBytes)) {
    auto ok = Select(ch,
                     "SELECT hex(identity), hex(event), offset, period, " + kCountSum + " FROM " +
                         sql.Table("shipped_counts") + " WHERE " + sql.Where() +
                         " AND identity IN (" + list + ") GROUP BY identity, event, offset, period",
                     5, [&](const Fields& r) -> Expected<void> {
                       auto e = Column(h, Unhex(r[1]));
                       if (!e || !FleetPeriodValid(Number(r[3]))) return {};  // refused
                       auto& c = sums[Unhex(r[0])][Number(r[2])];
                       c.resize(h.events.size(), 0);
                       c[*e] += Samples(r[4]) * weights.Of(*e, Number(r[3]));
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
  std::vector<ImageOffsets> out;
  for (auto& [id, by_offset] : sums) {
    ImageOffsets& image = out.emplace_back();
    for (const auto& [offset, c] : by_offset)
      for (long double x : c) image.counts[offset].push_back(rounding->Of(x));
    image.info = (*images)[id];
    const ImageInfo& info = image.info;
    auto s = symbols->find(id);
    std::vector<SymbolInfo> shipped;
    if (s != symbols->end()) shipped = std::move(s->second);  // held once
    if (shipped.empty() && info.kind != ImageKind::kUnknown)
      warnings->push_back("no symbols shipped for " + info.path + " (" + info.identity +
                          "): samples shown as offset ranges");
    // The file's symbols (sized, as ElfImage's) unless lcpid stored them.
    const bool elf = !HasStoredSymbols(info.kind) && info.path.rfind("[", 0) != 0;
    image.sym =
        std::make_unique<ImageSymbolizer>(ImageSymbolizer::FromShipped(std::move(shipped), elf));
  }
  return out;
}

Expected<std::vector<Row>> ProcedureRows(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                         const Header& h, const ProfOptions& o,
                                         std::vector<std::string>* warnings, Counts* rounding) {
  auto images = OffsetsOf(ch, sql, h, o.images, warnings, rounding);
  if (!images) return images.error();
  std::vector<Row> rows;
  for (const ImageOffsets& i : *images)
    AddProcedureRows(i.counts, *i.sym, i.info, h.events.size(), &rows);
  return rows;
}

// -P (per host, pid and command) and --by (per label value), weighed by
// period (ProcessesWithPeriods).
Expected<std::vector<Row>> ProcessOrLabelRows(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                              const Header& h, const ProfOptions& o,
                                              Counts* rounding,
                                              std::vector<std::string>* warnings) {
  const std::string by = o.by.empty() ? "''" : LabelColumn(o.by);
  const std::string from =
      ProcessesWithPeriods(sql) + " WHERE " + sql.Where() + LabelConditions(o.labels);
  RowSums sums(h);
  RefusedProcessSamples refused(h);
  auto add = [&](const Fields& r) {
    refused.Add(r);
    return sums.Add(r);
  };
  if (o.view == View::kLabels) {
    auto ok = Select(ch,
                     "SELECT hex(" + by + "), hex(event), p, " + kCountSum + " FROM " + from +
                         " GROUP BY " + by + ", event, p",
                     4, add);
    if (!ok) return ok.error();
    refused.Warn(warnings);
    return sums.Rows(
        [&](Row& r, const std::vector<std::string>& key) {
          r.label = Unhex(key[0]);
          r.name = r.label.empty() ? "[no " + o.by + "]" : r.label;
        },
        rounding);
  }
  auto ok =
      Select(ch,
             "SELECT hex(host), pid, hex(comm), hex(" + by + "), hex(event), p, " + kCountSum +
                 " " + "FROM " + from + " GROUP BY host, pid, comm, " + by + ", event, p",
             7, add);
  if (!ok) return ok.error();
  refused.Warn(warnings);
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

// What every fleet report checks of its command line, then its header.
Expected<Header> StartFleetReport(fleet::ClickHouseHttp& ch, const FleetSql& sql,
                                  const FleetSelection& f, const ProfOptions& options,
                                  std::vector<std::string>* warnings) {
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
  return FleetHeader(ch, sql, f, options, warnings);
}

}  // namespace

Expected<Profile> BuildFleetProfile(fleet::ClickHouseHttp& ch, const FleetSelection& f,
                                    const ProfOptions& options) {
  const FleetSql sql(f, options.range);
  std::vector<std::string> warnings;
  auto header = StartFleetReport(ch, sql, f, options, &warnings);
  if (!header) return header.error();
  auto started = StartProfile(options, std::move(*header));
  if (!started) return started.error();
  Profile& p = *started;
  p.warnings.insert(p.warnings.end(), warnings.begin(), warnings.end());
  Counts rounding(&p.warnings);
  Expected<std::vector<Row>> rows = std::vector<Row>{};
  switch (options.view) {
    case View::kImages:
      rows = ImageRows(ch, sql, p.header, options, &rounding, &p.warnings);
      break;
    case View::kProcedures:
      rows = ProcedureRows(ch, sql, p.header, options, &p.warnings, &rounding);
      break;
    case View::kProcesses:
    case View::kLabels:
      rows = ProcessOrLabelRows(ch, sql, p.header, options, &rounding, &p.warnings);
      break;
  }
  if (!rows) return rows.error();
  p.rows = std::move(*rows);
  if (!p.header.events.empty()) SortRows(&p.rows, p.sort_column);
  Trim(&p, options.keep_percent, options.top);
  return started;
}

Expected<PprofResult> BuildFleetPprof(fleet::ClickHouseHttp& ch, const FleetSelection& f,
                                      const ProfOptions& options) {
  ProfOptions o = options;
  o.view = View::kProcedures;  // per offset, as -p
  const FleetSql sql(f, o.range);
  PprofResult result;
  auto h = StartFleetReport(ch, sql, f, o, &result.warnings);
  if (!h) return h.error();
  Counts rounding(&result.warnings);
  auto images = OffsetsOf(ch, sql, *h, o.images, &result.warnings, &rounding);
  if (!images) return images.error();
  std::vector<ImageInfo> order;
  std::map<int64_t, uint64_t> first_event;  // image id -> samples of the default sample type
  std::map<int64_t, ImageOffsets*> by_id;
  for (ImageOffsets& i : *images) {
    order.push_back(i.info);
    by_id[i.info.id] = &i;
    uint64_t& first = first_event[i.info.id];
    for (const auto& [offset, counts] : i.counts)
      if (!counts.empty()) first = SaturatingAdd(first, counts.front());
  }
  SortHottestFirst(&order, first_event);
  PprofBuilder b(*h, /*with_stacks=*/false);  // stacks are not shipped
  for (const ImageInfo& info : order) {
    ImageOffsets& i = *by_id[info.id];
    b.AddImage(i.info, i.counts, std::move(i.sym));
  }
  b.MoveInto(&result);
  return result;
}

Expected<Diff> BuildFleetDiff(fleet::ClickHouseHttp& ch, const FleetSelection& fleet,
                              const DiffOptions& options) {
  return BuildDiffWith(
      options, [&](const ProfOptions& side, bool) { return BuildFleetProfile(ch, fleet, side); });
}

}  // namespace lcpi::report
