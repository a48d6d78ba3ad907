// note_limits_test.cpp - looking for a build-id note reads a bounded amount
// of a file, however many note headers it has and however large they claim
// to be.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>

#include "image/crafted_elf.h"
#include "libprofile/image/image_id.h"
#include "test_files.h"

namespace {

using lcpi::testing::NoteBombElf;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

// Bytes this process has read (read, pread) so far: /proc/self/io's rchar.
uint64_t BytesRead() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

}  // namespace

TEST_CASE("3,000 PT_NOTE headers over a 256 MiB sparse file are looked at within bounds") {
  TempDir dir;
  const std::string path = dir / "notes";
  const uint64_t size = uint64_t{256} << 20;
  WriteFile(path, NoteBombElf(3000, size));
  REQUIRE(truncate(path.c_str(), static_cast<off_t>(size)) == 0);

  const uint64_t before = BytesRead();
  auto start = std::chrono::steady_clock::now();
  auto id = lcpi::IdentifyElfFile(path);
  auto took = std::chrono::steady_clock::now() - start;
  const uint64_t read = BytesRead() - before;
  REQUIRE(id);
  CHECK(id->build_id.empty());
  // At most 16 notes of 64 KiB, the headers, and the 4 KiB segment hashed.
  CHECK(read <= uint64_t{2} << 20);
  CHECK(took < std::chrono::seconds(5));
}

TEST_CASE("a file with more than 4,096 program headers is not searched for notes") {
  TempDir dir;
  const std::string path = dir / "notes";
  const uint64_t size = uint64_t{1} << 20;
  WriteFile(path, NoteBombElf(5000, size));
  REQUIRE(truncate(path.c_str(), static_cast<off_t>(size)) == 0);
  const uint64_t before = BytesRead();
  auto id = lcpi::IdentifyElfFile(path);
  const uint64_t read = BytesRead() - before;
  REQUIRE(id);
  CHECK(id->identity.rfind("file-stat:", 0) == 0);
  CHECK(read <= uint64_t{2} << 20);
}
