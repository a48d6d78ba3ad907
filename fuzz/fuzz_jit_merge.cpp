// fuzz_jit_merge.cpp - fuzz target for the whole path a JIT runtime's files
// take (issue 25: one perf-map line the store could not hold stopped every
// merge): the input's first byte says whether the rest is a jitdump ('D')
// or a perf map (/tmp/perf-PID.map, any other byte); it is written under a
// process root laid out like /proc, read by JitMaps as lcpid reads it,
// every name it gives is sampled once, the batch is built as the Aggregator
// builds it (counts at the process's addresses, the names not yet stored),
// and merged into a real SQLite database. The merge must never fail nor set
// anything aside for its content: a value the store refuses is the parsers'
// bug, found here rather than by a user.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/jit_maps.h"
#include "libprofile/attribute/perf_map.h"
#include "libprofile/store/profile_db.h"

namespace {

constexpr uint32_t kPid = 4242;
constexpr uint64_t kSecond = 1000000000ull;

// One directory for the process (kept in a buffer that outlives the static
// destructors: the exit handler removing it runs after them).
char g_dir[4096];

const std::string& Dir() {
  static std::string dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "lcpi-fuzz-jit-XXXXXX").string();
    if (tmpl.size() >= sizeof g_dir || mkdtemp(tmpl.data()) == nullptr) std::abort();
    std::memcpy(g_dir, tmpl.c_str(), tmpl.size() + 1);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(g_dir, ec);
    });
    // /proc/PID (stat with a start time, root a link to the process's
    // root directory) and the boot id, as jit_maps_test lays them out.
    const std::string proc = tmpl + "/proc", base = proc + "/" + std::to_string(kPid);
    std::filesystem::create_directories(proc + "/sys/kernel/random");
    std::filesystem::create_directories(base);
    std::filesystem::create_directories(tmpl + "/rootfs/tmp");
    std::ofstream(proc + "/sys/kernel/random/boot_id") << "fuzz-boot\n";
    std::ofstream(base + "/stat") << kPid
                                  << " (node) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0\n";
    if (symlink((tmpl + "/rootfs").c_str(), (base + "/root").c_str()) != 0) std::abort();
    return tmpl;
  }();
  return dir;
}

lcpi::ProfileDb& Db() {
  static std::unique_ptr<lcpi::ProfileDb> db = [] {
    auto opened = lcpi::ProfileDb::Open(Dir() + "/profile.db", lcpi::DbMode::kReadWrite);
    if (!opened || !(*opened)->CurrentEpoch()) std::abort();
    return std::move(*opened);
  }();
  return *db;
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool dump = data[0] == 'D';
  const std::string tmp = Dir() + "/rootfs/tmp/";
  const std::string map_path = tmp + "perf-" + std::to_string(kPid) + ".map";
  const std::string dump_path = tmp + "jit-" + std::to_string(kPid) + ".dump";
  std::filesystem::remove(map_path);
  std::filesystem::remove(dump_path);
  WriteFile(dump ? dump_path : map_path, data + 1, size - 1);

  // Small limits: the fuzzer's inputs are small, and so stay its runs.
  lcpi::PerfMapLimits limits;
  limits.max_lines = 256;
  limits.max_name = 256;
  lcpi::ImageTable images;
  lcpi::JitMaps jit(images, Dir() + "/proc", limits);
  jit.Watch(kPid);
  if (dump) jit.SetJitdump(kPid, "/tmp/jit-" + std::to_string(kPid) + ".dump");

  // Every name the files give, sampled once at its start (the first
  // Resolve opens the process and reads its files).
  (void)jit.Resolve(kPid, "node", 0, kSecond);
  lcpi::PerfMapParse names;
  if (dump) {
    lcpi::JitdumpCursor cursor;
    names = lcpi::ParseJitdump(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1),
                               &cursor, limits)
                .names;
  } else {
    names = lcpi::ParsePerfMap(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1),
                               limits);
  }
  int32_t image = lcpi::kNoImage;
  std::vector<uint64_t> offsets;
  for (const lcpi::PerfMapSymbol& s : names.symbols) {
    std::optional<lcpi::JitLocation> at = jit.Resolve(kPid, "node", s.start, kSecond);
    if (!at) continue;
    image = at->image;
    offsets.push_back(at->offset);
  }
  if (image == lcpi::kNoImage) return 0;

  // The batch as the Aggregator makes it for a JIT image.
  lcpi::ProfileDb& db = Db();
  lcpi::MergeBatch b;
  b.epoch = *db.CurrentEpoch();
  const lcpi::ImageEntry& e = images.at(image);
  b.images.push_back({e.identity, e.path, e.kind});
  b.events.push_back({"cycles", "cpu-clock", 1000});
  for (uint64_t offset : offsets) b.counts.push_back({0, 0, offset, 1});
  b.processes.push_back({kPid, "node", 0, 0, offsets.size()});
  std::vector<const lcpi::PerfMapSymbol*> carried = jit.Unstored(image, offsets);
  for (const lcpi::PerfMapSymbol* s : carried) b.symbols.push_back({0, s->start, s->size, s->name});
  b.stats.emplace_back("samples", static_cast<int64_t>(offsets.size()));

  lcpi::MergeReport report;
  if (!db.Merge(b, &report)) std::abort();         // refused for its content
  if (report.quarantined_rows != 0) std::abort();  // a value the parsers let through
  jit.MarkStored(image, carried);
  return 0;
}
