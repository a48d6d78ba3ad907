// make_seeds.cpp - writes the seed inputs kept in fuzz/corpus/: valid and
// near-valid overflow buffers for fuzz_kmod_buffer, and small lcpi databases
// (page size 512, rollback journal, so each is a few KiB) for
// fuzz_profile_db. The ELF seeds are built by scripts/fuzz.sh --seeds with
// the C compiler. Usage: fuzz_make_seeds CORPUS_DIR (fuzz/corpus).
#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lcpi_abi.h"
#include "libprofile/store/profile_db.h"

namespace {

void Write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) std::fprintf(stderr, "cannot write %s\n", path.c_str());
}

// One input of fuzz_kmod_buffer: a byte choosing nr_cpus - 1, then a buffer
// from `cpu` with `n` records.
std::vector<uint8_t> KmodBuffer(uint8_t cpus_minus_one, uint32_t cpu, uint32_t n) {
  lcpi_buffer_header h{};
  h.magic = LCPI_BUFFER_MAGIC;
  h.version = LCPI_ABI_VERSION;
  h.header_size = sizeof(h);
  h.cpu = cpu;
  h.nr_records = n;
  h.seq = 3;
  h.t_first = 1000;
  h.t_last = 2000;
  h.dropped = 1;
  std::vector<uint8_t> out(1 + sizeof(h) + n * sizeof(lcpi_record));
  out[0] = cpus_minus_one;
  std::memcpy(out.data() + 1, &h, sizeof(h));
  for (uint32_t i = 0; i < n; i++) {
    lcpi_record r{};
    r.pc = 0xffffffff81000000ull + i * 4;
    r.pid = i % 2 ? 0 : 1234;
    r.count = static_cast<uint16_t>(i + 1);
    r.event = static_cast<uint8_t>(i % LCPI_MAX_EVENTS);
    r.flags = i % 2 ? LCPI_RECORD_KERNEL : 0;
    std::memcpy(out.data() + 1 + sizeof(h) + i * sizeof(r), &r, sizeof(r));
  }
  return out;
}

bool Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) == SQLITE_OK) return true;
  std::fprintf(stderr, "%s: %s\n", sql, err ? err : "?");
  sqlite3_free(err);
  return false;
}

// A small lcpi database with two epochs, images, events, counts, processes,
// symbols and stats; then shrunk to 512-byte pages and a rollback journal.
bool ProfileDbSeed(const std::string& path) {
  std::filesystem::remove(path);
  {
    auto db = lcpi::ProfileDb::Open(path, lcpi::DbMode::kReadWrite);
    if (!db) return false;
    for (int round = 0; round < 2; round++) {
      auto epoch = (*db)->CurrentEpoch();
      if (!epoch) return false;
      lcpi::MergeBatch b;
      b.epoch = *epoch;
      b.images = {{"build-id:0123456789abcdef", "/usr/bin/app", lcpi::ImageKind::kUser},
                  {"kernel:feedface", "[kernel]", lcpi::ImageKind::kKernel}};
      b.events = {{"cycles", "cpu-clock", 100000}, {"imiss", "cpu-clock", 50000}};
      b.counts = {{0, 0, 0x1130, 10}, {0, 1, 0x1134, 3}, {1, 0, 0x42, 5}};
      b.processes = {{77, "app", 0, 0, 10}, {0, "swapper", 1, 0, 5}};
      b.symbols = {{1, 0x40, 0x20, "do_idle"}};
      b.stats = {{"samples", 18}, {"lost", 1}};
      if (!(*db)->Merge(b)) return false;
      if (round == 0 && !(*db)->NewEpoch(std::string("before"))) return false;
    }
  }
  for (const char* suffix : {"-wal", "-shm"}) std::filesystem::remove(path + suffix);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return false;
  bool ok = Exec(db, "PRAGMA journal_mode=DELETE") && Exec(db, "PRAGMA page_size=512") &&
            Exec(db, "VACUUM");
  sqlite3_close(db);
  return ok;
}

// Another application's SQLite file: the reader must call it kNotADatabase.
bool ForeignDbSeed(const std::string& path) {
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return false;
  bool ok = Exec(db, "PRAGMA page_size=512") && Exec(db, "PRAGMA application_id=1234") &&
            Exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)") &&
            Exec(db, "INSERT INTO t(b) VALUES('x'),('y')");
  sqlite3_close(db);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::string kmod = dir + "/fuzz_kmod_buffer";
  const std::string pdb = dir + "/fuzz_profile_db";
  std::filesystem::create_directories(kmod);
  std::filesystem::create_directories(pdb);
  Write(kmod + "/seed-empty", KmodBuffer(0, 0, 0));
  Write(kmod + "/seed-3-records", KmodBuffer(1, 1, 3));
  Write(kmod + "/seed-9-records", KmodBuffer(3, 2, 9));
  bool ok = ProfileDbSeed(pdb + "/seed-lcpi.db") && ForeignDbSeed(pdb + "/seed-foreign.db");
  Write(pdb + "/seed-empty", {});
  return ok ? 0 : 1;
}
