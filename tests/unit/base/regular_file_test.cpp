// regular_file_test.cpp - OpenRegularFile (libprofile/base/regular_file.h):
// a path another user chose never makes the caller wait, and only a regular
// file is opened.
#include "libprofile/base/regular_file.h"

#include <fcntl.h>
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

TEST_CASE("inside another root: paths stay in it, links and FIFOs are refused") {
  // A process's root as /proc/PID/root gives it: absolute paths and
  // absolute symlinks resolve inside it, never in the caller's tree.
  TempDir outer;
  const std::string root = outer / "root";
  REQUIRE(mkdir(root.c_str(), 0755) == 0);
  REQUIRE(mkdir((root + "/real").c_str(), 0755) == 0);
  REQUIRE(symlink("/real", (root + "/tmp").c_str()) == 0);
  WriteFile(root + "/real/map", "inside");
  WriteFile(outer / "secret", "outside");
  REQUIRE(symlink((outer / "secret").c_str(), (root + "/real/link").c_str()) == 0);
  REQUIRE(mkfifo((root + "/real/fifo").c_str(), 0644) == 0);
  int root_fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(root_fd >= 0);

  struct stat st {};
  st.st_uid = 12345;
  auto fd = lcpi::OpenRegularFileInRoot(root_fd, "/tmp/map", &st);
  REQUIRE(fd);
  CHECK(st.st_size == 6);
  CHECK(st.st_uid == getuid());
  close(*fd);

  CHECK_FALSE(lcpi::OpenRegularFileInRoot(root_fd, "/tmp/link"));   // a link at the end
  CHECK_FALSE(lcpi::OpenRegularFileInRoot(root_fd, "/../secret"));  // ".." stops at the root
  int status = ExitStatusWithin(10, [&] {
    auto fifo = lcpi::OpenRegularFileInRoot(root_fd, "/tmp/fifo");
    return !fifo && fifo.error().code() == Errc::kBadElf ? 0 : 1;
  });
  CHECK(status == 0);
  close(root_fd);
}
