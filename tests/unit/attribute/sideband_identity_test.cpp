// sideband_identity_test.cpp - a real MMAP2 record of a file without a
// build-id, read by Sideband from the kernel, names the file's content
// identity when the file can only be checked by device and inode: perf gives
// the device as major and minor apart, fstat as one dev_t, and they must be
// compared alike. Needs system-wide perf events (root); skipped without.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/attribute/sideband.h"
#include "libprofile/image/image_id.h"
#include "test_files.h"

TEST_CASE("an MMAP2 record's device and inode match the file's fstat") {
  lcpi::testing::TempDir dir;
  std::string prog = dir.path().string() + "/nobid";
  // /bin/true without its build-id: the kernel then reports device and inode
  std::string cmd = "objcopy --remove-section=.note.gnu.build-id /bin/true " + prog;
  REQUIRE(std::system(cmd.c_str()) == 0);
  auto id = lcpi::IdentifyElfFile(prog);
  REQUIRE(id);
  REQUIRE(id->build_id.empty());

  lcpi::ProcessTracker tracker;
  lcpi::ImageTable images;
  lcpi::Sideband sideband(tracker, images);
  if (!sideband.Start()) {
    WARN("no system-wide perf events here (not root?): skipped");
    return;
  }
  int fd = open(prog.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  void* code =
      mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  REQUIRE(code != MAP_FAILED);
  close(fd);
  // Unmapped before the record is read: /proc/self/map_files has nothing,
  // so the file is found at its path and accepted only if the record's
  // device and inode are the file's.
  munmap(code, static_cast<size_t>(st.st_size));
  sideband.Drain();
  bool found = false;
  for (const lcpi::ImageEntry& e : images.all()) {
    if (e.path != prog) continue;
    INFO(e.identity);
    CHECK(e.identity == id->identity);
    found = true;
  }
  CHECK(found);
}
