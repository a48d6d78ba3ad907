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

TEST_CASE("a recorded path is opened by the daemon's rules, procfs and sysfs refused") {
  using lcpi::OpenRecordedFile;
  TempDir dir;
  const std::string file = dir / "image";
  WriteFile(file, std::string(4096, 'x'));
  uint64_t size = 0;
  auto ok = OpenRecordedFile(file, &size);
  REQUIRE(ok.has_value());
  close(*ok);
  CHECK(size == 4096);
  // A symbolic link as the last component: whatever it names is not opened.
  const std::string link = dir / "link";
  REQUIRE(symlink(file.c_str(), link.c_str()) == 0);
  CHECK_FALSE(OpenRecordedFile(link).has_value());
  const std::string fifo = dir / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(ExitStatusWithin(5, [&] { return OpenRecordedFile(fifo).has_value() ? 1 : 0; }) == 0);
  CHECK_FALSE(OpenRecordedFile("/dev/zero").has_value());
  // /proc/kcore is a "regular file" (the whole of memory, to root), as is
  // every file of /proc and /sys: none is an image. (Containers may hide
  // /proc/kcore: /proc/self/status shows the same rule.)
  REQUIRE(OpenRegularFile("/proc/self/status").has_value());  // the daemon's plain check passes it
  auto status = OpenRecordedFile("/proc/self/status");
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message().find("procfs or sysfs") != std::string::npos);
  CHECK_FALSE(OpenRecordedFile("/proc/kcore").has_value());
  CHECK_FALSE(OpenRecordedFile("/sys/kernel/notes").has_value());
  // Over the size bound: refused before any read.
  auto big = OpenRecordedFile(file, nullptr, 1024);
  REQUIRE_FALSE(big.has_value());
  CHECK(big.error().message().find("larger than") != std::string::npos);
}
