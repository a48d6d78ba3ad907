// merge_bench.cpp - (c) ProfileDb::Merge against the number of distinct
// (image, offset) entries: a batch of `entries` counts over 100 images and
// one event, with 50 process rows and two stats, merged into a fresh
// database (WAL, as lcpid opens it); then the same keys merged again, which
// turns every row into an update. The database's size on disk is taken after
// closing it (SQLite checkpoints the WAL into the file on the last close).
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <random>

#include "bench/daemon/daemon_bench.h"
#include "libprofile/store/profile_db.h"

namespace lcpi::bench {
namespace {

constexpr uint32_t kImages = 100;

uint64_t FileBytes(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

MergeBatch MakeBatch(int64_t epoch, uint64_t entries, uint64_t seed) {
  MergeBatch b;
  b.epoch = epoch;
  for (uint32_t i = 0; i < kImages; i++)
    b.images.push_back({"build-id:bench-" + std::to_string(i),
                        "/usr/lib/bench" + std::to_string(i) + ".so", ImageKind::kUser});
  b.events.push_back({"cycles", "cpu-clock", 200000});
  std::mt19937_64 rng(seed);
  b.counts.reserve(entries);
  for (uint64_t k = 0; k < entries; k++)  // distinct keys: offset grows per image
    b.counts.push_back(
        {static_cast<uint32_t>(k % kImages), 0, (k / kImages) * 4 + 0x1000, 1 + rng() % 1000});
  for (uint32_t p = 0; p < 50; p++)
    b.processes.push_back({1000 + p, "bench", p % kImages, 0, 1 + rng() % 100000});
  b.stats = {{"attributed", 1000}, {"unknown", 3}};
  return b;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Expected<MergeResult> RunMergeBench(uint64_t entries, const std::string& dir) {
  std::string path = dir + "/merge-" + std::to_string(entries) + ".db";
  for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  MergeResult r;
  r.entries = entries;
  {
    auto db = ProfileDb::Open(path, DbMode::kReadWrite);
    if (!db) return db.error();
    auto epoch = (*db)->CurrentEpoch();
    if (!epoch) return epoch.error();
    MergeBatch first = MakeBatch(*epoch, entries, 1);
    auto start = std::chrono::steady_clock::now();
    if (auto m = (*db)->Merge(first); !m) return m.error();
    r.first_s = Seconds(start);
    MergeBatch again = MakeBatch(*epoch, entries, 2);  // same keys, new counts
    start = std::chrono::steady_clock::now();
    if (auto m = (*db)->Merge(again); !m) return m.error();
    r.repeat_s = Seconds(start);
  }
  r.bytes = FileBytes(path) + FileBytes(path + "-wal");
  r.bytes_per_entry = double(r.bytes) / double(entries);
  for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  return r;
}

}  // namespace lcpi::bench
