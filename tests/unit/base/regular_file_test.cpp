// regular_file_test.cpp - OpenRegularFile (libprofile/base/regular_file.h):
// a path another user chose never makes the caller wait, and only a regular
// file is opened.
#include "libprofile/base/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

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
  // (/proc/self is itself a symbolic link: the PID's own directory is not.)
  auto status = OpenRecordedFile("/proc/" + std::to_string(getpid()) + "/status");
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message().find("procfs or sysfs") != std::string::npos);
  CHECK_FALSE(OpenRecordedFile("/proc/kcore").has_value());
  CHECK_FALSE(OpenRecordedFile("/sys/kernel/notes").has_value());
  // Over the size bound: refused before any read.
  auto big = OpenRecordedFile(file, nullptr, 1024);
  REQUIRE_FALSE(big.has_value());
  CHECK(big.error().message().find("larger than") != std::string::npos);
}

TEST_CASE("a recorded path through a symlinked directory or a magic link is refused") {
  using lcpi::OpenRecordedFile;
  TempDir dir;
  const std::string secretdir = dir / "secretdir";
  REQUIRE(mkdir(secretdir.c_str(), 0700) == 0);
  const std::string secret = secretdir + "/secret";
  WriteFile(secret, std::string(64, 's'));
  REQUIRE(OpenRecordedFile(secret).has_value());  // the file itself opens
  // An intermediate component that is a symbolic link: not followed.
  const std::string link = dir / "link";
  REQUIRE(symlink(secretdir.c_str(), link.c_str()) == 0);
  auto via_link = OpenRecordedFile(link + "/secret");
  REQUIRE_FALSE(via_link.has_value());
  CHECK(via_link.error().message().find("symbolic link") != std::string::npos);
  // /proc/PID/root is a magic link to another process's root.
  auto via_magic = OpenRecordedFile("/proc/self/root" + secret);
  REQUIRE_FALSE(via_magic.has_value());
  CHECK(via_magic.error().message().find("symbolic link") != std::string::npos);
}

TEST_CASE("a path the kernel recorded (d_path, resolved) still opens") {
  using lcpi::OpenRecordedFile;
  // The kernel's own record of this test's executable, as lcpid gets it.
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  REQUIRE(n > 0);
  exe[n] = '\0';
  auto fd = OpenRecordedFile(exe);
  REQUIRE(fd.has_value());
  close(*fd);
  // And a shared library from /proc/self/maps (/usr/lib/... on merged /usr).
  FILE* maps = fopen("/proc/self/maps", "r");
  REQUIRE(maps != nullptr);
  std::string lib;
  char line[4096];
  while (lib.empty() && fgets(line, sizeof line, maps)) {
    const char* p = strchr(line, '/');
    if (p && strstr(p, ".so")) lib.assign(p, strcspn(p, "\n"));
  }
  fclose(maps);
  REQUIRE_FALSE(lib.empty());
  INFO(lib);
  auto libfd = OpenRecordedFile(lib);
  REQUIRE(libfd.has_value());
  close(*libfd);
}
