// public_file_test.cpp - OpenPublicFile (libprofile/base/public_file.h): the
// mode bits decide only on disk file systems. On procfs and sysfs a file
// marked 0444 or 0644 shows root a privileged view (a PCI device's whole
// config space, another process's details), so a source path there is
// withheld whatever its mode says. OpenPublicParent (the image cache's rule
// too) walks from the root it is given, as a process sees its files.
#include "libprofile/base/public_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "test_files.h"

using lcpi::Errc;
using lcpi::OpenPublicFile;

TEST_CASE("a public file on disk opens, one on procfs or sysfs is withheld") {
  struct stat st;
  auto passwd = OpenPublicFile("/etc/passwd", &st);  // 0644 on the root file system
  REQUIRE(passwd.has_value());
  close(*passwd);

  // 0444, no symbolic link on the way: the mode bits alone would pass it.
  auto version = OpenPublicFile("/proc/version", &st);
  REQUIRE_FALSE(version.has_value());
  CHECK(version.error().code() == Errc::kPermission);
  CHECK(version.error().message().find("not on a disk file system") != std::string::npos);

  // A PCI device's config (0644: root reads all of it, others 64 bytes),
  // named as /sys/devices/... (/sys/bus/... is a symbolic link).
  char real[PATH_MAX];
  if (realpath("/sys/bus/pci/devices/0000:00:00.0/config", real) != nullptr) {
    INFO(real);
    auto config = OpenPublicFile(real, &st);
    REQUIRE_FALSE(config.has_value());
    CHECK(config.error().message().find("not on a disk file system") != std::string::npos);
  }
  auto kernel = OpenPublicFile("/sys/kernel/notes", &st);
  CHECK_FALSE(kernel.has_value());
}

TEST_CASE("a name that is no regular file is never opened for reading") {
  // Opening is an act for a device (a watchdog starts, a tape rewinds), and
  // a binary's DWARF can name /dev/watchdog as a source file for root's
  // tools to list. A FIFO shows it here: its writer's open returns once a
  // reader opens it, and only then.
  lcpi::testing::TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  const std::string fifo = dir.path().string() + "/fifo.c";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  std::atomic<bool> writer_open{false};
  std::thread writer([&] {
    int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // blocks until a reader
    writer_open = true;
    if (fd >= 0) close(fd);
  });
  struct stat st;
  auto opened = OpenPublicFile(fifo, &st);
  CHECK_FALSE(opened.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(writer_open.load());
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // lets the writer go
  writer.join();
  close(reader);
}

TEST_CASE("OpenPublicParent walks from the root it is given, never out of it") {
  // A process's root (/proc/PID/root for the image cache): "/a/b" there is
  // root/a/b, and an absolute link would lead to lcpid's own tree instead.
  namespace fs = std::filesystem;
  lcpi::testing::TempDir dir;
  fs::permissions(dir.path(), fs::perms(0755));
  fs::create_directories(dir / "usr/lib");
  fs::permissions(dir / "usr", fs::perms(0755));
  fs::permissions(dir / "usr/lib", fs::perms(0755));
  lcpi::testing::WriteFile(dir / "usr/lib/x.so", "x");
  fs::create_directory(dir / "private");
  fs::permissions(dir / "private", fs::perms(0700));
  fs::create_directory_symlink("/usr", dir / "host");
  lcpi::UniqueFd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(root.get() >= 0);
  std::string name;

  auto lib = lcpi::OpenPublicParent(root.get(), "/usr/lib/x.so", &name);
  REQUIRE(lib.has_value());
  CHECK(name == "x.so");
  struct stat want, got;
  REQUIRE(stat((dir / "usr/lib").c_str(), &want) == 0);
  REQUIRE(fstat(lib->get(), &got) == 0);
  CHECK((got.st_dev == want.st_dev && got.st_ino == want.st_ino));

  auto hidden = lcpi::OpenPublicParent(root.get(), "/private/x.so", &name);
  REQUIRE_FALSE(hidden.has_value());
  CHECK(hidden.error().message().find("a directory others cannot search") != std::string::npos);
  auto out = lcpi::OpenPublicParent(root.get(), "/host/lib/x.so", &name);
  REQUIRE_FALSE(out.has_value());
  CHECK(out.error().message().find("a symbolic link on the way") != std::string::npos);
  auto up = lcpi::OpenPublicParent(root.get(), "/usr/../../etc/passwd", &name);
  REQUIRE_FALSE(up.has_value());
  CHECK(up.error().code() == Errc::kInvalidArgument);

  // The root itself must let others pass.
  fs::permissions(dir.path(), fs::perms(0750));
  auto closed = lcpi::OpenPublicParent(root.get(), "/usr/lib/x.so", &name);
  REQUIRE_FALSE(closed.has_value());
  CHECK(closed.error().code() == Errc::kPermission);
  fs::permissions(dir.path(), fs::perms(0755));
}
