// regular_file_test.cpp - OpenRegularFile (libprofile/base/regular_file.h):
// a path another user chose never makes the caller wait, and only a regular
// file is opened.
#include "libprofile/base/regular_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "test_files.h"

using lcpi::Errc;
using lcpi::OpenRegularFile;
using lcpi::testing::ExitStatusWithin;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

TEST_CASE("a FIFO is refused at once, never waited on") {
  TempDir dir;
  const std::string fifo = dir / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  // With no writer, a blocking open would wait for ever: the child would be
  // killed by its alarm (status 142).
  int status = ExitStatusWithin(10, [&] {
    auto fd = OpenRegularFile(fifo);
    return !fd && fd.error().code() == Errc::kBadElf ? 0 : 1;
  });
  CHECK(status == 0);
}

TEST_CASE("directories and devices are refused, regular files opened") {
  TempDir dir;
  auto d = OpenRegularFile(dir.path().string());
  REQUIRE_FALSE(d);
  CHECK(d.error().code() == Errc::kBadElf);
  CHECK(d.error().message().find("not a regular file") != std::string::npos);

  auto null = OpenRegularFile("/dev/null");
  REQUIRE_FALSE(null);
  CHECK(null.error().code() == Errc::kBadElf);

  CHECK(OpenRegularFile(dir / "missing").error().code() == Errc::kNotFound);

  WriteFile(dir / "file", "content");
  auto fd = OpenRegularFile(dir / "file");
  REQUIRE(fd);
  char buf[8] = {};
  CHECK(read(*fd, buf, sizeof buf) == 7);
  close(*fd);
}
