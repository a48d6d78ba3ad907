// report_test.cpp - the reports behind lcpiprof, lcpilist and lcpidiff, as
// library calls, on a profile written with ProfileDb::Merge over a real
// binary built here (tests/unit/report/report_fixture.h): numbers, percentages,
// sorting, --top/--keep, unsymbolized ranges, the three formats (text against
// the golden files the CLI tests use too), width fitting, per-instruction
// counts against objdump's disassembly and libdw's lines, and the errors.
#include <stdlib.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

#include "libprofile/image/image_id.h"
#include "libprofile/report/pprof_profile.h"
#include "libprofile/report/report.h"
#include "report_fixture.h"

namespace {

using namespace lcpi;
using namespace lcpi::report;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/lcpi_report_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Env {
  TempDir dir;
  testing::ReportFixture f = testing::MakeReportFixture(dir.path());
  std::unique_ptr<ProfileDb> db;
  Env() {
    auto d = ProfileDb::Open(f.db, DbMode::kReadOnly);
    REQUIRE(d.has_value());
    db = std::move(*d);
  }
};

std::string ReadGolden(const std::string& name) {
  std::ifstream in(std::string(LCPI_SOURCE_DIR) + "/tests/golden/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What the golden files hold: the fixture directory as @DIR@, the fixture's
// build-id as @ID@.
std::string Normalize(const std::string& text, const std::string& dir) {
  std::string out = ReplaceAll(text, dir, "@DIR@");
  return std::regex_replace(out, std::regex("build-id:[0-9a-f]{9,}(:[0-9a-f]{16})?"),
                            "build-id:@ID@");
}

Profile Build(ProfileDb& db, ProfOptions o) {
  auto p = BuildProfile(db, o);
  INFO((p ? "" : p.error().ToString()));
  REQUIRE(p.has_value());
  return std::move(*p);
}

const Row* FindRow(const Profile& p, const std::string& name) {
  for (const Row& r : p.rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

bool ValidJson(const std::string& text, const std::string& dir) {
  const std::string path = dir + "/out.json";
  std::ofstream(path) << text;
  return std::system(
             ("python3 -c 'import json,sys; json.load(open(sys.argv[1]))' " + path).c_str()) == 0;
}

TEST_CASE("images view: counts, percentages, order and the header", "[report]") {
  Env env;
  ProfOptions o;
  o.epoch = "base";
  Profile p = Build(*env.db, o);
  REQUIRE(p.header.events.size() == 2);
  CHECK(p.header.events[0].name == "cycles");
  CHECK(p.header.events[0].used == "cpu-clock");
  CHECK(p.header.totals == std::vector<uint64_t>{10250, 500});
  CHECK(p.header.unknown_percent == Approx(100.0 * 100 / 10250));
  CHECK(p.header.lost_percent == Approx(100.0 * 50 / 10300));
  REQUIRE(p.rows.size() == 4);
  CHECK(p.rows[0].name == env.f.prog);
  CHECK(p.rows[0].counts == std::vector<uint64_t>{8650, 400});
  CHECK(p.rows[1].name == "[kernel]");
  CHECK(p.rows[2].name == "/usr/lib/fake/libfake.so");
  CHECK(p.rows[3].name == "[unknown sh]");

  RenderOptions ro;
  ro.width = 200;
  CHECK(Normalize(RenderProfile(p, ro), env.dir.path()) == ReadGolden("lcpiprof_images.txt"));
  ro.format = Format::kCsv;
  CHECK(Normalize(RenderProfile(p, ro), env.dir.path()) == ReadGolden("lcpiprof_images.csv"));
}

TEST_CASE("the lost share counts the samples dropped while held, refused or set aside",
          "[report]") {
  Header h;
  // 1,000 samples taken: 800 in counts, 200 taken but in none.
  h.stats = {{"attributed", 750}, {"unknown", 50},          {"lost", 40},
             {"dropped", 10},     {"pending_dropped", 100}, {"refused", 50}};
  SetSampleShares(h);
  CHECK(h.unknown_percent == Approx(100.0 * 50 / 800));
  CHECK(h.lost_percent == Approx(20.0));
  // An image's rows the database set aside: counted as attributed, stored nowhere.
  h.stats["quarantined.samples"] = 100;
  SetSampleShares(h);
  CHECK(h.unknown_percent == Approx(100.0 * 50 / 700));
  CHECK(h.lost_percent == Approx(30.0));
}

TEST_CASE("the newest epoch is the default, and 'all' sums every epoch", "[report]") {
  Env env;
  Profile newest = Build(*env.db, {});
  REQUIRE(newest.header.epochs.size() == 1);
  CHECK(newest.header.epochs[0].tag == "after");
  CHECK(newest.header.totals == std::vector<uint64_t>{8000});  // no imiss in "after"
  ProfOptions o;
  o.epoch = "all";
  Profile all = Build(*env.db, o);
  CHECK(all.header.all_epochs);
  CHECK(all.header.totals[0] == 18250);
  REQUIRE(FindRow(all, env.f.prog));
  CHECK(FindRow(all, env.f.prog)->counts[0] == 8650 + 6000);
  o.epoch = "1";  // empty
  Profile empty = Build(*env.db, o);
  CHECK(empty.rows.empty());
  RenderOptions ro;
  ro.format = Format::kJson;
  CHECK(ValidJson(RenderProfile(empty, ro), env.dir.path()));
}

TEST_CASE("procedures view: symbols, kernel symbols and ranges, nothing dropped", "[report]") {
  Env env;
  ProfOptions o;
  o.epoch = "base";
  o.view = View::kProcedures;
  Profile p = Build(*env.db, o);
  std::vector<std::string> names;
  for (const Row& r : p.rows) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"hot_loop", "warm", "do_syscall_64", "cold", "schedule",
                                          "libfake.so+0x1000-0x1004", "prog+0x0-0x10",
                                          "[kernel]+0x5000", "[unknown sh]+0x7f0000001000"});
  CHECK(FindRow(p, "hot_loop")->counts == std::vector<uint64_t>{6000, 100});
  CHECK(FindRow(p, "hot_loop")->lo == env.f.hot_lo);
  CHECK_FALSE(FindRow(p, "prog+0x0-0x10")->symbol);
  uint64_t sum = 0;
  for (const Row& r : p.rows) sum += r.counts[0];
  CHECK(sum == p.header.totals[0]);  // every sample is in some row
  // The missing libfake.so is reported, not fatal.
  REQUIRE(p.warnings.size() == 1);
  CHECK(p.warnings[0].find("libfake.so") != std::string::npos);

  RenderOptions ro;
  ro.width = 200;
  CHECK(Normalize(RenderProfile(p, ro), env.dir.path()) == ReadGolden("lcpiprof_procedures.txt"));
  ro.format = Format::kJson;
  const std::string json = RenderProfile(p, ro);
  CHECK(ValidJson(json, env.dir.path()));
  CHECK(json.find("{\"name\": \"hot_loop\", \"image\": ") != std::string::npos);
  CHECK(json.find("\"counts\": {\"cycles\": 6000, \"imiss\": 100}, \"percent\": {\"cycles\": "
                  "58.5366, \"imiss\": 20.0000}") != std::string::npos);

  o.images = {"kernel"};
  Profile k = Build(*env.db, o);
  RenderOptions plain;
  plain.width = 200;
  plain.header = false;
  CHECK(RenderProfile(k, plain) == ReadGolden("lcpiprof_kernel.txt"));
}

TEST_CASE("pprof: a location per offset at its file offset, named as -p names it", "[report]") {
  Env env;
  PprofOptions o;
  o.epoch = "base";
  auto built = BuildPprof(*env.db, o);
  REQUIRE(built);
  const pprof::Profile& p = built->profile;
  std::vector<std::string> types;
  for (const pprof::ValueType& t : p.sample_types) types.push_back(t.type + "/" + t.unit);
  CHECK(types == std::vector<std::string>{"cycles_samples/count", "cycles/nanoseconds",
                                          "imiss_samples/count", "imiss/nanoseconds"});
  CHECK(p.default_sample_type == "cycles_samples");
  CHECK(p.period_type.type == "cycles");
  CHECK(p.period == 100000);
  REQUIRE(p.samples.size() == p.locations.size());

  auto mapping = [&](const std::string& file) -> const pprof::Mapping* {
    for (const pprof::Mapping& m : p.mappings) {
      if (m.filename == file) return &m;
    }
    return nullptr;
  };
  const pprof::Mapping* prog = mapping(env.f.prog);
  REQUIRE(prog);
  auto elf = ElfImage::Open(env.f.prog);
  REQUIRE(elf);
  CHECK(prog->build_id == (*elf)->build_id());
  CHECK(prog->memory_start == 0);
  CHECK(prog->file_offset == 0);
  CHECK(prog->has_functions);
  auto first = (*elf)->SourceLine(*(*elf)->FileOffsetToVaddr(env.f.hot_lo));
  REQUIRE(first);
  const int64_t first_line = first->line;
  REQUIRE(mapping("/usr/lib/fake/libfake.so"));
  CHECK(mapping("/usr/lib/fake/libfake.so")->build_id == "feedface");
  REQUIRE(mapping("[kernel]"));
  CHECK(mapping("[kernel]")->build_id.empty());  // kernel:test is no build-id identity

  // Per function: -p's rows; hot_loop's samples at its own file offsets, on line 6.
  std::map<std::string, int64_t> by_function;
  int64_t cycles = 0, nanos = 0;
  for (size_t i = 0; i < p.samples.size(); ++i) {
    const pprof::Sample& s = p.samples[i];
    REQUIRE(s.location_ids.size() == 1);
    const pprof::Location& loc = p.locations.at(s.location_ids[0] - 1);
    REQUIRE(loc.id == s.location_ids[0]);
    REQUIRE(loc.lines.size() == 1);
    const pprof::Function& fn = p.functions.at(loc.lines[0].function_id - 1);
    by_function[fn.name] += s.values[0];
    cycles += s.values[0];
    nanos += s.values[1];
    if (fn.name == "hot_loop") {
      CHECK(loc.mapping_id == prog->id);
      CHECK(loc.address >= env.f.hot_lo);
      CHECK(loc.address < env.f.warm_lo);
      CHECK(loc.lines[0].line == testing::kLoopBodyLine);
      CHECK(fn.filename.size() >= 6);
      CHECK(fn.filename.substr(fn.filename.size() - 6) == "prog.c");
      // start_line: the line of the first instruction (libdw), not the declaration's
      CHECK(fn.start_line == first_line);
    }
  }
  CHECK(cycles == 10250);
  CHECK(nanos == 10250LL * 100000);
  CHECK(by_function == std::map<std::string, int64_t>{{"hot_loop", 6000},
                                                      {"warm", 2000},
                                                      {"do_syscall_64", 800},
                                                      {"cold", 500},
                                                      {"schedule", 300},
                                                      {"libfake.so+0x1000-0x1004", 300},
                                                      {"prog+0x0-0x10", 150},
                                                      {"[kernel]+0x5000", 100},
                                                      {"[unknown sh]+0x7f0000001000", 100}});
  CHECK(mapping("[kernel]")->memory_limit == 0x5000 + 1);

  o.images = {"kernel"};
  auto kernel = BuildPprof(*env.db, o);
  REQUIRE(kernel);
  REQUIRE(kernel->profile.mappings.size() == 1);
  CHECK(kernel->profile.mappings[0].filename == "[kernel]");
  o.images = {"nosuch.so"};
  auto none = BuildPprof(*env.db, o);
  REQUIRE_FALSE(none);
  CHECK(none.error().code() == Errc::kNotFound);
  auto bytes = PprofBytes(p);
  REQUIRE(bytes);
  CHECK(bytes->substr(0, 2) == "\x1f\x8b");
}

TEST_CASE("sort by an event, keep a share, top N rows", "[report]") {
  Env env;
  ProfOptions o;
  o.epoch = "base";
  o.view = View::kProcedures;
  o.sort = "imiss";
  o.keep_percent = 5;
  Profile keep = Build(*env.db, o);
  REQUIRE(keep.rows.size() == 3);  // warm 60 %, hot_loop 20 %, schedule 20 %
  CHECK(keep.rows[0].name == "warm");
  CHECK(keep.rows[1].name == "hot_loop");  // tie on imiss: more cycles first
  CHECK(keep.omitted == 6);
  CHECK(keep.omitted_counts == std::vector<uint64_t>{1950, 0});
  o.top = 2;
  Profile top = Build(*env.db, o);
  CHECK(top.rows.size() == 2);
  CHECK(top.omitted_counts == std::vector<uint64_t>{2250, 100});
  RenderOptions ro;
  ro.width = 200;
  ro.header = false;
  CHECK(Normalize(RenderProfile(top, ro), env.dir.path()) == ReadGolden("lcpiprof_top_keep.txt"));
  o.sort = "nosuch";
  auto bad = BuildProfile(*env.db, o);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code() == Errc::kInvalidArgument);
}

TEST_CASE("processes view", "[report]") {
  Env env;
  ProfOptions o;
  o.epoch = "2";
  o.view = View::kProcesses;
  Profile p = Build(*env.db, o);
  REQUIRE(p.rows.size() == 3);
  CHECK(p.rows[0].name == "prog");
  CHECK(p.rows[0].pid == 100);
  CHECK(p.rows[0].counts == std::vector<uint64_t>{9850, 500});
  RenderOptions ro;
  ro.width = 200;
  ro.header = false;
  CHECK(RenderProfile(p, ro) == ReadGolden("lcpiprof_processes.txt"));
}

TEST_CASE("text fits the width: long paths keep their tail", "[report]") {
  Env env;
  ProfOptions o;
  o.epoch = "base";
  o.view = View::kProcedures;
  Profile p = Build(*env.db, o);
  for (Row& r : p.rows) r.image = "/very/long/directory/name/that/does/not/fit/" + r.image;
  RenderOptions ro;
  ro.width = 90;
  ro.header = false;
  const std::string text = RenderProfile(p, ro);
  std::istringstream lines(text);
  size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    INFO(line);
    CHECK(line.size() <= 90);
  }
  CHECK(n == p.rows.size() + 1);
  CHECK(text.find("...") != std::string::npos);
  CHECK(text.find("/prog\n") != std::string::npos);
}

TEST_CASE("lcpilist: the hot loop's counts on objdump's instructions and line 6", "[report]") {
  Env env;
  ListOptions o;
  o.epoch = "base";
  o.procedure = "hot_loop";
  o.image = "prog";
  o.source = true;
  auto l = BuildListing(*env.db, o);
  INFO((l ? "" : l.error().ToString()));
  REQUIRE(l.has_value());
  CHECK(l->warnings.empty());
  CHECK(l->totals == std::vector<uint64_t>{6000, 100});
  // Same instructions, same mnemonics as objdump.
  REQUIRE(l->instructions.size() == env.f.hot_insns.size());
  for (size_t i = 0; i < l->instructions.size(); ++i) {
    const Instruction& in = l->instructions[i];
    INFO("instruction " << i << ": " << in.text);
    CHECK(in.address == env.f.hot_insns[i].vaddr);
    CHECK(in.text.substr(0, in.text.find(' ')) == env.f.hot_insns[i].mnemonic);
    auto body = std::find(env.f.body_vaddrs.begin(), env.f.body_vaddrs.end(), in.address);
    if (body != env.f.body_vaddrs.end()) {
      CHECK(in.counts[0] == env.f.body_counts[body - env.f.body_vaddrs.begin()]);
      CHECK(in.source_line == testing::kLoopBodyLine);
      CHECK(in.source_text.find("s += (i * i) ^ (s >> 3);") != std::string::npos);
    } else {
      CHECK(in.counts[0] == 0);
    }
  }
  RenderOptions ro;
  ro.width = 120;
  const std::string text = RenderListing(*l, ro);
  // The first body instruction's line carries its count and percentage.
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(env.f.body_vaddrs[0]));
  std::istringstream lines(text);
  bool seen = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(addr) == std::string::npos || line.find("%") != std::string::npos) continue;
    std::istringstream cells(line);
    std::string a;
    uint64_t cycles = 0;
    cells >> a >> cycles;
    if (a == addr) {
      seen = true;
      CHECK(cycles == env.f.body_counts[0]);
    }
  }
  CHECK(seen);
  CHECK(text.find("prog.c:6:") != std::string::npos);

  o.lines = true;
  auto by_line = BuildListing(*env.db, o);
  REQUIRE(by_line.has_value());
  uint64_t on_body = 0;
  for (const SourceLineRow& r : by_line->lines) {
    if (r.line == testing::kLoopBodyLine) on_body += r.counts[0];
  }
  CHECK(on_body == 6000);
  ro.format = Format::kJson;
  CHECK(ValidJson(RenderListing(*by_line, ro), env.dir.path()));
}

TEST_CASE("lcpilist: a rebuilt image is reported and still listed", "[report]") {
  Env env;
  // Rebuild prog with other code: another identity at the profiled path.
  const std::string cc = "cc -O0 -g -o " + env.f.prog + " " + env.f.source;
  REQUIRE(std::system(cc.c_str()) == 0);
  ListOptions o;
  o.epoch = "base";
  o.procedure = "hot_loop";
  auto l = BuildListing(*env.db, o);
  REQUIRE(l.has_value());
  REQUIRE_FALSE(l->warnings.empty());
  CHECK(l->warnings[0].find("not the profiled") != std::string::npos);
  // The file found is not the one profiled: its identity (a build-id a
  // user could aim at a file root alone may read) is not printed.
  auto found = lcpi::IdentifyElfFile(env.f.prog);
  REQUIRE(found.has_value());
  CHECK(l->warnings[0].find(found->identity) == std::string::npos);
  CHECK_FALSE(l->instructions.empty());
}

TEST_CASE("lcpilist: ranges, kernel procedures and missing images", "[report]") {
  Env env;
  ListOptions o;
  o.epoch = "base";
  REQUIRE(ParseRange("libfake.so:0x1000-0x1010", &o).has_value());
  auto l = BuildListing(*env.db, o);
  REQUIRE(l.has_value());
  REQUIRE(l->instructions.size() == 2);  // the sampled offsets, without code
  CHECK(l->instructions[0].counts[0] == 200);
  CHECK(l->instructions[1].counts[0] == 100);
  CHECK_FALSE(l->warnings.empty());
  CHECK_FALSE(ParseRange("libfake.so:0x10-0x10", &o).has_value());
  CHECK_FALSE(ParseRange("nocolon", &o).has_value());

  ListOptions k;
  k.epoch = "base";
  k.procedure = "schedule";
  auto s = BuildListing(*env.db, k);
  REQUIRE(s.has_value());
  CHECK(s->totals == std::vector<uint64_t>{300, 100});

  k.procedure = "no_such_function";
  auto none = BuildListing(*env.db, k);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().code() == Errc::kNotFound);
  CHECK(none.error().message().find("no such procedure") != std::string::npos);
}

TEST_CASE("lcpidiff: shares, points, new and vanished, largest change first", "[report]") {
  Env env;
  DiffOptions o;
  o.view = View::kProcedures;
  o.epoch_a = "base";
  o.epoch_b = "after";
  auto d = BuildDiff(*env.db, *env.db, o);
  REQUIRE(d.has_value());
  CHECK(d->event == "cycles");
  REQUIRE(d->rows.size() == 10);
  CHECK(d->rows[0].name == "hot_loop");
  CHECK(d->rows[0].share_a == Approx(100.0 * 6000 / 10250));
  CHECK(d->rows[0].share_b == Approx(25.0));
  CHECK(d->rows[0].delta == Approx(25.0 - 100.0 * 6000 / 10250));
  CHECK(d->rows[1].name == "warm");
  CHECK(d->rows[2].status == "new");
  CHECK(d->rows[3].name == "cold");
  CHECK(d->rows[3].status == "vanished");
  for (size_t i = 1; i < d->rows.size(); ++i) {
    CHECK(std::fabs(d->rows[i - 1].delta) >= std::fabs(d->rows[i].delta));
  }
  RenderOptions ro;
  ro.width = 200;
  ro.header = false;
  CHECK(Normalize(RenderDiff(*d, ro), env.dir.path()) == ReadGolden("lcpidiff_procedures.txt"));
  ro.format = Format::kJson;
  CHECK(ValidJson(RenderDiff(*d, ro), env.dir.path()));
  o.top = 3;
  auto top = BuildDiff(*env.db, *env.db, o);
  REQUIRE(top.has_value());
  CHECK(top->rows.size() == 3);
  CHECK(top->omitted == 7);
}

TEST_CASE("errors: no database, not a database, no such epoch, image, event", "[report]") {
  Env env;
  auto missing = ProfileDb::Open(env.dir.path() + "/missing.db", DbMode::kReadOnly);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code() == Errc::kNotFound);
  auto garbage = ProfileDb::Open(env.dir.path() + "/garbage.db", DbMode::kReadOnly);
  REQUIRE_FALSE(garbage.has_value());
  CHECK(garbage.error().code() == Errc::kNotADatabase);

  ProfOptions o;
  o.epoch = "nosuch";
  auto e = BuildProfile(*env.db, o);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().code() == Errc::kNotFound);
  CHECK(e.error().message().find("no such epoch: nosuch") != std::string::npos);
  o.epoch = "";
  o.view = View::kProcedures;
  o.images = {"nosuch.so"};
  auto i = BuildProfile(*env.db, o);
  REQUIRE_FALSE(i.has_value());
  CHECK(i.error().message() == "no such image: nosuch.so");
  o.images.clear();
  o.events = {"nosuch"};
  auto ev = BuildProfile(*env.db, o);
  REQUIRE_FALSE(ev.has_value());
  CHECK(ev.error().message().find("no such event: nosuch") != std::string::npos);
  CHECK_FALSE(ParseFormat("xml").has_value());
}

}  // namespace
