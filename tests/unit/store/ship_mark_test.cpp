// The mark lcpi-ship leaves for lcpid (ship_mark.h): written whole, read
// back, and anything else in its place (no file, a FIFO, garbage) a clear
// error at once.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <fstream>

#include "libprofile/store/ship_mark.h"
#include "test_files.h"

using lcpi::Errc;
using lcpi::ReadShipMark;
using lcpi::WriteShipMark;

TEST_CASE("a ship mark reads back as written", "[ship_mark]") {
  lcpi::testing::TempDir dir;
  const std::string path = dir / "mark";
  auto none = ReadShipMark(path);
  REQUIRE_FALSE(none);
  CHECK(none.error().code() == Errc::kNotFound);
  REQUIRE(WriteShipMark(path, 1795000000));
  CHECK(*ReadShipMark(path) == 1795000000);
  REQUIRE(WriteShipMark(path, 0));
  CHECK(*ReadShipMark(path) == 0);
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  CHECK(access((path + ".tmp").c_str(), F_OK) != 0);
}

TEST_CASE("anything but a mark in its place is an error, never a wait", "[ship_mark]") {
  lcpi::testing::TempDir dir;
  const std::string path = dir / "mark";
  REQUIRE(mkfifo(path.c_str(), 0600) == 0);
  auto fifo = ReadShipMark(path);  // no writer: an open that waited would hang here
  REQUIRE_FALSE(fifo);
  CHECK(fifo.error().message().find("not a regular file") != std::string::npos);
  REQUIRE(unlink(path.c_str()) == 0);
  for (const char* text : {"", "soon\n", "12 13\n", "-5\n", "99999999999999999999999\n"}) {
    std::ofstream(path) << text;
    auto bad = ReadShipMark(path);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code() == Errc::kInvalidArgument);
  }
  std::ofstream(path) << std::string(1 << 20, '7');  // a megabyte of digits: at most 64 are read
  CHECK_FALSE(ReadShipMark(path));
}

// Review round 15, finding 13: the mark lives in the shipper's directory,
// which the shipper's user writes; lcpid reads it as root. A symbolic link
// there (or in any directory on the way) would lead root's open to any file.
TEST_CASE("a ship mark reached through a symbolic link is refused", "[ship_mark]") {
  lcpi::testing::TempDir dir;
  const std::string real = dir / "secret";
  std::ofstream(real) << "1795000000\n";
  const std::string link = dir / "mark";
  REQUIRE(symlink(real.c_str(), link.c_str()) == 0);
  auto linked = ReadShipMark(link);
  REQUIRE_FALSE(linked);
  CHECK(linked.error().message().find("symbolic link") != std::string::npos);
  // A link as a directory on the way is refused too.
  REQUIRE(mkdir((dir / "real").c_str(), 0700) == 0);
  REQUIRE(WriteShipMark(dir / "real/mark", 1795000000));
  REQUIRE(symlink((dir / "real").c_str(), (dir / "via").c_str()) == 0);
  auto via = ReadShipMark(dir / "via/mark");
  REQUIRE_FALSE(via);
  CHECK(via.error().message().find("symbolic link") != std::string::npos);
  CHECK(*ReadShipMark(dir / "real/mark") == 1795000000);
}
