// image_cache_writer_test.cpp - copies of real programs (/bin/true,
// /bin/false) kept by identity with the database's mode, counted as hits and
// misses, never filed under an identity they do not have, and evicted least
// recently used first when the bound shrinks.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "libprofile/attribute/image_cache_writer.h"
#include "libprofile/image/image_cache.h"
#include "libprofile/image/image_id.h"
#include "test_files.h"

using lcpi::FileMapping;
using lcpi::ImageCacheConfig;
using lcpi::ImageCacheStats;
using lcpi::ImageCacheWriter;

namespace {

// The mapping of a program by a process that has gone: found by path, checked by inode.
FileMapping GoneMapping(const std::string& path) {
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  FileMapping m;
  m.pid = static_cast<uint32_t>(child);
  m.start = 0x1000;
  m.end = 0x2000;
  m.path = path;
  m.dev = st.st_dev;
  m.ino = st.st_ino;
  return m;
}

std::string Identity(const std::string& path) {
  auto id = lcpi::IdentifyElfFile(path);
  REQUIRE(id);
  return id->identity;
}

// Waits until the writer has dealt with `n` offers (copied or failed).
ImageCacheStats Settle(ImageCacheWriter& w, uint64_t n) {
  for (int i = 0; i < 500; i++) {
    ImageCacheStats s = w.stats();
    if (s.files + s.failed >= n) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return w.stats();
}

uint64_t FileSize(const std::string& p) { return std::filesystem::file_size(p); }

}  // namespace

TEST_CASE("an image is copied once by identity, private, then a hit") {
  lcpi::testing::TempDir dir;
  std::string cache = dir.path().string() + "/images";
  std::string db = dir.path().string() + "/profiles.db";
  REQUIRE(lcpi::ImageCacheDir(db) == cache);
  ImageCacheConfig config{cache, 1 << 30, 0640, 0750, std::nullopt};
  std::string id = Identity("/bin/true");
  {
    ImageCacheWriter w(config);
    REQUIRE(w.Start());
    w.Offer(id, GoneMapping("/bin/true"));
    w.Offer(id, GoneMapping("/bin/true"));  // queued or done: not again
    ImageCacheStats s = Settle(w, 1);
    CHECK(s.misses == 1);
    CHECK(s.hits == 0);
    CHECK(s.files == 1);
    CHECK(s.bytes == FileSize("/bin/true"));
  }
  std::string copy = lcpi::FindCachedImage(db, id);
  REQUIRE(!copy.empty());
  CHECK(Identity(copy) == id);
  CHECK((std::filesystem::status(copy).permissions() & std::filesystem::perms::all) ==
        std::filesystem::perms(0640));
  CHECK((std::filesystem::status(cache).permissions() & std::filesystem::perms::all) ==
        std::filesystem::perms(0750));
  ImageCacheWriter again(config);
  REQUIRE(again.Start());
  again.Offer(id, GoneMapping("/bin/true"));
  ImageCacheStats s = again.stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 0);
  CHECK(s.files == 1);
}

TEST_CASE("a file that is not the identity offered is not kept") {
  lcpi::testing::TempDir dir;
  ImageCacheWriter w({dir.path().string() + "/images", 1 << 30, 0600, 0700, std::nullopt});
  REQUIRE(w.Start());
  // /bin/false's identity, but /bin/true's file (found by inode)
  w.Offer(Identity("/bin/false"), GoneMapping("/bin/true"));
  ImageCacheStats s = Settle(w, 1);
  CHECK(s.failed == 1);
  CHECK(s.files == 0);
  CHECK(lcpi::FindCachedImage(dir.path().string() + "/p.db", Identity("/bin/false")).empty());
  // and identities that are not files are never cached
  CHECK(lcpi::CachedImageName("kernel:abc").empty());
  CHECK(lcpi::CachedImageName("build-id:../../etc").empty());
  CHECK(lcpi::CachedImageName("build-id:00ff") == "build-id-00ff");
}

TEST_CASE("a smaller bound evicts the least recently used copy first") {
  lcpi::testing::TempDir dir;
  std::string cache = dir.path().string() + "/images";
  std::string db = dir.path().string() + "/profiles.db";
  std::string t = Identity("/bin/true"), f = Identity("/bin/false");
  REQUIRE(t != f);
  {
    ImageCacheWriter w({cache, 1 << 30, 0600, 0700, std::nullopt});
    REQUIRE(w.Start());
    w.Offer(t, GoneMapping("/bin/true"));
    REQUIRE(Settle(w, 1).files == 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct mtimes
    w.Offer(f, GoneMapping("/bin/false"));
    REQUIRE(Settle(w, 2).files == 2);
  }
  uint64_t one = std::max(FileSize("/bin/true"), FileSize("/bin/false"));
  ImageCacheWriter small({cache, one, 0600, 0700, std::nullopt});
  REQUIRE(small.Start());
  ImageCacheStats s = small.stats();
  CHECK(s.files == 1);
  CHECK(s.evicted == 1);
  CHECK(lcpi::FindCachedImage(db, t).empty());  // the older one went
  CHECK(!lcpi::FindCachedImage(db, f).empty());
}
