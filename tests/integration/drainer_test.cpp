// drainer_test.cpp - lcpid's drain thread on this host's perf events (root):
// it sleeps until a ring has something to read or the loop asks, so what the
// loop asks for (a flush, fresh statistics, the stop) is answered at once,
// not after its longest sleep. Here that sleep is an hour: a request the
// thread does not wake for is never answered within the test. And what it
// queues for a loop that does not take it is bounded in bytes, not only in
// records and events.
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "daemon/drainer.h"
#include "lcpi_hashtable.h"
#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/attribute/sideband.h"
#include "libprofile/collect/perf_source.h"

namespace {

using lcpi::Drained;
using lcpi::Drainer;

constexpr auto kAnHour = std::chrono::milliseconds(3600 * 1000);
// Far beyond any answer on a loaded host, far below the hour slept.
constexpr auto kPatience = std::chrono::seconds(30);

// Takes what the thread queues until an item carries a mark (the last one
// when `last`), or kPatience passes. True when it came.
bool TakeMark(Drainer& drainer, bool last) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (std::chrono::steady_clock::now() < deadline) {
    std::deque<Drained> items;
    drainer.Take(items, std::chrono::milliseconds(100));
    for (const Drained& d : items)
      if (d.mark && d.mark->last == last) return true;
  }
  return false;
}

// A perf source sampling cpu-clock at 10/s/CPU (its rings stay far below
// their watermark: minutes away) and the side-band, both started.
struct Rings {
  static lcpi::SourceOptions Options() {
    lcpi::SourceOptions so;
    so.events = {{"cpu-clock", 1 /* PERF_TYPE_SOFTWARE */, 0 /* PERF_COUNT_SW_CPU_CLOCK */}};
    so.frequency = 10;
    return so;
  }
  lcpi::PerfSource source{Options(), lcpi_ht_config{LCPI_HT_DEFAULT_WAYS, LCPI_HT_DEFAULT_SET_BITS,
                                                    LCPI_POLICY_ROUND_ROBIN, LCPI_HASH_MULTIPLY,
                                                    LCPI_HT_DEFAULT_BUFFER_RECORDS}};
  lcpi::ProcessTracker tracker;
  lcpi::ImageTable images;
  lcpi::Sideband sideband{tracker, images};
  Rings() {
    lcpi::Expected<void> started = sideband.Start();
    INFO((started ? "" : started.error().message()));
    REQUIRE(started);
    started = source.Start();
    INFO((started ? "" : started.error().message()));
    REQUIRE(started);
  }
};

// Bytes of the heap in use now (large blocks are mapped apart).
size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// A file at a path of about 4,000 bytes (directories of 200), removed at the end.
struct LongPathFile {
  std::filesystem::path top, file;
  LongPathFile() {
    top = std::filesystem::temp_directory_path() / ("lcpi-drainer-" + std::to_string(getpid()));
    std::filesystem::path dir = top;
    while (dir.native().size() < 3800) dir /= std::string(200, 'd');
    std::filesystem::create_directories(dir);
    file = dir / "code";
    int fd = open(file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0700);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, 4096) == 0);
    close(fd);
  }
  ~LongPathFile() { std::filesystem::remove_all(top); }
};

}  // namespace

TEST_CASE("side-band events queued for a loop that takes nothing are bounded in bytes") {
  Rings rings;
  lcpi::PerfSource& source = rings.source;
  lcpi::Sideband& sideband = rings.sideband;
  LongPathFile code;
  const size_t before = HeapInUse();
  Drainer drainer(source, sideband, std::chrono::milliseconds(100));
  REQUIRE(drainer.Start());
  // Each executable mapping of the file is an MMAP2 record with its 4 KB
  // path, which the queue holds twice (the event's text and its file's):
  // 12,000 of them are some 100 MB, far under the queue's 262,144 events.
  constexpr int kMappings = 12000;
  int fd = open(code.file.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  for (int i = 0; i < kMappings; i++) {
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    REQUIRE(p != MAP_FAILED);
    munmap(p, 4096);
    // A ring holds some 250 such records: the thread reads every ring
    // before it takes the statistics asked for.
    if (i % 64 == 63) drainer.FreshStats(kPatience);
  }
  close(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const lcpi::DrainStats st = drainer.FreshStats(kPatience);
  const size_t grown = HeapInUse() - before;
  std::deque<Drained> items;
  drainer.Take(items, std::chrono::milliseconds(0));
  size_t queued = 0;
  for (const Drained& d : items) queued += d.events.size();
  INFO("heap grew " << grown / 1024 << " KiB; events queued " << queued << ", dropped "
                    << st.queue_dropped_events << ", lost by the kernel " << st.sideband.lost);
  REQUIRE(queued + st.queue_dropped_events > 9000);
  CHECK(grown < Drainer::kMaxQueuedEventBytes + (8u << 20));  // and what else the test holds
  CHECK(st.queue_dropped_events > 0);
  CHECK(st.queued_event_bytes <= Drainer::kMaxQueuedEventBytes);
  CHECK(st.queued_event_bytes > Drainer::kMaxQueuedEventBytes / 2);
  drainer.RequestStop();
  CHECK(TakeMark(drainer, true));
}

TEST_CASE("requests wake the drain thread: a flush, fresh statistics and the stop") {
  Rings rings;
  lcpi::PerfSource& source = rings.source;
  lcpi::Sideband& sideband = rings.sideband;

  Drainer drainer(source, sideband, kAnHour);
  REQUIRE(drainer.Start());
  drainer.RequestFlush();
  CHECK(TakeMark(drainer, false));

  // Statistics taken by the thread after the request count the samples
  // of this busy thread since the mark's.
  const uint64_t before = drainer.stats().source.as_of_ns;
  for (auto t0 = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500);) {
  }
  const lcpi::DrainStats fresh = drainer.FreshStats(kPatience);
  CHECK(fresh.source.as_of_ns > before);

  drainer.RequestStop();
  CHECK(TakeMark(drainer, true));
}
