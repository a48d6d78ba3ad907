// mapped_file_test.cpp - OpenMappedFile on this test's own mappings and on
// files put where a mapped file was: the process's view first, the host's
// path only for the same inode (or build-id), FIFOs refused at once, and the
// device numbers of /proc/PID/maps compared as fstat gives them.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "libprofile/attribute/mapped_file.h"
#include "libprofile/image/image_id.h"
#include "test_files.h"

using lcpi::FileMapping;
using lcpi::OpenMappedFile;

namespace {

// This test's executable mapping as /proc/self/maps describes it.
FileMapping OwnExecutableMapping() {
  std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::ifstream maps("/proc/self/maps");
  FileMapping m;
  for (std::string line; std::getline(maps, line);) {
    unsigned long long start, end, pgoff, ino;
    unsigned maj, min;
    char perms[8];
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
                    &maj, &min, &ino, &path_at) < 7 ||
        perms[2] != 'x' || path_at == 0 || line.substr(path_at) != exe)
      continue;
    m.pid = static_cast<uint32_t>(getpid());
    m.start = start;
    m.end = end;
    m.path = exe;
    m.dev = makedev(maj, min);
    m.ino = ino;
    return m;
  }
  FAIL("no executable mapping of " << exe << " in /proc/self/maps");
  return m;
}

// A pid that no longer exists (a child that has been reaped).
uint32_t DeadPid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return static_cast<uint32_t>(child);
}

}  // namespace

TEST_CASE("a live process's mapping opens through /proc as the same inode") {
  FileMapping m = OwnExecutableMapping();
  // maps gives major and minor in hex; makedev of them is fstat's st_dev
  struct stat st;
  REQUIRE(stat(m.path.c_str(), &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_dev) == m.dev);
  CHECK(static_cast<uint64_t>(st.st_ino) == m.ino);
  auto f = OpenMappedFile(m);
  REQUIRE(f);
  std::string proc_pid = "/proc/" + std::to_string(getpid());
  // map_files needs CAP_SYS_ADMIN; without it the process's root serves
  CHECK(f->via.rfind(proc_pid + (geteuid() == 0 ? "/map_files/" : "/root/"), 0) == 0);
  close(f->fd);
}

TEST_CASE("the mapped file itself needs only the same inode, another file the same device too") {
  FileMapping m = OwnExecutableMapping();
  int fd = open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  m.dev += 1;  // as stat on a btrfs subvolume differs from the mapping's device
  CHECK(lcpi::SameInode(fd, st, m, true));
  CHECK(!lcpi::SameInode(fd, st, m, false));
  m.ino += 1;
  CHECK(!lcpi::SameInode(fd, st, m, true));
  close(fd);
  if (geteuid() == 0) {  // through map_files: found despite the device
    m = OwnExecutableMapping();
    m.dev += 1;
    auto f = OpenMappedFile(m);
    REQUIRE(f);
    CHECK(f->via.find("/map_files/") != std::string::npos);
    close(f->fd);
  }
}

TEST_CASE("a different file at the mapped path is never taken for the mapped one") {
  lcpi::testing::TempDir dir;
  FileMapping m = OwnExecutableMapping();
  std::string copy = dir.path().string() + "/prog";
  std::filesystem::copy_file(m.path, copy);  // same bytes, another inode
  m.pid = DeadPid();
  m.path = copy;
  auto f = OpenMappedFile(m);
  REQUIRE(!f);
  CHECK(f.error().code() == lcpi::Errc::kNotFound);
  CHECK_THAT(f.error().message(), Catch::Contains(copy + ": a different file"));
}

TEST_CASE("once the process is gone the host's path serves only for the same inode") {
  FileMapping m = OwnExecutableMapping();
  m.pid = DeadPid();
  auto f = OpenMappedFile(m);
  REQUIRE(f);
  CHECK(f->via == m.path);
  close(f->fd);
  m.ino += 1;
  CHECK(!OpenMappedFile(m));
}

TEST_CASE("a mapping known by build-id is matched by build-id") {
  FileMapping m = OwnExecutableMapping();
  auto id = lcpi::IdentifyElfFile(m.path);
  REQUIRE(id);
  REQUIRE(!id->build_id.empty());  // Debian's gcc links with --build-id
  m.pid = DeadPid();
  m.dev = m.ino = 0;  // MMAP2 records with a build-id carry no inode
  m.build_id = id->build_id;
  auto f = OpenMappedFile(m);
  REQUIRE(f);
  close(f->fd);
  m.build_id = std::string(id->build_id.size(), '0');
  CHECK(!OpenMappedFile(m));
}

TEST_CASE("a FIFO where the mapped file was is refused without waiting") {
  lcpi::testing::TempDir dir;
  std::string fifo = dir.path().string() + "/prog";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  struct stat st;
  REQUIRE(stat(fifo.c_str(), &st) == 0);
  FileMapping m;
  m.pid = DeadPid();
  m.start = 0x1000;
  m.end = 0x2000;
  m.path = fifo;
  m.dev = st.st_dev;  // even its own inode: not a regular file
  m.ino = st.st_ino;
  auto f = OpenMappedFile(m);
  REQUIRE(!f);
  CHECK_THAT(f.error().message(), Catch::Contains("not a regular file"));
}

TEST_CASE("an inode generation that differs refuses the file where the file system keeps one") {
  FileMapping m = OwnExecutableMapping();
  int fd = open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  int generation = 0;
  bool kept = ioctl(fd, FS_IOC_GETVERSION, &generation) == 0;
  m.generation = static_cast<uint32_t>(generation);
  CHECK(lcpi::SameInode(fd, st, m));
  m.generation = static_cast<uint32_t>(generation) + 1;
  CHECK(lcpi::SameInode(fd, st, m) == !kept);
  close(fd);
}
