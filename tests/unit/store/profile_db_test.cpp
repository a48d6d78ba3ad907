// profile_db_test.cpp - tests of the profile database (libprofile/store/profile_db.h):
// round trips starting from the empty database, merge arithmetic, epochs, the
// specific error for each kind of bad file, read-only use, snapshots, lock
// contention, and a child SIGKILLed mid-merge whose database must hold whole
// merges only.
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "libprofile/store/profile_db.h"
#include "store/store_test_util.h"

namespace fs = std::filesystem;
using lcpi::DbMode;
using lcpi::Errc;
using lcpi::ProfileDb;
using lcpi::testing::RawExec;
using lcpi::testing::RawInt;

namespace {

// A fresh directory under $TMPDIR, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "lcpi-db-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) FAIL("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::unique_ptr<ProfileDb> OpenOk(const std::string& path, DbMode mode = DbMode::kReadWrite) {
  auto db = ProfileDb::Open(path, mode);
  INFO((db ? std::string("ok") : db.error().ToString()));
  REQUIRE(db.has_value());
  return std::move(*db);
}

// "ok" or the error, so that a failed check shows why.
template <class T>
std::string Why(const lcpi::Expected<T>& e) {
  return e.has_value() ? "ok" : e.error().ToString();
}

template <class T>
Errc ErrorOf(const lcpi::Expected<T>& e) {
  INFO("expected an error, got success");
  REQUIRE_FALSE(e.has_value());
  return e.error().code();
}

// Runs one SQL statement on a plain SQLite connection (the foreign side).
std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

// The count a test batch stores at an offset: not constant, so a row that was
// merged a different number of times than its neighbours shows.
uint64_t BaseCount(uint64_t offset) { return 1 + offset % 7; }

// Two images (user program, kernel), two events, `rows` offsets per image and
// event, a few processes, statistics and kernel symbols.
lcpi::MergeBatch MakeBatch(int64_t epoch, int rows = 50) {
  lcpi::MergeBatch b;
  b.epoch = epoch;
  b.images = {{"build-id:00aa11bb", "/usr/bin/app", lcpi::ImageKind::kUser},
              {"kernel:deadbeef", "[kernel]", lcpi::ImageKind::kKernel}};
  b.events = {{"cycles", "cpu-clock", 1000000}, {"imiss", "cpu-clock", 5000000}};
  for (uint32_t image = 0; image < 2; ++image) {
    for (uint32_t event = 0; event < 2; ++event) {
      for (int i = 0; i < rows; ++i) {
        uint64_t offset = 0x1000 + 4 * static_cast<uint64_t>(i);
        b.counts.push_back({image, event, offset, BaseCount(offset)});
      }
    }
  }
  b.processes = {{100, "app", 0, 0, 10}, {100, "app", 1, 0, 3}, {200, "worker", 0, 1, 7}};
  b.symbols = {{1, 0x1000, 0x40, "schedule"}, {1, 0x1040, 0x80, "do_idle"}};
  b.stats = {{"samples", 1000}, {"lost", 2}};
  return b;
}

// Sum of the counts of `b` per (image identity, event name).
std::map<std::pair<std::string, std::string>, uint64_t> BatchTotals(const lcpi::MergeBatch& b) {
  std::map<std::pair<std::string, std::string>, uint64_t> t;
  for (const auto& c : b.counts) t[{b.images[c.image].identity, b.events[c.event].name}] += c.count;
  return t;
}

// The database's totals per (image identity, event name) for one epoch.
std::map<std::pair<std::string, std::string>, uint64_t> DbTotals(ProfileDb& db, int64_t epoch) {
  auto images = db.ListImages();
  auto events = db.ListEvents();
  auto totals = db.ImageTotals(epoch);
  REQUIRE(images);
  REQUIRE(events);
  REQUIRE(totals);
  std::map<int64_t, std::string> image_name, event_name;
  for (const auto& i : *images) image_name[i.id] = i.identity;
  for (const auto& e : *events) event_name[e.id] = e.name;
  std::map<std::pair<std::string, std::string>, uint64_t> t;
  for (const auto& row : *totals)
    t[{image_name[row.image_id], event_name[row.event_id]}] = row.count;
  return t;
}

std::map<std::pair<std::string, std::string>, uint64_t> Times(
    std::map<std::pair<std::string, std::string>, uint64_t> t, uint64_t k) {
  for (auto& [key, v] : t) v *= k;
  if (k == 0) t.clear();
  return t;
}

int64_t ImageId(ProfileDb& db, const std::string& identity) {
  auto images = db.ListImages();
  REQUIRE(images);
  for (const auto& i : *images) {
    if (i.identity == identity) return i.id;
  }
  FAIL("no image " << identity);
  return 0;
}

int64_t EventId(ProfileDb& db, const std::string& name) {
  auto events = db.ListEvents();
  REQUIRE(events);
  for (const auto& e : *events) {
    if (e.name == name) return e.id;
  }
  FAIL("no event " << name);
  return 0;
}

// A database holding a few merges, closed (and so checkpointed) on return.
std::string MakeFilledDb(const TempDir& dir, const std::string& name) {
  std::string path = dir.File(name);
  auto db = OpenOk(path);
  auto epoch = db->CurrentEpoch();
  REQUIRE(epoch);
  REQUIRE(db->Merge(MakeBatch(*epoch, 400)));
  REQUIRE(db->NewEpoch("second"));
  auto second = db->CurrentEpoch();
  REQUIRE(second);
  REQUIRE(db->Merge(MakeBatch(*second, 400)));
  return path;
}

}  // namespace

TEST_CASE("an empty database round-trips", "[profile_db]") {
  TempDir dir;
  std::string path = dir.File("lcpi.db");
  {
    auto db = OpenOk(path);
    CHECK(db->path() == path);
    CHECK(ProfileDb::LatestSchemaVersion() >= 1);
    CHECK(db->ListEpochs()->empty());
    CHECK(db->ListImages()->empty());
    CHECK(db->ListEvents()->empty());
    CHECK(db->ImageTotals(lcpi::kAllEpochs)->empty());
    CHECK(db->ProcessTotals(lcpi::kAllEpochs)->empty());
    CHECK(db->Stats(lcpi::kAllEpochs)->empty());
    CHECK(db->Symbols(1)->empty());
    CHECK(Why(db->CheckIntegrity()) == "ok");
  }
  CHECK(RawInt(path, "PRAGMA application_id") == lcpi::kProfileDbApplicationId);
  CHECK(RawInt(path, "PRAGMA user_version") == ProfileDb::LatestSchemaVersion());
  CHECK(RawInt(path, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'") == 1);

  // Read-only sees the empty database and has no epoch to offer.
  {
    auto ro = OpenOk(path, DbMode::kReadOnly);
    CHECK(ErrorOf(ro->CurrentEpoch()) == Errc::kNotFound);
  }
  // Reopening read-write migrates nothing and creates epoch 1 on demand, once.
  {
    auto db = OpenOk(path);
    CHECK(*db->CurrentEpoch() == 1);
    CHECK(*db->CurrentEpoch() == 1);
    lcpi::MergeBatch empty;
    empty.epoch = 1;
    CHECK(db->Merge(empty));
  }
  auto db = OpenOk(path, DbMode::kReadOnly);
  auto epochs = db->ListEpochs();
  REQUIRE(epochs->size() == 1);
  CHECK((*epochs)[0].id == 1);
  CHECK_FALSE((*epochs)[0].tag.has_value());
  CHECK_FALSE((*epochs)[0].ended.has_value());
  CHECK(db->ImageTotals(1)->empty());
}

TEST_CASE("merges add up, per epoch, with images interned once", "[profile_db]") {
  TempDir dir;
  auto db = OpenOk(dir.File("lcpi.db"));
  int64_t e1 = *db->CurrentEpoch();
  lcpi::MergeBatch batch = MakeBatch(e1);
  auto once = BatchTotals(batch);

  REQUIRE(db->Merge(batch));
  CHECK(DbTotals(*db, e1) == once);
  REQUIRE(db->Merge(batch));
  CHECK(DbTotals(*db, e1) == Times(once, 2));

  // Interned by identity and name: two merges, still two of each.
  CHECK(db->ListImages()->size() == 2);
  CHECK(db->ListEvents()->size() == 2);

  // Per-offset counts, and [lo, hi) bounds.
  int64_t app = ImageId(*db, "build-id:00aa11bb");
  int64_t kernel = ImageId(*db, "kernel:deadbeef");
  int64_t cycles = EventId(*db, "cycles");
  auto offsets = db->OffsetCounts(e1, app, cycles, 0x1004, 0x1010);
  REQUIRE(offsets);
  REQUIRE(offsets->size() == 3);
  CHECK((*offsets)[0].offset == 0x1004);
  CHECK((*offsets)[0].count == 2 * BaseCount(0x1004));
  CHECK((*offsets)[2].offset == 0x100c);
  CHECK(db->OffsetCounts(e1, app, cycles, 0, UINT64_MAX)->size() == 50);

  // Process counts and stats add; symbols are stored once.
  auto procs = db->ProcessTotals(e1);
  REQUIRE(procs);
  REQUIRE(procs->size() == 3);
  CHECK((*procs)[0].pid == 100);
  CHECK((*procs)[0].comm == "app");
  CHECK((*procs)[0].image_id == app);
  CHECK((*procs)[0].count == 20);
  auto stats = db->Stats(e1);
  REQUIRE(stats);
  CHECK((*stats)["samples"] == 2000);
  CHECK((*stats)["lost"] == 4);
  auto symbols = db->Symbols(kernel);
  REQUIRE(symbols);
  REQUIRE(symbols->size() == 2);
  CHECK((*symbols)[0].name == "schedule");
  CHECK((*symbols)[1].offset == 0x1040);
  CHECK((*symbols)[1].size == 0x80);
  CHECK(db->Symbols(app)->empty());

  // A new epoch keeps its counts apart; "all epochs" sums them.
  auto e2 = db->NewEpoch(std::nullopt);
  REQUIRE(e2);
  CHECK(*e2 == e1 + 1);
  batch.epoch = *e2;
  REQUIRE(db->Merge(batch));
  CHECK(DbTotals(*db, e1) == Times(once, 2));
  CHECK(DbTotals(*db, *e2) == once);
  CHECK(DbTotals(*db, lcpi::kAllEpochs) == Times(once, 3));
  CHECK((*db->Stats(lcpi::kAllEpochs))["samples"] == 3000);
  CHECK((*db->OffsetCounts(lcpi::kAllEpochs, app, cycles, 0x1000, 0x1001))[0].count ==
        3 * BaseCount(0x1000));
  CHECK(db->ProcessTotals(lcpi::kAllEpochs)->front().count == 30);

  // The same content under a new path is the same image; the path follows.
  batch.images[0].path = "/opt/app";
  REQUIRE(db->Merge(batch));
  CHECK(db->ListImages()->size() == 2);
  CHECK(db->ListImages()->front().path == "/opt/app");
  CHECK(Why(db->CheckIntegrity()) == "ok");
}

TEST_CASE("a bad batch is refused whole", "[profile_db]") {
  TempDir dir;
  auto db = OpenOk(dir.File("lcpi.db"));
  int64_t epoch = *db->CurrentEpoch();

  lcpi::MergeBatch b = MakeBatch(epoch);
  b.counts.push_back({7, 0, 0, 1});  // no image 7 in the batch
  CHECK(ErrorOf(db->Merge(b)) == Errc::kInvalidArgument);

  // (A row whose values are out of range sets aside only its image's rows:
  // merge_quarantine_test.)
  b = MakeBatch(epoch);
  b.events[0].period = UINT64_MAX;
  CHECK(ErrorOf(db->Merge(b)) == Errc::kInvalidArgument);

  b = MakeBatch(0);
  CHECK(ErrorOf(db->Merge(b)) == Errc::kInvalidArgument);

  b = MakeBatch(epoch + 41);
  CHECK(ErrorOf(db->Merge(b)) == Errc::kNotFound);

  // Nothing of any of them was written.
  CHECK(db->ListImages()->empty());
  CHECK(db->ImageTotals(lcpi::kAllEpochs)->empty());
  CHECK(db->Stats(lcpi::kAllEpochs)->empty());
}

TEST_CASE("epochs are found by id and by tag", "[profile_db]") {
  TempDir dir;
  auto db = OpenOk(dir.File("lcpi.db"));
  int64_t first = *db->CurrentEpoch();
  auto tagged = db->NewEpoch("before-upgrade");
  REQUIRE(tagged);
  CHECK(*tagged == first + 1);
  CHECK(*db->CurrentEpoch() == *tagged);

  CHECK(*db->FindEpoch("before-upgrade") == *tagged);
  CHECK(*db->FindEpoch(std::to_string(first)) == first);
  CHECK(*db->FindEpoch(std::to_string(*tagged)) == *tagged);

  auto missing = db->FindEpoch("no-such-tag");
  CHECK(ErrorOf(missing) == Errc::kNotFound);
  CHECK(missing.error().message().find("no-such-tag") != std::string::npos);
  CHECK(ErrorOf(db->FindEpoch("999")) == Errc::kNotFound);
  CHECK(ErrorOf(db->FindEpoch("")) == Errc::kNotFound);

  // Tags are unique and never look like ids.
  CHECK(ErrorOf(db->NewEpoch("before-upgrade")) == Errc::kInvalidArgument);
  CHECK(ErrorOf(db->NewEpoch("123")) == Errc::kInvalidArgument);
  CHECK(ErrorOf(db->NewEpoch("")) == Errc::kInvalidArgument);
  CHECK(*db->CurrentEpoch() == *tagged);

  auto epochs = db->ListEpochs();
  REQUIRE(epochs->size() == 2);
  CHECK((*epochs)[0].ended.has_value());
  CHECK(*(*epochs)[0].ended >= (*epochs)[0].started);
  CHECK((*epochs)[1].tag == std::optional<std::string>("before-upgrade"));
  CHECK_FALSE((*epochs)[1].ended.has_value());
}

TEST_CASE("a file that is not a database is refused, untouched", "[profile_db]") {
  TempDir dir;
  std::string path = dir.File("garbage.db");
  std::mt19937 rng(42);
  std::string bytes(8192, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  WriteBytes(path, bytes);

  for (DbMode mode : {DbMode::kReadWrite, DbMode::kReadOnly}) {
    auto db = ProfileDb::Open(path, mode);
    CHECK(ErrorOf(db) == Errc::kNotADatabase);
    CHECK(db.error().message().find(path) != std::string::npos);
  }
  CHECK(ReadBytes(path) == bytes);

  // A directory is not one either.
  CHECK(ErrorOf(ProfileDb::Open(dir.path().string(), DbMode::kReadOnly)) == Errc::kNotADatabase);
}

TEST_CASE("another application's SQLite database is refused, untouched", "[profile_db]") {
  TempDir dir;
  std::string path = dir.File("other.db");
  RawExec(path, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello')");
  std::string before = ReadBytes(path);

  CHECK(ErrorOf(ProfileDb::Open(path, DbMode::kReadWrite)) == Errc::kNotADatabase);
  CHECK(ErrorOf(ProfileDb::Open(path, DbMode::kReadOnly)) == Errc::kNotADatabase);
  CHECK(ReadBytes(path) == before);  // not migrated, not switched to WAL

  // Same with an application id of its own and no tables.
  std::string tagged = dir.File("tagged.db");
  RawExec(tagged, "PRAGMA application_id = 1234");
  CHECK(ErrorOf(ProfileDb::Open(tagged, DbMode::kReadWrite)) == Errc::kNotADatabase);
}

TEST_CASE("a newer schema is refused", "[profile_db]") {
  TempDir dir;
  std::string path = dir.File("lcpi.db");
  OpenOk(path).reset();
  RawExec(path, "PRAGMA user_version = " + std::to_string(ProfileDb::LatestSchemaVersion() + 1));
  for (DbMode mode : {DbMode::kReadWrite, DbMode::kReadOnly}) {
    auto db = ProfileDb::Open(path, mode);
    CHECK(ErrorOf(db) == Errc::kNewerSchema);
  }
  // An older one cannot be read without migrating it first.
  RawExec(path, "PRAGMA user_version = 0");
  CHECK(ErrorOf(ProfileDb::Open(path, DbMode::kReadOnly)) == Errc::kUnsupported);
}

TEST_CASE("missing files", "[profile_db]") {
  TempDir dir;
  CHECK(ErrorOf(ProfileDb::Open(dir.File("absent.db"), DbMode::kReadOnly)) == Errc::kNotFound);
  CHECK_FALSE(fs::exists(dir.File("absent.db")));
  CHECK(ErrorOf(ProfileDb::Open(dir.File("no/such/dir.db"), DbMode::kReadWrite)) ==
        Errc::kNotFound);
  CHECK(ErrorOf(ProfileDb::Open("", DbMode::kReadWrite)) == Errc::kInvalidArgument);
}

// Opens a damaged file both ways and runs every query on it. Returns the
// error codes seen; the test passes only if it got here without crashing.
std::vector<Errc> Exercise(const std::string& path) {
  std::vector<Errc> seen;
  auto note = [&](const auto& result) {
    if (!result.has_value()) seen.push_back(result.error().code());
  };
  for (DbMode mode : {DbMode::kReadOnly, DbMode::kReadWrite}) {
    auto db = ProfileDb::Open(path, mode);
    note(db);
    if (!db) continue;
    note((*db)->CheckIntegrity());
    note((*db)->ListEpochs());
    note((*db)->ListImages());
    note((*db)->ListEvents());
    note((*db)->ImageTotals(lcpi::kAllEpochs));
    note((*db)->ImageTotals(1));
    note((*db)->OffsetCounts(lcpi::kAllEpochs, 1, 1, 0, UINT64_MAX));
    note((*db)->ProcessTotals(lcpi::kAllEpochs));
    note((*db)->Symbols(2));
    note((*db)->Stats(lcpi::kAllEpochs));
    note((*db)->FindEpoch("second"));
    if (mode == DbMode::kReadWrite) note((*db)->Merge(MakeBatch(1, 20)));
  }
  return seen;
}

bool Contains(const std::vector<Errc>& v, Errc e) {
  return std::find(v.begin(), v.end(), e) != v.end();
}

TEST_CASE("a damaged database gives a clean error", "[profile_db]") {
  TempDir dir;
  std::string good = ReadBytes(MakeFilledDb(dir, "good.db"));
  REQUIRE(good.size() > 4 * 4096);
  int n = 0;
  auto damaged = [&](const std::string& bytes) {
    std::string path = dir.File("bad" + std::to_string(n++) + ".db");
    WriteBytes(path, bytes);
    return path;
  };

  SECTION("truncated") {
    for (size_t keep : {good.size() / 2, good.size() / 3, size_t{4096 + 100}, size_t{50}}) {
      auto seen = Exercise(damaged(good.substr(0, keep)));
      INFO("kept " << keep << " bytes");
      CHECK((Contains(seen, Errc::kCorrupt) || Contains(seen, Errc::kNotADatabase)));
    }
  }
  SECTION("bad magic") {
    std::string bytes = good;
    bytes[0] ^= 0x20;
    auto db = ProfileDb::Open(damaged(bytes), DbMode::kReadOnly);
    CHECK(ErrorOf(db) == Errc::kNotADatabase);
  }
  SECTION("b-tree page headers overwritten") {
    for (size_t page = 1; page < good.size() / 4096; ++page) {
      std::string bytes = good;
      for (size_t i = 0; i < 12; ++i) bytes[page * 4096 + i] = static_cast<char>(0xff);
      auto seen = Exercise(damaged(bytes));
      INFO("page " << page + 1);
      CHECK(Contains(seen, Errc::kCorrupt));
    }
  }
  SECTION("random byte flips") {
    std::mt19937 rng(7);
    for (int round = 0; round < 40; ++round) {
      std::string bytes = good;
      for (int k = 0; k < 4; ++k) bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
      auto seen = Exercise(damaged(bytes));
      for (Errc e : seen) {
        // Whatever the flip hit, the answer is one of these, never a crash.
        CHECK((e == Errc::kCorrupt || e == Errc::kNotADatabase || e == Errc::kNewerSchema ||
               e == Errc::kUnsupported || e == Errc::kInvalidArgument || e == Errc::kNotFound));
      }
    }
  }
}

TEST_CASE("an image of a kind lcpi does not know is a corrupt database", "[profile_db]") {
  // Kinds are an enum in memory (nothing else can be merged); the file is
  // another matter: a row written past the schema's CHECK must be refused
  // when read, not passed on as some kind.
  TempDir dir;
  const std::string path = MakeFilledDb(dir, "kinds.db");
  RawExec(path,
          "PRAGMA ignore_check_constraints = ON; "
          "UPDATE images SET kind = 'firmware' WHERE id = (SELECT MIN(id) FROM images)");
  auto db = ProfileDb::Open(path, DbMode::kReadOnly);
  REQUIRE(db);
  auto images = (*db)->ListImages();
  REQUIRE_FALSE(images);
  CHECK(images.error().code() == Errc::kCorrupt);
  CHECK(images.error().message().find("'firmware'") != std::string::npos);
}

TEST_CASE("read-only mode reads a file it cannot write, and refuses to write", "[profile_db]") {
  TempDir dir;
  std::string source = MakeFilledDb(dir, "source.db");
  fs::create_directory(dir.path() / "ro");
  std::string path = (dir.path() / "ro" / "lcpi.db").string();
  fs::copy_file(source, path);
  REQUIRE(chmod(path.c_str(), 0444) == 0);
  std::string before = ReadBytes(path);

  auto expected = [&] {
    auto db = OpenOk(source, DbMode::kReadOnly);
    return DbTotals(*db, lcpi::kAllEpochs);
  }();
  REQUIRE_FALSE(expected.empty());
  {
    auto db = OpenOk(path, DbMode::kReadOnly);
    CHECK(db->mode() == DbMode::kReadOnly);
    CHECK(DbTotals(*db, lcpi::kAllEpochs) == expected);
    CHECK(*db->FindEpoch("second") == 2);
    CHECK(*db->CurrentEpoch() == 2);
    CHECK(ErrorOf(db->Merge(MakeBatch(2))) == Errc::kPermission);
    CHECK(ErrorOf(db->NewEpoch("third")) == Errc::kPermission);
    CHECK(Why(db->CheckIntegrity()) == "ok");
  }
  CHECK(ReadBytes(path) == before);

  // As an unprivileged user, in a directory it cannot write (so no -shm can
  // be created): the way the tools run against a root-owned database.
  if (geteuid() == 0) {
    fs::remove(path + "-shm");
    fs::remove(path + "-wal");
    REQUIRE(chmod(dir.path().c_str(), 0755) == 0);
    REQUIRE(chmod((dir.path() / "ro").c_str(), 0755) == 0);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
      auto db = ProfileDb::Open(path, DbMode::kReadOnly);
      if (!db) {
        std::fprintf(stderr, "%s\n", db.error().ToString().c_str());
        _exit(11);
      }
      auto totals = (*db)->ImageTotals(lcpi::kAllEpochs);
      if (!totals || totals->size() != expected.size()) _exit(12);
      if (ProfileDb::Open(path, DbMode::kReadWrite).has_value()) _exit(13);
      // Beside the -wal and -shm lcpid leaves (root-owned, 0644): a normal open.
      if (!fs::exists(source + "-shm")) _exit(14);
      auto live = ProfileDb::Open(source, DbMode::kReadOnly);
      if (!live || !(*live)->ImageTotals(lcpi::kAllEpochs)) _exit(15);
      _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("a reader's snapshot holds while a writer commits", "[profile_db]") {
  TempDir dir;
  std::string path = dir.File("lcpi.db");
  auto writer = OpenOk(path);
  int64_t epoch = *writer->CurrentEpoch();
  lcpi::MergeBatch batch = MakeBatch(epoch);
  auto once = BatchTotals(batch);
  REQUIRE(writer->Merge(batch));

  auto reader = OpenOk(path, DbMode::kReadOnly);
  REQUIRE(reader->BeginSnapshot());
  CHECK(DbTotals(*reader, epoch) == once);
  // WAL: the reader does not block the writer, even with no busy timeout.
  writer->SetBusyTimeout(std::chrono::milliseconds(0));
  REQUIRE(writer->Merge(batch));
  CHECK((*writer->Stats(epoch))["samples"] == 2000);
  CHECK(DbTotals(*reader, epoch) == once);
  CHECK((*reader->Stats(epoch))["samples"] == 1000);
  CHECK(ErrorOf(reader->BeginSnapshot()) == Errc::kInvalidArgument);
  REQUIRE(reader->EndSnapshot());
  CHECK(DbTotals(*reader, epoch) == Times(once, 2));
  CHECK(ErrorOf(reader->EndSnapshot()) == Errc::kInvalidArgument);

  // A writer inside its own snapshot is refused rather than deadlocked.
  REQUIRE(writer->BeginSnapshot());
  CHECK(ErrorOf(writer->Merge(batch)) == Errc::kInvalidArgument);
  REQUIRE(writer->EndSnapshot());
}

TEST_CASE("a locked database gives kBusy, then merges once", "[profile_db]") {
  TempDir dir;
  std::string path = dir.File("lcpi.db");
  auto db = OpenOk(path);
  int64_t epoch = *db->CurrentEpoch();
  lcpi::MergeBatch batch = MakeBatch(epoch);

  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &other) == SQLITE_OK);
  REQUIRE(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);

  db->SetBusyTimeout(std::chrono::milliseconds(50));
  auto start = std::chrono::steady_clock::now();
  auto merged = db->Merge(batch);
  CHECK(ErrorOf(merged) == Errc::kBusy);
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(40));
  CHECK(ErrorOf(db->NewEpoch(std::nullopt)) == Errc::kBusy);

  REQUIRE(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(other);
  REQUIRE(db->Merge(batch));
  CHECK(DbTotals(*db, epoch) == BatchTotals(batch));
  CHECK((*db->Stats(epoch))["samples"] == 1000);
}

TEST_CASE("a writer killed mid-merge leaves whole merges only", "[profile_db][crash]") {
  TempDir dir;
  std::string path = dir.File("lcpi.db");
  int64_t epoch = 0;
  {
    auto db = OpenOk(path);
    epoch = *db->CurrentEpoch();
  }                                                       // no connection may cross fork()
  const lcpi::MergeBatch batch = MakeBatch(epoch, 2500);  // 10,000 counts
  const auto once = BatchTotals(batch);

  std::mt19937 rng(std::random_device{}());
  uint64_t last_k = 0;
  for (int round = 0; round < 8; ++round) {
    // The child reports each commit on a pipe. On even rounds the parent
    // waits for one before the random delay, so k must grow however slow the
    // machine (or sanitizer) is; on odd rounds the kill may land anywhere,
    // even before the first commit.
    int commits[2];
    REQUIRE(pipe(commits) == 0);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      close(commits[0]);
      auto db = ProfileDb::Open(path, DbMode::kReadWrite);
      if (!db) _exit(1);
      for (;;) {
        if (!(*db)->Merge(batch)) _exit(2);
        if (write(commits[1], "c", 1) != 1) _exit(3);
      }
    }
    close(commits[1]);
    if (round % 2 == 0) {
      pollfd pfd = {commits[0], POLLIN, 0};
      REQUIRE(poll(&pfd, 1, 60000) == 1);  // a minute: something is wrong
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 150));
    REQUIRE(kill(child, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    close(commits[0]);
    REQUIRE(WIFSIGNALED(status));  // the child did not stop on an error

    auto db = OpenOk(path);
    REQUIRE(Why(db->CheckIntegrity()) == "ok");
    // k merges happened: every row, in every table, is k times the batch's.
    auto stats = db->Stats(epoch);
    REQUIRE(stats);
    uint64_t k = static_cast<uint64_t>((*stats)["samples"] / 1000);
    INFO("round " << round << ": " << k << " merges");
    CHECK((*stats)["samples"] == static_cast<int64_t>(k * 1000));
    CHECK((*stats)["lost"] == static_cast<int64_t>(k * 2));
    CHECK(k >= last_k);
    last_k = k;
    CHECK(DbTotals(*db, epoch) == Times(once, k));
    if (k > 0) {
      auto offsets = db->OffsetCounts(epoch, ImageId(*db, "kernel:deadbeef"), EventId(*db, "imiss"),
                                      0, UINT64_MAX);
      REQUIRE(offsets);
      REQUIRE(offsets->size() == 2500);
      for (const auto& oc : *offsets) {
        if (oc.count != k * BaseCount(oc.offset))
          FAIL("offset " << oc.offset << " count " << oc.count);
      }
      CHECK(db->ProcessTotals(epoch)->front().count == 10 * k);
      CHECK(db->Symbols(ImageId(*db, "kernel:deadbeef"))->size() == 2);
    }
  }
  CHECK(last_k >= 4);  // every even round committed at least once
}

TEST_CASE("a version 1 database migrates: rows kept, JIT images and their names stored",
          "[profile_db]") {
  // Written as lcpi's first release wrote it: schema 001 only.
  TempDir dir;
  const std::string path = dir.File("v1.db");
  std::ifstream in(std::string(LCPI_SOURCE_DIR) + "/schema/001_initial.sql");
  std::stringstream v1;
  v1 << in.rdbuf();
  REQUIRE_FALSE(v1.str().empty());
  RawExec(path, v1.str() +
                    "INSERT INTO epochs VALUES (1, NULL, 1, NULL);"
                    "INSERT INTO images VALUES (1, 'build-id:ab', '/bin/prog', 'user', 1);"
                    "INSERT INTO images VALUES (2, 'kernel:cd', '[kernel.kallsyms]', 'kernel', 1);"
                    "INSERT INTO events VALUES (1, 'cycles', 'cpu-clock', 1000);"
                    "INSERT INTO counts VALUES (1, 1, 1, 16, 5), (1, 2, 1, 32, 7);"
                    "INSERT INTO symbols VALUES (2, 0, 'start_kernel', 64);"
                    "PRAGMA user_version = 1; PRAGMA application_id = 1279479881;");

  auto db = OpenOk(path);
  CHECK(RawInt(path, "PRAGMA user_version") == ProfileDb::LatestSchemaVersion());
  auto images = db->ListImages();
  REQUIRE(images);
  REQUIRE(images->size() == 2);
  CHECK((*images)[0].identity == "build-id:ab");
  CHECK((*images)[1].kind == lcpi::ImageKind::kKernel);
  CHECK(db->ImageTotals(1)->size() == 2);
  REQUIRE(db->Symbols(2)->size() == 1);

  lcpi::MergeBatch b;
  b.epoch = 1;
  b.images = {{"jit:boot:42:7", "[jit node 42]", lcpi::ImageKind::kJit}};
  b.events = {{"cycles", "cpu-clock", 1000}};
  b.counts = {{0, 0, 0x7f0000001010, 9}};
  b.symbols = {{0, 0x7f0000001000, 0x100, "JS:*hot app.js:1"}};
  INFO(Why(db->Merge(b)));
  REQUIRE(db->Merge(b));
  images = db->ListImages();
  REQUIRE(images->size() == 3);
  CHECK((*images)[2].kind == lcpi::ImageKind::kJit);
  auto syms = db->Symbols((*images)[2].id);
  REQUIRE(syms->size() == 1);
  CHECK((*syms)[0].name == "JS:*hot app.js:1");
  CHECK(db->CheckIntegrity());
  // The rebuilt table left no row referring to a missing image.
  CHECK(RawInt(path, "SELECT COUNT(*) FROM pragma_foreign_key_check") == 0);
}
