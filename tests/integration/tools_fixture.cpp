// tools_fixture.cpp - writes the report fixture (tests/unit/report/report_fixture.h)
// into the directory given: the profile database the CLI tests of
// tests/integration/tools.cmake run lcpiprof, lcpilist and lcpidiff on. Also
// windows.db: time windows at fixed times (MakeWindows), for --since/--until
// and --epochs; hostile.db (MakeHostile), long-names.db (MakeLongNames) and
// stacks.db (MakeStacks).
#include <cstdio>
#include <exception>
#include <filesystem>

#include "tests/unit/image/mangled_names.h"
#include "tests/unit/report/report_fixture.h"

namespace {

using namespace lcpi;
using lcpi::testing::FixtureCheck;

// 2026-01-01T08:00:00Z
constexpr int64_t kEight = 1767254400;

// Epoch 1 "morning" at 08:00Z, windows 2 and 3 at 09:00 and 10:00, epoch 4
// "noon" at 12:00, window 5 from 13:00 (current). Window i holds 100 * i
// cycles on hot_loop's first instruction and 10 * i in the kernel; cycles
// are sampled as cpu-clock every 1000 up to window 3 and every 2000 after
// (a configuration change that old windows must not forget).
void MakeWindows(const lcpi::testing::ReportFixture& f, const std::string& path) {
  auto elf = ElfImage::Open(f.prog);
  FixtureCheck(elf.has_value(), "open " + f.prog);
  auto opened = ProfileDb::Open(path, DbMode::kReadWrite);
  FixtureCheck(opened.has_value(), "open " + path);
  ProfileDb& db = **opened;
  const struct {
    std::optional<std::string> tag;
    EpochKind kind;
    int64_t at;
  } epochs[] = {{"morning", EpochKind::kEpoch, kEight},
                {std::nullopt, EpochKind::kWindow, kEight + 3600},
                {std::nullopt, EpochKind::kWindow, kEight + 7200},
                {"noon", EpochKind::kEpoch, kEight + 4 * 3600},
                {std::nullopt, EpochKind::kWindow, kEight + 5 * 3600}};
  for (size_t i = 0; i < std::size(epochs); ++i) {
    auto id = db.NewEpoch(epochs[i].tag, epochs[i].kind, epochs[i].at);
    FixtureCheck(id.has_value(), "new epoch");
    MergeBatch b;
    b.epoch = *id;
    b.images = {{(*elf)->identity().identity, f.prog, ImageKind::kUser},
                {"kernel:test", "[kernel]", ImageKind::kKernel}};
    b.events = {{"cycles", "cpu-clock", i < 3 ? 1000u : 2000u}};
    const uint64_t n = i + 1;
    b.counts = {{0, 0, f.hot_lo, 100 * n}, {1, 0, 0x1000, 10 * n}};
    b.processes = {{100, "prog", 0, 0, 100 * n}, {100, "prog", 1, 0, 10 * n}};
    b.stats = {{"attributed", static_cast<int64_t>(110 * n)}};
    auto merged = db.Merge(b);
    FixtureCheck(merged.has_value(), "merge window");
  }
}

// hostile.db: what other users may name, every hostile byte tests/integration/
// hostile_names.py renders in each format (tests/golden/hostile_*): a path
// holding a newline and a forged row, bytes that are not UTF-8, the one-byte
// CSI raw and UTF-8 encoded, DEL, formula prefixes for spreadsheets, and a
// JIT procedure whose demangled name doubles per level; call stacks
// through them.
void MakeHostile(const std::string& path) {
  std::filesystem::remove(path);
  auto opened = ProfileDb::Open(path, DbMode::kReadWrite);
  FixtureCheck(opened.has_value(), "open " + path);
  ProfileDb& db = **opened;
  auto id = db.NewEpoch(std::string("tag\n# epoch: forged\xff"));
  FixtureCheck(id.has_value(), "new epoch");
  MergeBatch b;
  b.epoch = *id;
  b.images = {
      {"build-id:0001", "/tmp/evil\n 77777  99.99  fake-line", ImageKind::kUser},
      {"build-id:0002", "/opt/\xff\xfe/lib\x7f.so", ImageKind::kUser},
      {"build-id:0003",
       "/opt/csi\x9b"
       "31m/\xc2\x9b"
       "2J.so",
       ImageKind::kUser},
      {"build-id:0004", "=cmd|' /C calc'!A0", ImageKind::kUser},
      {"jit:1", "[jit node 4242]", ImageKind::kJit},
      // Trojan Source: U+202E shows this as /opt/xagent/libc.so.6.
      {"build-id:0005",
       "/opt/x\xe2\x80\xae"
       "6.os.cbil/tnega",
       ImageKind::kUser},
      // A literal backslash spelling an escaped newline.
      {"build-id:0006", "/tmp/not\\x0anewline\xe2\x81\xa6\xef\xbb\xbf.so", ImageKind::kUser},
      // Cut from the front, this would read as the system's libc.
      {"build-id:0007",
       "/home/evil/" + std::string(180, 'a') + "/usr/lib/x86_64-linux-gnu/libc.so.6",
       ImageKind::kUser}};
  b.events = {{"cycles", "cpu-clock", 1000}};
  b.counts = {{0, 0, 0x10, 500},  {1, 0, 0x20, 400},  {2, 0, 0x30, 300},  {3, 0, 0x40, 200},
              {4, 0, 0x1000, 90}, {4, 0, 0x1004, 80}, {4, 0, 0x1008, 70}, {4, 0, 0x2000, 60},
              {4, 0, 0x3000, 50}, {5, 0, 0x50, 40},   {6, 0, 0x60, 30},   {7, 0, 0x70, 20}};
  const std::string exponential = lcpi::testing::ExponentialMangledName(20);
  b.symbols = {{4, 0x1000, 0x100, exponential},
               {4, 0x2000, 0x100, "=HYPERLINK(\"http://x\")\n 1 fake\xc2\x9b"},
               {4, 0x3000, 0x100, "+tab\there\r@name\x01"}};
  b.processes = {{101, "evil\n 77777  99.99", 0, 0, 500},
                 {102, "=cmd|' /C calc'!A0", 1, 0, 400},
                 {103,
                  "\xff\xfe\x9b"
                  "2J",
                  2, 0, 300},
                 {104, "-2+3\x7f", 3, 0, 200},
                 {105, "@SUM(A1)", 4, 0, 350}};
  // Call stacks through the hostile names: the HTML page's flame graph and
  // icicle name them in titles and labels.
  StackRow through;
  through.frames = {{4, 0x1008}, {4, 0x2008}, {4, 0x3008}};
  through.count = 30;
  StackRow cut = through;
  cut.frames = {{4, 0x3008}, {0, 0x10}};
  cut.end = 1;  // depth cap
  cut.count = 10;
  b.stacks = {through, cut};
  auto merged = db.Merge(b);
  FixtureCheck(merged.has_value(), "merge hostile: " + (merged ? "" : merged.error().ToString()));
}

// long-names.db: names as long as a real host's, for tests/integration/
// long_names.py. The kernel's hottest symbol is a real 583-byte Rust v0 name
// from a rustc 1.95 program's own std (1103 bytes demangled), beside a
// legacy Rust name and a short C one; the first image stored is a cold
// memfd, as on a host whose first mapping seen was a sealed memfd. The
// same counts again in 29 windows after the epoch.
void MakeLongNames(const std::string& path) {
  std::filesystem::remove(path);
  auto opened = ProfileDb::Open(path, DbMode::kReadWrite);
  FixtureCheck(opened.has_value(), "open " + path);
  ProfileDb& db = **opened;
  auto id = db.NewEpoch(std::string("long"), EpochKind::kEpoch, kEight);
  FixtureCheck(id.has_value(), "new epoch");
  MergeBatch b;
  b.epoch = *id;
  b.images = {{"memfd:1", "/memfd:sealed-lcpi (deleted)", ImageKind::kUser},
              {"kernel:test", "[kernel]", ImageKind::kKernel}};
  b.events = {{"cycles", "cpu-clock", 1000}};
  b.counts = {{0, 0, 0x10, 50}, {1, 0, 0x1000, 900}, {1, 0, 0x2000, 300}, {1, 0, 0x3000, 100}};
  const std::string rust_v0 =
      "_RNvMs2_NtCs4X4t9plMPHF_9addr2line6lookupINtB5_13LoopingLookupINtNtCsgEmfK2I"
      "1SDS_4core6result6ResultINtNtB7_5frame9FrameIterINtNtNtCsduwmD7cSIQq_5gimli4"
      "read12endian_slice11EndianSliceNtNtB24_9endianity12LittleEndianEENtB22_5Erro"
      "rEINtB5_12MappedLookupIBY_TINtNtB12_6option6OptionRINtNtB7_8function8Functio"
      "nB1X_EEIB45_NtB1C_8LocationEEB3s_EINtB5_12SimpleLookupIBY_TNtB7_9DebugFileIN"
      "tNtB22_5dwarf7UnitRefB1X_EEB3s_EB1X_NCNvMNtB7_4unitINtB6K_7ResUnitB1X_E14dwa"
      "rf_and_units4_0ENCNvB6J_25find_function_or_location0ENCNvMs_B7_INtB7_7Contex"
      "tB1X_E11find_frames0E10new_lookupCsjrHSEGnQ3l9_3std";
  b.symbols = {{1, 0x1000, 0x100, rust_v0},
               {1, 0x2000, 0x100, "_ZN3hot6engine13Grid$LT$T$GT$8sum_rows17h956bf6e1d4ed5a83E"},
               {1, 0x3000, 0x100, "short_fn"}};
  b.processes = {{100, "hot", 1, 0, 1300}, {101, "sealed", 0, 0, 50}};
  auto merged = db.Merge(b);
  FixtureCheck(merged.has_value(), "merge long: " + (merged ? "" : merged.error().ToString()));
  // 29 windows after it, the same counts in each: more than the HTML page
  // plots (24), and a column each in its table.
  for (int w = 1; w < 30; ++w) {
    auto window = db.NewEpoch(std::nullopt, EpochKind::kWindow, kEight + 600 * w);
    FixtureCheck(window.has_value(), "new window");
    b.epoch = *window;
    merged = db.Merge(b);
    FixtureCheck(merged.has_value(), "merge window");
  }
}

// stacks.db: call stacks of known shares for the stack views of the HTML
// page and pprof (tests/integration/flame_check.py, pprof_stacks.py). One
// kernel image of stored symbols, 0x100 bytes each: leaf is called 60 %
// through mid_a and 40 % through mid_b, both from top from main; a
// procedure of a 256-character name, called from main, has 20 more; the
// flat counts put leaf hottest. A second epoch, "after", has leaf's callers
// 30/70.
void MakeStacks(const std::string& path) {
  std::filesystem::remove(path);
  auto opened = ProfileDb::Open(path, DbMode::kReadWrite);
  FixtureCheck(opened.has_value(), "open " + path);
  ProfileDb& db = **opened;
  auto id = db.NewEpoch(std::string("stacks"), EpochKind::kEpoch, kEight);
  FixtureCheck(id.has_value(), "new epoch");
  enum : uint64_t {
    kLeaf = 0x1000,
    kMidA = 0x1100,
    kMidB = 0x1200,
    kTop = 0x1300,
    kMain = 0x1400,
    kLong = 0x1500
  };
  const std::string head = "lcpi::fixture::";
  const std::string tail = "::push_the_long_named_frame";
  const std::string long_name = head + std::string(256 - head.size() - tail.size(), 'v') + tail;
  MergeBatch b;
  b.epoch = *id;
  b.images = {{"kernel:test", "[kernel]", ImageKind::kKernel}};
  b.events = {{"cycles", "cpu-clock", 1000}};
  b.counts = {{0, 0, kLeaf + 8, 900}, {0, 0, kLong + 8, 200}, {0, 0, kMidA + 8, 50}};
  b.symbols = {{0, kLeaf, 0x100, "leaf"}, {0, kMidA, 0x100, "mid_a"}, {0, kMidB, 0x100, "mid_b"},
               {0, kTop, 0x100, "top"},   {0, kMain, 0x100, "main"},  {0, kLong, 0x100, long_name}};
  b.processes = {{100, "stacks", 0, 0, 1150}};
  auto stack = [](std::vector<uint64_t> procs, uint64_t count) {
    StackRow r;
    for (uint64_t lo : procs) r.frames.emplace_back(0, lo + 8);
    r.count = count;
    return r;
  };
  b.stacks = {stack({kLeaf, kMidA, kTop, kMain}, 60), stack({kLeaf, kMidB, kTop, kMain}, 40),
              stack({kLong, kMain}, 20)};
  auto merged = db.Merge(b);
  FixtureCheck(merged.has_value(), "merge stacks: " + (merged ? "" : merged.error().ToString()));
  // An epoch "after" in which leaf's callers trade places, 30/70, for
  // lcpidiff --callers leaf.
  auto after = db.NewEpoch(std::string("after"), EpochKind::kEpoch, kEight + 3600);
  FixtureCheck(after.has_value(), "new epoch after");
  b.epoch = *after;
  b.stacks = {stack({kLeaf, kMidA, kTop, kMain}, 30), stack({kLeaf, kMidB, kTop, kMain}, 70)};
  merged = db.Merge(b);
  FixtureCheck(merged.has_value(), "merge after");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  try {
    std::filesystem::create_directories(argv[1]);
    lcpi::testing::ReportFixture f = lcpi::testing::MakeReportFixture(argv[1]);
    const std::string windows = std::string(argv[1]) + "/windows.db";
    std::filesystem::remove(windows);
    MakeWindows(f, windows);
    MakeHostile(std::string(argv[1]) + "/hostile.db");
    MakeLongNames(std::string(argv[1]) + "/long-names.db");
    MakeStacks(std::string(argv[1]) + "/stacks.db");
    std::printf("%s\n%s\n", f.db.c_str(), windows.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
