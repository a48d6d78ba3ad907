// stacks_test.cpp - schema 6: call stacks stored once each (by the hash of
// their frames), counted per window; merges add up, rollups sum, drops take
// the counts and DeleteUnreferenced the stacks no window counts; a damaged
// blob is a clean kCorrupt; a schema 5 database migrates.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "libprofile/store/profile_db.h"
#include "libprofile/store/stack_codec.h"
#include "libprofile/store/stat_names.h"
#include "store/store_test_util.h"

using namespace lcpi;

namespace {

using lcpi::testing::Ok;
using lcpi::testing::OkVoid;
using lcpi::testing::OpenOk;
using lcpi::testing::RawExec;
using lcpi::testing::RawInt;

struct TempDir : lcpi::testing::TempDir {
  TempDir() : lcpi::testing::TempDir("lcpi-stacks-test") {}
};

StackRow Stack(std::vector<std::pair<uint32_t, uint64_t>> frames, uint64_t count, uint8_t end = 0) {
  StackRow r;
  r.frames = std::move(frames);
  r.count = count;
  r.end = end;
  return r;
}

MergeBatch Batch(int64_t epoch, std::vector<StackRow> stacks) {
  MergeBatch b;
  b.epoch = epoch;
  b.images.push_back({"build-id:aa", "/bin/prog", ImageKind::kUser});
  b.images.push_back({"kernel:bb", "[kernel.kallsyms]", ImageKind::kKernel});
  b.events.push_back({"cycles", "cpu-clock", 1000});
  b.stacks = std::move(stacks);
  return b;
}

// Total samples per stack of `epochs`, keyed by the leaf's offset.
std::map<uint64_t, uint64_t> ByLeaf(ProfileDb& db, const EpochSet& epochs) {
  std::map<uint64_t, uint64_t> out;
  for (const StoredStack& s : Ok(db.Stacks(epochs))) out[s.frames.front().second] += s.count;
  return out;
}

}  // namespace

TEST_CASE("a stack's blob round-trips, damage is kCorrupt") {
  std::vector<StackFrame> frames = {{1, 0}, {2, UINT64_MAX}, {INT64_MAX, 0x401000}};
  std::string blob = EncodeStack(1, frames);
  auto back = Ok(DecodeStack(blob));
  CHECK(back.first == 1);
  CHECK(back.second == frames);
  CHECK(StackId(blob) > 0);
  CHECK(StackId(blob) != StackId(EncodeStack(0, frames)));
  for (std::string bad : {std::string(), std::string(1, '\0'), blob.substr(0, blob.size() - 1),
                          std::string("\0\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f\x01", 12)}) {
    auto d = DecodeStack(bad);
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().code() == Errc::kCorrupt);
  }
}

TEST_CASE("stacks are stored once and counted per window") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  int64_t e1 = Ok(db->CurrentEpoch());
  auto a = Stack({{0, 0x10}, {0, 0x20}, {0, 0x30}}, 3);
  auto b = Stack({{1, 0x99}, {0, 0x20}}, 2, 0);
  OkVoid(db->Merge(Batch(e1, {a, b})));
  OkVoid(db->Merge(Batch(e1, {a})));
  int64_t e2 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  OkVoid(db->Merge(Batch(e2, {a})));
  CHECK(RawInt(dir.File("p.db"), "SELECT count(*) FROM stacks") == 2);
  CHECK(ByLeaf(*db, EpochSet::Of({e1})) == std::map<uint64_t, uint64_t>{{0x10, 6}, {0x99, 2}});
  CHECK(ByLeaf(*db, EpochSet::All()) == std::map<uint64_t, uint64_t>{{0x10, 9}, {0x99, 2}});
  CHECK(ByLeaf(*db, EpochSet::From(e2)) == std::map<uint64_t, uint64_t>{{0x10, 3}});
  // Frames come back in order, leaf first, by the images' database ids.
  for (const StoredStack& s : Ok(db->Stacks(EpochSet::Of({e2})))) {
    REQUIRE(s.frames.size() == 3);
    CHECK(s.frames[2].second == 0x30);
  }

  SECTION("a rollup sums, a drop takes the counts, DeleteUnreferenced the stacks") {
    int64_t e3 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
    (void)e3;
    OkVoid(db->MergeEpochs({e1, e2}));
    CHECK(ByLeaf(*db, EpochSet::Of({e1})) == std::map<uint64_t, uint64_t>{{0x10, 9}, {0x99, 2}});
    OkVoid(db->DropEpochs({e1}));
    CHECK(Ok(db->Stacks(EpochSet::All())).empty());
    CHECK(RawInt(dir.File("p.db"), "SELECT count(*) FROM stacks") == 2);
    OkVoid(db->DeleteUnreferenced());
    CHECK(RawInt(dir.File("p.db"), "SELECT count(*) FROM stacks") == 0);
  }
  SECTION("a damaged blob is kCorrupt, not a crash") {
    db.reset();
    RawExec(dir.File("p.db"), "UPDATE stacks SET frames = x'00ff'");
    auto ro = OpenOk(dir.File("p.db"), DbMode::kReadOnly);
    auto s = ro->Stacks(EpochSet::All());
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code() == Errc::kCorrupt);
  }
}

TEST_CASE("a batch whose stack names no image of the batch is refused whole") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  int64_t e = Ok(db->CurrentEpoch());
  auto r = db->Merge(Batch(e, {Stack({{7, 0x10}}, 1)}));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::kInvalidArgument);
  r = db->Merge(Batch(e, {Stack({}, 1)}));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::kInvalidArgument);
}

TEST_CASE("a stack through a quarantined image is counted, not stored") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  int64_t e = Ok(db->CurrentEpoch());
  MergeBatch b = Batch(e, {Stack({{0, 0x10}, {2, 0x20}}, 4), Stack({{0, 0x10}}, 1)});
  b.images.push_back({"", "/bad", ImageKind::kUser});  // no identity: quarantined
  OkVoid(db->Merge(b));
  CHECK(ByLeaf(*db, EpochSet::All()) == std::map<uint64_t, uint64_t>{{0x10, 1}});
  CHECK(Ok(db->Stats(EpochSet::All())).at(kStacksQuarantinedStat) == 4);  // its samples
}

TEST_CASE("a schema 5 database migrates to stacks, which a reader cannot do") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  {
    auto db = OpenOk(path);
    OkVoid(db->Merge(Batch(Ok(db->CurrentEpoch()), {})));
  }
  RawExec(path, lcpi::testing::kUndoSchema6);
  {
    // A reader of this build cannot migrate: it asks for lcpid.
    auto ro = ProfileDb::Open(path, DbMode::kReadOnly);
    REQUIRE_FALSE(ro.has_value());
    CHECK(ro.error().code() == Errc::kUnsupported);
  }
  auto db = OpenOk(path);
  CHECK(RawInt(path, "PRAGMA user_version") == ProfileDb::LatestSchemaVersion());
  CHECK(Ok(db->Stacks(EpochSet::All())).empty());
  OkVoid(db->Merge(Batch(Ok(db->CurrentEpoch()), {Stack({{0, 1}}, 1)})));
  CHECK(Ok(db->Stacks(EpochSet::All())).size() == 1);
}
