// pending_image_test.cpp - counts of an image still being identified on the
// lookups' thread (ImageTable::pending): TakeBatch holds them back, with the
// samples its statistics count, and a later batch carries them once the
// image has its identity; two files found to have one content are one image
// in a batch. Real parts: a LookupWorker, an ImageTable, a ProcessTracker
// and an ELF file without build-id (identified by content).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>

#include "aggregate_test_util.h"
#include "libprofile/aggregate/aggregator.h"
#include "test_files.h"

using lcpi::Aggregator;
using lcpi::FileMapping;
using lcpi::ImageTable;
using lcpi::LookupWorker;
using lcpi::ProcessTracker;
using lcpi::RecordBuffer;
using lcpi::testing::Cycles;
using lcpi::testing::TempDir;

namespace {

constexpr uint32_t kGonePid = 4000000;  // above any pid: found at its path

// /bin/true without its build-id at `path`: identified by its content.
FileMapping NoBuildId(const std::string& path, uint32_t pid, uint64_t start) {
  std::string cmd = "objcopy --remove-section=.note.gnu.build-id /bin/true " + path;
  REQUIRE(std::system(cmd.c_str()) == 0);
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  FileMapping m;
  m.pid = pid;
  m.start = start;
  m.end = start + 0x1000;
  m.path = path;
  m.dev = st.st_dev;
  m.ino = st.st_ino;
  return m;
}

RecordBuffer UserRecords(uint32_t pid, uint64_t pc, uint16_t count) {
  return lcpi::testing::Buffer({{pid, pc, count}});
}

int64_t StatOf(const lcpi::MergeBatch& b, const std::string& name) {
  int64_t v = 0;
  for (const auto& [n, value] : b.stats) v += n == name ? value : 0;
  return v;
}

std::map<std::string, uint64_t> ByIdentity(const lcpi::MergeBatch& b) {
  std::map<std::string, uint64_t> out;
  for (const lcpi::CountRow& c : b.counts) out[b.images[c.image].identity] += c.count;
  return out;
}

}  // namespace

TEST_CASE("a pending image's counts wait for its identity, with their statistics") {
  TempDir dir;
  ImageTable images;
  LookupWorker lookups;  // after the table: stopped before it goes
  images.SetLookups(&lookups);
  ProcessTracker tracker;
  tracker.OnComm(kGonePid, "prog", true, 0);
  FileMapping m = NoBuildId(dir / "prog", kGonePid, 0x400000);
  const int32_t image = images.ForFile(m);
  REQUIRE(images.pending(image));
  CHECK(images.pending_count() == 1);
  tracker.OnMmap(kGonePid, {m.start, m.end, 0, image}, 0);
  Aggregator agg(images, tracker, nullptr);
  agg.Add(UserRecords(kGonePid, 0x400010, 5));

  // Its result has not come back to this thread: the counts stay.
  Aggregator::TakenBatch first = agg.TakeBatch(1, Cycles());
  CHECK(first.batch.counts.empty());
  CHECK(first.batch.processes.empty());
  CHECK(first.held_samples_change == 5);
  CHECK(StatOf(first.batch, "attributed") == 0);
  CHECK(agg.held_entries() == 1);

  REQUIRE(lookups.WaitIdle(std::chrono::seconds(10)));
  REQUIRE_FALSE(images.pending(image));
  CHECK(images.at(image).identity.rfind("content-hash:", 0) == 0);
  Aggregator::TakenBatch second = agg.TakeBatch(1, Cycles());
  CHECK(ByIdentity(second.batch) ==
        std::map<std::string, uint64_t>{{images.at(image).identity, 5}});
  CHECK(second.held_samples_change == -5);
  CHECK(StatOf(second.batch, "attributed") == 5);
  CHECK(second.batch.processes.size() == 1);
  CHECK(agg.held_entries() == 0);
}

TEST_CASE("a pending image's process rows are the next window's first pids, within the cap") {
  TempDir dir;
  ImageTable images;
  LookupWorker lookups;
  images.SetLookups(&lookups);
  ProcessTracker tracker;
  tracker.OnComm(kGonePid, "prog", true, 0);
  tracker.OnComm(kGonePid - 1, "other", true, 0);
  FileMapping m = NoBuildId(dir / "prog", kGonePid, 0x400000);
  const int32_t image = images.ForFile(m);
  REQUIRE(images.pending(image));
  tracker.OnMmap(kGonePid, {m.start, m.end, 0, image}, 0);
  Aggregator agg(images, tracker, nullptr);
  agg.set_max_processes(1);
  agg.Add(UserRecords(kGonePid, 0x400010, 5));
  // The window closes while the image is being identified: its row is held.
  CHECK(agg.TakeBatch(1, Cycles()).batch.processes.empty());
  agg.NewWindow();
  agg.Add(UserRecords(kGonePid - 1, 0x500000, 3));  // another pid, in the next window
  REQUIRE(lookups.WaitIdle(std::chrono::seconds(10)));
  Aggregator::TakenBatch next = agg.TakeBatch(2, Cycles());
  std::map<uint32_t, uint64_t> by_pid;
  for (const lcpi::ProcessRow& p : next.batch.processes) by_pid[p.pid] += p.count;
  CHECK(by_pid == std::map<uint32_t, uint64_t>{{kGonePid, 5}, {lcpi::kRolledUpPid, 3}});
}

TEST_CASE("two paths to one content are one image in a batch") {
  TempDir dir;
  ImageTable images;
  LookupWorker lookups;  // after the table: stopped before it goes
  images.SetLookups(&lookups);
  ProcessTracker tracker;
  tracker.OnComm(kGonePid, "prog", true, 0);
  FileMapping a = NoBuildId(dir / "a", kGonePid, 0x400000);
  FileMapping b = NoBuildId(dir / "b", kGonePid, 0x800000);  // the same bytes, another file
  const int32_t ia = images.ForFile(a), ib = images.ForFile(b);
  REQUIRE(ia != ib);
  tracker.OnMmap(kGonePid, {a.start, a.end, 0, ia}, 0);
  tracker.OnMmap(kGonePid, {b.start, b.end, 0, ib}, 0);
  REQUIRE(lookups.WaitIdle(std::chrono::seconds(10)));
  REQUIRE(images.at(ia).identity == images.at(ib).identity);
  Aggregator agg(images, tracker, nullptr);
  agg.Add(UserRecords(kGonePid, 0x400010, 2));
  agg.Add(UserRecords(kGonePid, 0x800010, 3));
  lcpi::MergeBatch batch = agg.TakeBatch(1, Cycles()).batch;
  CHECK(batch.images.size() == 1);
  CHECK(ByIdentity(batch) == std::map<std::string, uint64_t>{{images.at(ia).identity, 5}});
}

TEST_CASE("a file that cannot be identified, or whose lookup is given up, is unreadable") {
  TempDir dir;
  // One thread, held by a lookup that waits on a FIFO nobody writes: what
  // comes after it stays queued until Stop gives it up.
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
  LookupWorker lookups(LookupWorker::Limits{16, std::chrono::seconds(60), 4, 1});
  const std::string fifo = dir / "fifo";
  lookups.Submit(
      [fifo] {
        int fd = open(fifo.c_str(), O_RDONLY | O_CLOEXEC);
        return std::function<void()>([fd] { close(fd); });
      },
      [](const std::string&) {});
  ImageTable images;
  images.SetLookups(&lookups);
  FileMapping m = NoBuildId(dir / "prog", kGonePid, 0x400000);
  m.ino += 1;  // not the file the kernel described
  const int32_t wrong = images.ForFile(m);
  FileMapping n = NoBuildId(dir / "other", kGonePid, 0x800000);
  const int32_t given_up = images.ForFile(n);
  CHECK(images.pending_count() == 2);
  lookups.Stop();
  CHECK(images.pending_count() == 0);
  for (int32_t i : {wrong, given_up}) {
    INFO(images.at(i).identity);
    CHECK(images.at(i).kind == lcpi::ImageKind::kUnknown);
    CHECK(images.at(i).identity.rfind("unreadable:", 0) == 0);
  }
  // Let the blocked thread go (its result is discarded).
  if (int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC); fd >= 0) close(fd);

  // Without the queue, the wrong inode alone makes it unreadable.
  ImageTable table;
  LookupWorker quick;
  table.SetLookups(&quick);
  FileMapping w = NoBuildId(dir / "third", kGonePid, 0x400000);
  w.ino += 1;
  const int32_t third = table.ForFile(w);
  REQUIRE(quick.WaitIdle(std::chrono::seconds(10)));
  CHECK(table.at(third).identity.rfind("unreadable:", 0) == 0);
}
