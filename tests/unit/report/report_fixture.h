// report_fixture.h - the profile the report tests read: a small real C
// program built here (cc -O1 -g -fno-inline) and a database written with
// ProfileDb::Merge (no daemon), with counts at known offsets of known
// functions. Shared by report_test.cpp (library calls) and
// tests/integration/tools_fixture.cpp (the database the CLI tests read).
//
// Epochs: 1 (untagged, empty), 2 "base", 3 "after" (the newest).
// Events: cycles (sampled as cpu-clock, period 100000), imiss (cpu-clock, 50000).
// Epoch 2, cycles (total 10250):
//   prog hot_loop 6000 (on the loop body's instructions), warm 2000, cold 500,
//   prog+0x0-0x10 150 (no symbol); [kernel] do_syscall_64 800, schedule 300,
//   [kernel]+0x5000 100; /usr/lib/fake/libfake.so (missing file) 300 as
//   libfake.so+0x1000-0x1004; [unknown sh] 100.
//   imiss (total 500): hot_loop 100, warm 300, schedule 100.
//   stats: attributed 10150, unknown 100, lost 50.
// Epoch 3, cycles (total 8000): hot_loop 2000, warm 4000, do_syscall_64 1000,
//   /usr/lib/fake/libnew.so 1000. No imiss.
#ifndef LCPI_TESTS_UNIT_REPORT_FIXTURE_H
#define LCPI_TESTS_UNIT_REPORT_FIXTURE_H

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "libprofile/image/elf_symbols.h"
#include "libprofile/store/profile_db.h"

namespace lcpi::testing {

// Line numbers matter: the loop body of hot_loop is line 6.
inline constexpr const char* kReportProgram = R"(#include <stdlib.h>

__attribute__((noinline)) long hot_loop(long n) {
  long s = 0;
  for (long i = 0; i < n; i++)
    s += (i * i) ^ (s >> 3);
  return s;
}

__attribute__((noinline)) long warm(long n) { return hot_loop(n / 2) + 1; }

__attribute__((noinline)) long cold(long n) { return n * 7; }

int main(int argc, char** argv) {
  (void)argv;
  return (int)(warm(argc) + cold(argc) + hot_loop(argc));
}
)";
inline constexpr int kLoopBodyLine = 6;

struct ObjdumpInsn {
  uint64_t vaddr = 0;
  std::string mnemonic;
};

struct ReportFixture {
  std::string dir, source, prog, db;
  uint64_t hot_lo = 0, warm_lo = 0, cold_lo = 0;  // file offsets of the functions
  std::vector<ObjdumpInsn> hot_insns;             // objdump's view of hot_loop
  std::vector<uint64_t> body_vaddrs;              // hot_loop's instructions on line 6
  std::vector<uint64_t> body_counts;              // the cycles put on each, epoch 2
};

inline void FixtureCheck(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("report fixture: " + what);
}

template <class T>
T FixtureValue(Expected<T> e, const std::string& what) {
  if (!e) throw std::runtime_error("report fixture: " + what + ": " + e.error().ToString());
  return std::move(*e);
}

// hot_loop's instructions as objdump disassembles them: the oracle lcpilist
// is checked against.
inline std::vector<ObjdumpInsn> ObjdumpFunction(const std::string& bin, const std::string& dir,
                                                const std::string& fn) {
  const std::string out = dir + "/objdump.txt";
  const std::string cmd =
      "objdump -d -M intel --no-show-raw-insn --disassemble=" + fn + " " + bin + " > " + out;
  FixtureCheck(std::system(cmd.c_str()) == 0, cmd);
  std::ifstream in(out);
  std::vector<ObjdumpInsn> insns;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("<" + fn + ">:") != std::string::npos) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    size_t colon = line.find(":\t");
    if (colon == std::string::npos) {
      if (line.empty()) inside = false;
      continue;
    }
    ObjdumpInsn i;
    i.vaddr = std::stoull(line.substr(0, colon), nullptr, 16);
    std::istringstream rest(line.substr(colon + 2));
    rest >> i.mnemonic;
    insns.push_back(i);
  }
  return insns;
}

inline ReportFixture MakeReportFixture(const std::string& dir) {
  ReportFixture f;
  f.dir = dir;
  f.source = dir + "/prog.c";
  f.prog = dir + "/prog";
  f.db = dir + "/profiles.db";
  {
    std::ofstream src(f.source, std::ios::trunc);
    src << kReportProgram;
    FixtureCheck(src.good(), "cannot write " + f.source);
  }
  // lcpilist shows a source file only when everyone may read it
  // (report/source_files.h); mkdtemp made the directory 0700.
  FixtureCheck(chmod(dir.c_str(), 0755) == 0 && chmod(f.source.c_str(), 0644) == 0, "chmod " + dir);
  const std::string cc = "cc -O1 -g -fno-inline -o " + f.prog + " " + f.source;
  FixtureCheck(std::system(cc.c_str()) == 0, cc);
  std::remove(f.db.c_str());

  auto elf = FixtureValue(ElfImage::Open(f.prog), "open " + f.prog);
  auto file_offset = [&](const std::string& fn) {
    ElfSymbol s = FixtureValue(elf->Symbol(fn), "symbol " + fn);
    auto off = elf->VaddrToFileOffset(s.addr);
    FixtureCheck(off.has_value(), "offset of " + fn);
    return *off;
  };
  f.hot_lo = file_offset("hot_loop");
  f.warm_lo = file_offset("warm");
  f.cold_lo = file_offset("cold");
  f.hot_insns = ObjdumpFunction(f.prog, dir, "hot_loop");
  FixtureCheck(f.hot_insns.size() >= 4, "objdump found no hot_loop");
  for (const ObjdumpInsn& i : f.hot_insns) {
    auto line = elf->SourceLine(i.vaddr);
    if (line && line->line == kLoopBodyLine) f.body_vaddrs.push_back(i.vaddr);
  }
  FixtureCheck(!f.body_vaddrs.empty(), "no instruction of hot_loop on the loop body line");
  // 6000 cycles on the body: 100 on each but the first, the rest on the first.
  f.body_counts.assign(f.body_vaddrs.size(), 100);
  f.body_counts[0] = 6000 - 100 * (f.body_vaddrs.size() - 1);
  auto body_offset = [&](size_t i) { return *elf->VaddrToFileOffset(f.body_vaddrs[i]); };

  auto db = FixtureValue(ProfileDb::Open(f.db, DbMode::kReadWrite), "open " + f.db);
  FixtureValue(db->CurrentEpoch(), "epoch 1");
  const int64_t base = FixtureValue(db->NewEpoch("base"), "epoch base");

  MergeBatch b;
  b.epoch = base;
  b.images = {{elf->identity().identity, f.prog, lcpi::ImageKind::kUser},
              {"kernel:test", "[kernel]", lcpi::ImageKind::kKernel},
              {"build-id:feedface", "/usr/lib/fake/libfake.so", lcpi::ImageKind::kUser},
              {"unknown:sh", "[unknown sh]", lcpi::ImageKind::kUnknown}};
  b.events = {{"cycles", "cpu-clock", 100000}, {"imiss", "cpu-clock", 50000}};
  for (size_t i = 0; i < f.body_vaddrs.size(); ++i) {
    b.counts.push_back({0, 0, body_offset(i), f.body_counts[i]});
  }
  b.counts.push_back({0, 0, f.warm_lo, 2000});
  b.counts.push_back({0, 0, f.cold_lo, 500});
  b.counts.push_back({0, 0, 0x0, 100});
  b.counts.push_back({0, 0, 0x10, 50});
  b.counts.push_back({1, 0, 0x1010, 800});
  b.counts.push_back({1, 0, 0x2008, 300});
  b.counts.push_back({1, 0, 0x5000, 100});
  b.counts.push_back({2, 0, 0x1000, 200});
  b.counts.push_back({2, 0, 0x1004, 100});
  b.counts.push_back({3, 0, 0x7f0000001000, 100});
  b.counts.push_back({0, 1, body_offset(0), 100});
  b.counts.push_back({0, 1, f.warm_lo, 300});
  b.counts.push_back({1, 1, 0x2000, 100});
  b.symbols = {{1, 0x1000, 0x200, "do_syscall_64"}, {1, 0x2000, 0x100, "schedule"}};
  // prog runs as a service, sh in a container, fake in no cgroup lcpid read.
  const std::string service = "/system.slice/prog.service";
  const std::string container =
      "/system.slice/docker-3f1c2a9b8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615243f.scope";
  b.processes = {{100, "prog", 0, 0, 8650, service}, {100, "prog", 1, 0, 1200, service},
                 {200, "sh", 3, 0, 100, container},  {300, "fake", 2, 0, 300},
                 {100, "prog", 0, 1, 400, service},  {100, "prog", 1, 1, 100, service}};
  b.stats = {{"attributed", 10150}, {"unknown", 100}, {"lost", 50}};
  // What the window cost (schema 7): 10250 samples over 10.25 s of 2 CPUs
  // (500/s/CPU), 16 us each (+- 2 us) and 1200 ns of lcpid's: 0.86 % +- 0.10.
  b.cost = lcpi::WindowCost{10250, 20'500'000'000, 10250 * 16'000ull, 10250 * 2'000ull,
                            10250 * 1'200ull};
  auto merged = db->Merge(b);
  FixtureCheck(merged.has_value(), "merge base: " + (merged ? "" : merged.error().ToString()));

  const int64_t after = FixtureValue(db->NewEpoch("after"), "epoch after");
  MergeBatch a;
  a.epoch = after;
  a.images = {{elf->identity().identity, f.prog, lcpi::ImageKind::kUser},
              {"kernel:test", "[kernel]", lcpi::ImageKind::kKernel},
              {"build-id:beef", "/usr/lib/fake/libnew.so", lcpi::ImageKind::kUser}};
  a.events = {{"cycles", "cpu-clock", 100000}};
  a.counts = {{0, 0, body_offset(0), 2000},
              {0, 0, f.warm_lo, 4000},
              {1, 0, 0x1000, 1000},
              {2, 0, 0x400, 1000}};
  a.processes = {{100, "prog", 0, 0, 6000}, {100, "prog", 1, 0, 1000}, {400, "new", 2, 0, 1000}};
  a.stats = {{"attributed", 8000}};
  merged = db->Merge(a);
  FixtureCheck(merged.has_value(), "merge after: " + (merged ? "" : merged.error().ToString()));

  std::ofstream garbage(dir + "/garbage.db", std::ios::trunc);
  garbage << "this is not a database, just some text long enough to look like a file\n";
  return f;
}

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_REPORT_FIXTURE_H
