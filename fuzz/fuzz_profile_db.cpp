// fuzz_profile_db.cpp - fuzz target for the profile database reader: the
// input is a whole database file, as a tool might find it (damaged by a
// crash, truncated, replaced by garbage, or another application's SQLite
// file). It is copied to a temporary file and opened read-only, as the tools
// open it, and every query ProfileDb offers runs on it; then a copy is opened
// read-write, as lcpid opens it, and one small merge and a new epoch are
// written. Each step must answer or return an Error (kNotADatabase,
// kCorrupt, kNewerSchema, ...), never crash, hang or leak.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "libprofile/store/profile_db.h"

namespace {

// One directory for the process; each input overwrites the same file. The
// path is kept in a buffer that outlives every static destructor, as the
// exit handler that removes the directory runs after them.
char g_dir[4096];

const char* Dir() {
  if (g_dir[0] == 0) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "lcpi-fuzz-db-XXXXXX").string();
    if (tmpl.size() >= sizeof g_dir || mkdtemp(tmpl.data()) == nullptr) std::abort();
    std::memcpy(g_dir, tmpl.c_str(), tmpl.size() + 1);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(g_dir, ec);
    });
  }
  return g_dir;
}

std::string WriteInput(const uint8_t* data, size_t size) {
  const std::string path = std::string(Dir()) + "/profile.db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(path + suffix);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) std::abort();
  return path;
}

// Every read-only query, over every epoch, image and event the file names
// (a few of each: a hostile file may name millions).
void QueryAll(lcpi::ProfileDb& db) {
  (void)db.CurrentEpoch();
  auto epochs = db.ListEpochs();
  auto images = db.ListImages();
  auto events = db.ListEvents();
  (void)db.FindEpoch("1");
  (void)db.FindEpoch("before-upgrade");
  (void)db.ProcessTotals(lcpi::kAllEpochs);
  (void)db.Stats(lcpi::kAllEpochs);
  (void)db.ImageTotals(lcpi::kAllEpochs);
  if (epochs) {
    size_t n = 0;
    for (const lcpi::EpochInfo& e : *epochs) {
      if (n++ >= 4) break;
      (void)db.ImageTotals(e.id);
      (void)db.ProcessTotals(e.id);
      (void)db.Stats(e.id);
      if (e.tag) (void)db.FindEpoch(*e.tag);
    }
  }
  if (images) {
    size_t n = 0;
    for (const lcpi::ImageInfo& im : *images) {
      if (n++ >= 4) break;
      (void)db.Symbols(im.id);
      if (!events) continue;
      size_t m = 0;
      for (const lcpi::EventInfo& ev : *events) {
        if (m++ >= 4) break;
        (void)db.OffsetCounts(lcpi::kAllEpochs, im.id, ev.id, 0, UINT64_MAX);
        (void)db.OffsetCounts(1, im.id, ev.id, 0x1000, 0x2000);
      }
    }
  }
  if (db.BeginSnapshot()) {
    (void)db.ImageTotals(lcpi::kAllEpochs);
    (void)db.EndSnapshot();
  }
  (void)db.CheckIntegrity();
}

// What lcpid does with the file: one merge and a new epoch.
void WriteSome(lcpi::ProfileDb& db) {
  auto epoch = db.CurrentEpoch();
  if (!epoch) return;
  lcpi::MergeBatch batch;
  batch.epoch = *epoch;
  batch.images.push_back({"build-id:00112233", "/usr/bin/fuzz", lcpi::ImageKind::kUser});
  batch.events.push_back({"cycles", "cpu-clock", 10000});
  batch.counts.push_back({0, 0, 0x1234, 7});
  batch.processes.push_back({42, "fuzz", 0, 0, 7});
  batch.symbols.push_back({0, 0x1200, 0x100, "main"});
  batch.stats.push_back({"samples", 7});
  if (!db.Merge(batch)) return;
  (void)db.NewEpoch(std::string("fuzz-tag"));
  (void)db.ImageTotals(lcpi::kAllEpochs);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;  // SQLite's own limits are not under test
  std::string path = WriteInput(data, size);
  if (auto db = lcpi::ProfileDb::Open(path, lcpi::DbMode::kReadOnly)) QueryAll(**db);

  path = WriteInput(data, size);
  if (auto db = lcpi::ProfileDb::Open(path, lcpi::DbMode::kReadWrite)) {
    (*db)->SetBusyTimeout(std::chrono::milliseconds(0));
    WriteSome(**db);
    QueryAll(**db);
  }
  return 0;
}
