// event_facts_test.cpp - what a report states about how each event was
// sampled. Counts of an event the PMU multiplexed (time running < time
// enabled) are scaled by enabled/running in every report, and the report
// says so (a warning, the text header, JSON's events); an event that ran all
// the time, or whose times are not known, is shown as stored. An event
// sampled with precise_ip > 0 says so; epochs of different precision summed
// into one report are warned about (their skid differs). HTML states the
// scale in its events table, pprof in its comments; CSV is rows only (the
// warning on stderr says it).
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "libprofile/report/html_page.h"
#include "libprofile/report/pprof_profile.h"
#include "libprofile/report/report.h"
#include "libprofile/store/profile_db.h"

namespace {

using namespace lcpi;
using namespace lcpi::report;

template <class T>
T Ok(Expected<T> e) {
  INFO((e ? "" : e.error().ToString()));
  REQUIRE(e.has_value());
  return std::move(*e);
}

struct Db {
  std::filesystem::path dir;
  std::unique_ptr<ProfileDb> db;
  Db() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "lcpi-multiplex-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    auto d = ProfileDb::Open((dir / "p.db").string(), DbMode::kReadWrite);
    REQUIRE(d.has_value());
    db = std::move(*d);
  }
  ~Db() {
    db.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  // cycles: 1000 samples in prog, 500 in libc, with the times given;
  // imiss: 300 in prog, never multiplexed.
  void Merge(int64_t epoch, uint64_t enabled, uint64_t running, int precise = 0) {
    MergeBatch b;
    b.epoch = epoch;
    b.images.push_back({"build-id:aa", "/bin/prog", ImageKind::kUser});
    b.images.push_back({"build-id:bb", "/lib/libc.so.6", ImageKind::kUser});
    b.events.push_back({"cycles", "cycles", 100000, enabled, running, precise});
    b.events.push_back({"imiss", "imiss", 5000, 4000, 4000, 0});
    b.counts.push_back({0, 0, 16, 1000});
    b.counts.push_back({1, 0, 32, 500});
    b.counts.push_back({0, 1, 16, 300});
    b.processes.push_back({7, "prog", 0, 0, 1000});
    auto ok = db->Merge(b);
    INFO((ok ? "" : ok.error().ToString()));
    REQUIRE(ok);
  }
};

Profile Build(ProfileDb& db, View view = View::kImages, const std::string& epoch = "") {
  ProfOptions o;
  o.view = view;
  o.epoch = epoch;
  auto p = BuildProfile(db, o);
  INFO((p ? "" : p.error().ToString()));
  REQUIRE(p.has_value());
  return std::move(*p);
}

// The <table class="events"> of an HTML page, without its caption and head.
std::string EventsTable(const std::string& html) {
  const size_t body = html.find("<tbody>", html.find("<table class=\"events\">"));
  if (body == std::string::npos) return "";
  return html.substr(body, html.find("</tbody>", body) - body);
}

const std::string kMultiplexedEvents =
    "<tbody>\n"
    "<tr><th scope=\"row\">cycles</th><td>cycles</td><td class=\"n\">100000</td>"
    "<td class=\"n\">2400</td><td>multiplexed: scaled by 1.60, running 62.5% of enabled</td>"
    "</tr>\n"
    "<tr><th scope=\"row\">imiss</th><td>imiss</td><td class=\"n\">5000</td>"
    "<td class=\"n\">300</td><td></td></tr>\n";

}  // namespace

TEST_CASE("a multiplexed event's counts are scaled by enabled/running, and said so", "[report]") {
  Db d;
  d.Merge(Ok(d.db->CurrentEpoch()), 1600, 1000);  // ran 62.5% of the time
  Profile p = Build(*d.db);
  REQUIRE(p.header.events.size() == 2);
  CHECK(p.header.scale[0] == Approx(1.6));
  CHECK(p.header.scale[1] == 1.0);
  CHECK(p.header.totals == std::vector<uint64_t>{2400, 300});
  REQUIRE(p.rows.size() == 2);
  CHECK(p.rows[0].name == "/bin/prog");
  CHECK(p.rows[0].counts == std::vector<uint64_t>{1600, 300});
  CHECK(p.rows[1].counts == std::vector<uint64_t>{800, 0});
  REQUIRE(p.warnings.size() == 1);
  CHECK(p.warnings[0] ==
        "event cycles multiplexed: counts scaled by 1.60 (running 62.5% of enabled)");

  RenderOptions ro;
  ro.width = 200;
  const std::string text = RenderProfile(p, ro);
  CHECK(text.find("cycles every 100000: 2400 samples (multiplexed: scaled by 1.60, running 62.5% "
                  "of enabled)") != std::string::npos);
  CHECK(text.find("imiss every 5000: 300 samples\n") != std::string::npos);
  ro.format = Format::kJson;
  const std::string json = RenderProfile(p, ro);
  CHECK(json.find("\"samples\": 2400, \"scale\": 1.6000, \"running_percent\": 62.5000") !=
        std::string::npos);
  CHECK(json.find("event cycles multiplexed") != std::string::npos);  // the warnings

  // HTML: the events table says it, per event, as the text header does (the
  // warnings section says it too, but a reader of the numbers reads that table).
  ro.format = Format::kHtml;
  CHECK(EventsTable(RenderProfile(p, ro)) == kMultiplexedEvents);
  HtmlOptions page_options;
  auto page = BuildHtmlReport(*d.db, page_options);
  REQUIRE(page);
  CHECK(EventsTable(RenderHtmlReport(*page, ro)) == kMultiplexedEvents);

  // CSV: rows only, scaled; no note among them (programs read the rows).
  ro.format = Format::kCsv;
  const std::string csv = RenderProfile(p, ro);
  CHECK(csv.find("/bin/prog,build-id:aa,user,1600,") != std::string::npos);
  CHECK(csv.find("multiplexed") == std::string::npos);

  // pprof: the values are scaled, the comments say so, and so does the
  // warning on stderr (as lcpiprof -p's).
  auto pprof = BuildPprof(*d.db, PprofOptions{});
  REQUIRE(pprof);
  int64_t cycles_samples = 0;
  for (const pprof::Sample& s : pprof->profile.samples) cycles_samples += s.values[0];
  CHECK(cycles_samples == 2400);
  const std::string note =
      "event cycles multiplexed: counts scaled by 1.60 (running 62.5% of enabled)";
  const std::vector<std::string>& comments = pprof->profile.comments;
  CHECK(std::count(comments.begin(), comments.end(), note) == 1);
  CHECK(std::count(pprof->warnings.begin(), pprof->warnings.end(), note) == 1);

  // The processes and procedures views read other tables: scaled too.
  Profile procs = Build(*d.db, View::kProcesses);
  REQUIRE(procs.rows.size() == 1);
  CHECK(procs.rows[0].counts == std::vector<uint64_t>{1600, 0});
  Profile syms = Build(*d.db, View::kProcedures);
  uint64_t cycles = 0;
  for (const Row& r : syms.rows) cycles += r.counts[0];
  CHECK(cycles == 2400);
}

TEST_CASE("the scale of several epochs is their summed enabled over summed running", "[report]") {
  Db d;
  const int64_t a = Ok(d.db->CurrentEpoch());
  d.Merge(a, 1000, 1000);
  const int64_t b = Ok(d.db->NewEpoch(std::nullopt, EpochKind::kWindow));
  d.Merge(b, 1000, 250);
  Profile p = Build(*d.db, View::kImages, "all");
  CHECK(p.header.time_enabled[0] == 2000);
  CHECK(p.header.time_running[0] == 1250);
  CHECK(p.header.scale[0] == Approx(1.6));
  CHECK(p.header.totals[0] == 4800);
  // The first window alone ran all the time: nothing scaled, nothing said.
  Profile first = Build(*d.db, View::kImages, std::to_string(a));
  CHECK(first.header.scale[0] == 1.0);
  CHECK(first.header.totals[0] == 1500);
  CHECK(first.warnings.empty());
}

TEST_CASE("unknown or full-time times leave counts as stored", "[report]") {
  CHECK(MultiplexScale(0, 0) == 1.0);        // not known (schema < 4, or not reported)
  CHECK(MultiplexScale(1000, 1000) == 1.0);  // never multiplexed
  CHECK(MultiplexScale(1000, 0) == 1.0);     // never ran: no samples to scale
  CHECK(MultiplexScale(3000, 1000) == Approx(3.0));
  Db d;
  d.Merge(Ok(d.db->CurrentEpoch()), 0, 0);
  Profile p = Build(*d.db);
  CHECK(p.header.totals == std::vector<uint64_t>{1500, 300});
  CHECK(p.warnings.empty());
  RenderOptions ro;
  ro.format = Format::kJson;
  CHECK(RenderProfile(p, ro).find("scale") == std::string::npos);
}

TEST_CASE("a scaled count beyond 2^64 is clamped, not undefined", "[report]") {
  Header h;
  h.scale = {3.0};
  CHECK(ScaleCount(h, 0, 1000) == 3000);
  CHECK(ScaleCount(h, 0, uint64_t{1} << 62) == UINT64_MAX - (uint64_t{1} << 62) + 1);
  CHECK(ScaleCount(h, 0, uint64_t{1} << 63) == UINT64_MAX);
  CHECK(ScaleCount(h, 0, UINT64_MAX) == UINT64_MAX);
}

TEST_CASE("an event sampled with precise_ip says so in the header", "[report]") {
  Db d;
  d.Merge(Ok(d.db->CurrentEpoch()), 1000, 1000, 2);
  Profile p = Build(*d.db);
  REQUIRE(p.header.precise.size() == 2);
  CHECK(p.header.precise[0] == 2);
  CHECK(p.header.precise[1] == 0);
  CHECK(p.warnings.empty());
  RenderOptions ro;
  ro.width = 200;
  const std::string text = RenderProfile(p, ro);
  CHECK(text.find("cycles every 100000, precise_ip 2: 1500 samples") != std::string::npos);
  CHECK(text.find("imiss every 5000: 300 samples\n") != std::string::npos);  // 0: not said
  ro.format = Format::kJson;
  const std::string json = RenderProfile(p, ro);
  CHECK(json.find("\"period\": 100000, \"precise\": 2, \"samples\": 1500") != std::string::npos);
  CHECK(json.find("\"period\": 5000, \"samples\": 300") != std::string::npos);
  ro.format = Format::kHtml;
  const std::string html = EventsTable(RenderProfile(p, ro));
  CHECK(html.find("<td class=\"n\">1500</td><td>precise_ip 2</td></tr>") != std::string::npos);
  CHECK(html.find("<td class=\"n\">300</td><td></td></tr>") != std::string::npos);
}

TEST_CASE("epochs sampled at different precise_ip, summed, are warned about", "[report]") {
  Db d;
  d.Merge(Ok(d.db->CurrentEpoch()), 1000, 1000, 0);
  d.Merge(Ok(d.db->NewEpoch(std::nullopt, EpochKind::kWindow)), 1000, 1000, 3);
  Profile newest = Build(*d.db);
  CHECK(newest.header.precise[0] == 3);
  CHECK(newest.warnings.empty());
  Profile all = Build(*d.db, View::kImages, "all");
  CHECK(all.header.precise[0] == 3);  // the newest epoch's, as its period
  REQUIRE(all.warnings.size() == 1);
  CHECK(all.warnings[0] ==
        "event cycles: the epochs read were sampled at precise_ip 0 and 3; their skid differs");
}

TEST_CASE("samples lost to perf's throttling are estimated in every report", "[report]") {
  Db d;
  const int64_t epoch = Ok(d.db->CurrentEpoch());
  d.Merge(epoch, 1000, 1000);
  MergeBatch b;  // the daemon's statistics of the window: 1800 counted
  b.epoch = epoch;
  b.stats = {{"attributed", 1800}, {"throttle_events", 40}, {"throttled_lost_estimate", 1200}};
  REQUIRE(d.db->Merge(b));
  Profile p = Build(*d.db);
  CHECK(p.header.throttled_percent == Approx(40.0));  // 1200 of 1800 + 1200
  const std::string note =
      "perf throttled sampling 40 times: about 1200 samples (40.0% of those asked for) were "
      "never taken; the counts are of the samples taken (an estimate of lcpi.ko's)";
  CHECK(std::count(p.warnings.begin(), p.warnings.end(), note) == 1);
  CHECK(p.header.totals[0] == 1500);  // the counts are what was taken, not scaled

  RenderOptions ro;
  ro.width = 200;
  CHECK(RenderProfile(p, ro).find("; throttled: about 40.00% never taken (estimated)\n") !=
        std::string::npos);
  ro.format = Format::kJson;
  const std::string json = RenderProfile(p, ro);
  CHECK(json.find("\"throttled_lost_estimate\": 1200") != std::string::npos);  // the stats
  CHECK(json.find(note) != std::string::npos);                                 // the warnings
  ro.format = Format::kHtml;
  CHECK(RenderProfile(p, ro).find("<dt>Throttled</dt><dd>about 40.00 % of the samples asked "
                                  "for were never taken") != std::string::npos);
  auto pprof = BuildPprof(*d.db, PprofOptions{});
  REQUIRE(pprof);
  const std::vector<std::string>& comments = pprof->profile.comments;
  CHECK(std::count(comments.begin(), comments.end(), "throttled 40.00% (estimated, never taken)") ==
        1);
  CHECK(std::count(comments.begin(), comments.end(), note) == 1);

  // A crafted database's figures (negative, or summing past int64) give a
  // share in [0, 100], not an overflowed one.
  Db crafted;
  crafted.Merge(Ok(crafted.db->CurrentEpoch()), 1000, 1000);
  MergeBatch forged;
  forged.epoch = Ok(crafted.db->CurrentEpoch());
  forged.stats = {{"attributed", -1000},
                  {"lost", INT64_MAX},
                  {"throttle_events", 1},
                  {"throttled_lost_estimate", INT64_MAX}};
  REQUIRE(crafted.db->Merge(forged));
  Profile c = Build(*crafted.db);
  CHECK(c.header.throttled_percent == Approx(50.0));
  CHECK(c.header.lost_percent == Approx(100.0));

  // The perf source counts throttles but estimates nothing: said so.
  Db perf;
  perf.Merge(Ok(perf.db->CurrentEpoch()), 1000, 1000);
  MergeBatch only_count;
  only_count.epoch = Ok(perf.db->CurrentEpoch());
  only_count.stats = {{"attributed", 1800}, {"throttle_events", 7}};
  REQUIRE(perf.db->Merge(only_count));
  Profile q = Build(*perf.db);
  CHECK(q.header.throttled_percent == 0);
  CHECK(std::count(q.warnings.begin(), q.warnings.end(),
                   "perf throttled sampling 7 times; the samples that cost are not estimated "
                   "(only lcpi.ko does)") == 1);
}
