// url_file_test.cpp - the ClickHouse URL (with its password) read from a
// file only its owner and group may read (libprofile/fleet/url_file.h).
#include "libprofile/fleet/url_file.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <string>

#include "test_files.h"

using lcpi::fleet::ReadUrlFile;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

TEST_CASE("the URL file gives its first line, trimmed") {
  TempDir dir;
  const std::string path = dir / "ship-url";
  WriteFile(path, "http://shipper:s3cret@ch.example:8123\n");
  REQUIRE(chmod(path.c_str(), 0640) == 0);
  auto url = ReadUrlFile(path);
  REQUIRE(url.has_value());
  CHECK(*url == "http://shipper:s3cret@ch.example:8123");
}

TEST_CASE("a URL file others may read is refused, its content not shown") {
  TempDir dir;
  const std::string path = dir / "ship-url";
  WriteFile(path, "http://shipper:s3cret@ch.example:8123\n");
  REQUIRE(chmod(path.c_str(), 0644) == 0);
  auto url = ReadUrlFile(path);
  REQUIRE_FALSE(url.has_value());
  CHECK(url.error().message().find("others may read") != std::string::npos);
  CHECK(url.error().message().find("s3cret") == std::string::npos);
  CHECK(url.error().message().find("chmod") != std::string::npos);
}

TEST_CASE("a missing or empty URL file is a clear error") {
  TempDir dir;
  auto missing = ReadUrlFile(dir / "none");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message().find(dir / "none") != std::string::npos);
  const std::string empty = dir / "empty";
  WriteFile(empty, "\n");
  REQUIRE(chmod(empty.c_str(), 0600) == 0);
  auto e = ReadUrlFile(empty);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message().find("empty") != std::string::npos);
}
