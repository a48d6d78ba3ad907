// public_file_test.cpp - OpenPublicFile (libprofile/base/public_file.h): the
// mode bits decide only on disk file systems. On procfs and sysfs a file
// marked 0444 or 0644 shows root a privileged view (a PCI device's whole
// config space, another process's details), so a source path there is
// withheld whatever its mode says.
#include "libprofile/base/public_file.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <climits>
#include <cstdlib>
#include <string>

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
