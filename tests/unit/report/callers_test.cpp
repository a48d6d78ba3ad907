// callers_test.cpp - lcpiprof --callers/--callees from stored stacks: the
// share through each immediate caller or callee, a recursive procedure's
// stack counted once per neighbour, [self] and [stack end: ...] rows, the
// error when no stack passes through, the three formats of the view, and
// the stack samples not kept, warned of in every view of stacks.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "libprofile/report/callers.h"
#include "libprofile/report/html_page.h"
#include "libprofile/report/pprof_profile.h"
#include "libprofile/store/profile_db.h"
#include "store/store_test_util.h"

using namespace lcpi;
using namespace lcpi::report;

namespace {

// A database of its own in a directory of its own: CTest runs the cases
// side by side (-j), and a fixed path was shared by both.
struct Db {
  Db() {
    auto opened = ProfileDb::Open(dir.File("p.db"), DbMode::kReadWrite);
    REQUIRE(opened);
    db = std::move(*opened);
  }
  lcpi::testing::TempDir dir{"lcpi-callers-test"};
  std::unique_ptr<ProfileDb> db;
};

// Procedures of one kernel image (stored symbols: no file needed), each
// 0x100 bytes: leaf 0x1000, mid_a 0x1100, mid_b 0x1200, top 0x1300, rec 0x1400.
enum : uint64_t { kLeaf = 0x1000, kMidA = 0x1100, kMidB = 0x1200, kTop = 0x1300, kRec = 0x1400 };

StackRow Stack(std::vector<uint64_t> offsets, uint64_t count, uint8_t end = 0) {
  StackRow r;
  for (uint64_t o : offsets) r.frames.emplace_back(0, o + 8);
  r.count = count;
  r.end = end;
  return r;
}

void Merge(ProfileDb& db, std::vector<StackRow> stacks) {
  MergeBatch b;
  b.epoch = *db.CurrentEpoch();
  b.images.push_back({"kernel:test", "[kernel.kallsyms]", ImageKind::kKernel});
  b.events.push_back({"cycles", "cpu-clock", 1000});
  b.counts.push_back({0, 0, kLeaf, 1});
  const std::pair<const char*, uint64_t> procs[] = {
      {"leaf", kLeaf}, {"mid_a", kMidA}, {"mid_b", kMidB}, {"top", kTop}, {"rec", kRec}};
  for (const auto& [name, lo] : procs) b.symbols.push_back({0, lo, 0x100, name});
  b.stacks = std::move(stacks);
  auto ok = db.Merge(b);
  INFO((ok ? std::string("ok") : ok.error().ToString()));
  REQUIRE(ok);
}

std::map<std::string, uint64_t> Rows(const Callers& c) {
  std::map<std::string, uint64_t> out;
  for (const CallerRow& r : c.rows) out[r.name] = r.count;
  return out;
}

}  // namespace

TEST_CASE("callers and callees: shares through each neighbour") {
  Db d;
  Merge(*d.db, {Stack({kLeaf, kMidA, kTop}, 60), Stack({kLeaf, kMidB, kTop}, 40),
                Stack({kMidA, kTop}, 10), Stack({kLeaf}, 5, 0),
                // rec calls itself, then leaf: one stack, counted once per neighbour
                Stack({kLeaf, kRec, kRec, kRec, kTop}, 7)});
  CallersOptions o;
  o.epoch = "all";
  o.symbol = "leaf";
  Callers c = *BuildCallers(*d.db, o);
  CHECK(c.stack_samples == 122);
  CHECK(c.through == 112);
  CHECK(Rows(c) == std::map<std::string, uint64_t>{
                       {"mid_a", 60}, {"mid_b", 40}, {"rec", 7}, {"[stack end: walk ended]", 5}});
  CHECK(c.rows.front().name == "mid_a");

  o.symbol = "rec";
  c = *BuildCallers(*d.db, o);
  CHECK(c.through == 7);
  CHECK(Rows(c) == std::map<std::string, uint64_t>{{"rec", 7}, {"top", 7}});

  o.symbol = "mid_a";
  o.callees = true;
  c = *BuildCallers(*d.db, o);
  CHECK(Rows(c) == std::map<std::string, uint64_t>{{"leaf", 60}, {"[self]", 10}});

  SECTION("the view in text, CSV and JSON") {
    o.symbol = "leaf";
    o.callees = false;
    c = *BuildCallers(*d.db, o);
    std::string csv = RenderCallers(c, {Format::kCsv, 100, true});
    CHECK(csv.rfind("caller,image,stacks,percent\n", 0) == 0);
    CHECK(csv.find("mid_a,[kernel.kallsyms],60,53.5714\n") != std::string::npos);
    std::string json = RenderCallers(c, {Format::kJson, 100, true});
    CHECK(json.find("\"view\": \"callers\"") != std::string::npos);
    CHECK(json.find("\"through\": 112") != std::string::npos);
    std::string text = RenderCallers(c, {Format::kText, 100, true});
    CHECK(text.find("112 of 122 stack samples pass through leaf") != std::string::npos);
    CHECK(text.find("mid_b") != std::string::npos);
  }
  SECTION("no stack through the symbol is an error that says so") {
    o.symbol = "nothing_here";
    auto none = BuildCallers(*d.db, o);
    REQUIRE_FALSE(none);
    CHECK(none.error().code() == Errc::kNotFound);
    CHECK(none.error().message().find("122 stack samples") != std::string::npos);
  }
}

TEST_CASE("callers of a database without stacks say none were stored") {
  Db d;
  Merge(*d.db, {});
  CallersOptions o;
  o.epoch = "all";
  o.symbol = "leaf";
  auto none = BuildCallers(*d.db, o);
  REQUIRE_FALSE(none);
  CHECK(none.error().message().find("--stack-frequency") != std::string::npos);
}

TEST_CASE("stack samples a window did not keep are warned of, each by its cause, in every view") {
  Db d;
  MergeBatch b;
  b.epoch = *d.db->CurrentEpoch();
  b.images.push_back({"kernel:test", "[kernel.kallsyms]", ImageKind::kKernel});
  b.events.push_back({"cycles", "cpu-clock", 1000});
  b.symbols.push_back({0, kLeaf, 0x100, "leaf"});
  b.symbols.push_back({0, kTop, 0x100, "top"});
  b.stacks = {Stack({kLeaf, kTop}, 4)};
  b.stats = {{"stack_samples", 23},
             {"stacks_over_limit", 3},
             {"pending_dropped_stacks", 9},
             {"refused_stacks", 5},
             {"stacks_quarantined", 2}};
  REQUIRE(d.db->Merge(b));
  auto check = [](const std::vector<std::string>& warnings) {
    std::string warned;
    for (const std::string& w : warnings) warned += w + "\n";
    INFO(warned);
    CHECK(warned.find("3 stack samples were beyond lcpid --max-stacks") != std::string::npos);
    CHECK(warned.find("9 stack samples were dropped while the database refused merges") !=
          std::string::npos);
    CHECK(warned.find("5 stack samples were in a batch the database refused") != std::string::npos);
    CHECK(warned.find("2 stack samples passed through an image whose rows the database set "
                      "aside") != std::string::npos);
  };
  CallersOptions o;
  o.epoch = "all";
  o.symbol = "leaf";
  SECTION("--callers") { check(BuildCallers(*d.db, o)->warnings); }
  SECTION("the HTML page's flame graph") {
    HtmlOptions html;
    html.prof.epoch = "all";
    auto page = BuildHtmlReport(*d.db, html);
    REQUIRE(page);
    REQUIRE(page->stack_samples == 4);
    check(page->warnings);
  }
  SECTION("lcpidiff --callers, once though both sides warn") {
    DiffOptions diff;
    diff.epoch_a = diff.epoch_b = "all";
    diff.symbol = "leaf";
    auto d2 = BuildCallersDiff(*d.db, *d.db, diff);
    REQUIRE(d2);
    check(d2->warnings);
    CHECK(d2->warnings.size() == 4);
  }
  SECTION("pprof's stacks") {
    PprofOptions pprof;
    pprof.epoch = "all";
    auto profile = BuildPprof(*d.db, pprof);
    REQUIRE(profile);
    check(profile->warnings);
  }
}

TEST_CASE("when every stack was dropped, the error says so, not only that none were stored") {
  Db d;
  MergeBatch b;
  b.epoch = *d.db->CurrentEpoch();
  b.events.push_back({"cycles", "cpu-clock", 1000});
  b.stats = {{"stack_samples", 12}, {"pending_dropped_stacks", 12}};
  REQUIRE(d.db->Merge(b));
  CallersOptions o;
  o.epoch = "all";
  o.symbol = "leaf";
  auto none = BuildCallers(*d.db, o);
  REQUIRE_FALSE(none);
  CHECK(none.error().code() == Errc::kNotFound);
  CHECK(none.error().message().find("12 stack samples were dropped while the database refused "
                                    "merges") != std::string::npos);
}
