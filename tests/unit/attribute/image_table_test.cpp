// image_table_test.cpp - the daemon's image table forgets the file and
// unknown images nothing refers to any more (ImageTable::Forget), reuses
// their indices, identifies one seen again afresh, and keeps the kernel
// side, the vDSO and JIT images; a file claiming another's build-id is an
// image of its own, counted as a conflict.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/base/lookup_worker.h"
#include "libprofile/image/image_id.h"
#include "test_files.h"

using lcpi::ImageKind;
using lcpi::ImageTable;

TEST_CASE("images nothing refers to are forgotten and their indices reused") {
  ImageTable t;
  const int32_t a = t.Intern("build-id:aa", "/bin/a", ImageKind::kUser);
  const int32_t b = t.Intern("build-id:bb", "/bin/b", ImageKind::kUser);
  const int32_t kernel = t.Intern("kernel:cc", "[kernel]", ImageKind::kKernel);
  const int32_t vdso = t.Vdso();
  const int32_t unknown = t.Unknown("sh");
  const int32_t jit = t.Intern("jit:boot:7:1", "[jit node 7]", ImageKind::kJit);
  REQUIRE(t.live() == 6);

  std::vector<bool> in_use(t.size(), false);
  in_use[b] = true;              // still mapped, or named by a pending count
  CHECK(t.Forget(in_use) == 2);  // a and the unknown image
  CHECK(t.live() == 4);
  CHECK(t.size() == 6);
  CHECK(t.at(a).identity.empty());
  CHECK(t.at(unknown).identity.empty());
  for (int32_t kept : {b, kernel, vdso, jit}) CHECK(!t.at(kept).identity.empty());
  CHECK(t.Forget(in_use) == 0);  // nothing more

  // Seen again: a new image in a freed slot, not the old entry.
  const int32_t a2 = t.Intern("build-id:aa", "/opt/a", ImageKind::kUser);
  CHECK((a2 == a || a2 == unknown));
  CHECK(t.at(a2).path == "/opt/a");
  const int32_t c = t.Intern("build-id:dd", "/bin/d", ImageKind::kUser);
  CHECK((c == a || c == unknown));
  CHECK(c != a2);
  CHECK(t.size() == 6);  // no growth while slots are free
  CHECK(t.Intern("build-id:bb", "/bin/b", ImageKind::kUser) == b);
  CHECK(t.Intern("build-id:ee", "/bin/e", ImageKind::kUser) == 6);
  CHECK(t.live() == 7);
}

TEST_CASE("an index past the end of in_use counts as not in use") {
  ImageTable t;
  t.Intern("build-id:aa", "/bin/a", ImageKind::kUser);
  const int32_t b = t.Intern("build-id:bb", "/bin/b", ImageKind::kUser);
  std::vector<bool> in_use(1, true);  // covers only a
  CHECK(t.Forget(in_use) == 1);
  CHECK(t.at(b).identity.empty());
}

TEST_CASE("a file claiming another file's build-id is an image of its own, a conflict") {
  lcpi::testing::TempDir dir;
  auto real = lcpi::IdentifyElfFile("/bin/true");
  REQUIRE(real.has_value());
  REQUIRE(!real->build_id.empty());
  // Any user can link a program of their own with /bin/true's build-id.
  const std::string src = dir / "forged.c";
  lcpi::testing::WriteFile(src, "int main(void) { for (;;) {} }\n");
  const std::string forged = dir / "forged";
  lcpi::testing::Run("cc -O1 -Wl,--build-id=0x" + real->build_id + " -o " + forged + " " + src);
  auto mapping = [](const std::string& path) {
    struct stat st;
    REQUIRE(stat(path.c_str(), &st) == 0);
    lcpi::FileMapping m;
    m.pid = 4000000;  // gone: found at its path, checked by device and inode
    m.start = 0x400000;
    m.end = 0x401000;
    m.path = path;
    m.dev = st.st_dev;
    m.ino = st.st_ino;
    return m;
  };
  ImageTable t;
  const int32_t a = t.ForFile(mapping("/bin/true"));
  const int32_t b = t.ForFile(mapping(forged));
  CHECK(t.at(a).identity == real->identity);
  CHECK(t.at(b).identity != t.at(a).identity);
  CHECK(lcpi::BuildIdOfIdentity(t.at(b).identity) == real->build_id);
  CHECK(t.build_id_conflicts() == 1);
  // The real file seen again is no conflict.
  const std::string copy = dir / "true_copy";
  lcpi::testing::Run("cp /bin/true " + copy);
  const int32_t c = t.ForFile(mapping(copy));
  CHECK(t.at(c).identity == real->identity);
  CHECK(t.build_id_conflicts() == 1);
}

TEST_CASE("a lookup refused (queue full, lookups stalled) is retried, not cached as unreadable") {
  struct stat st;
  REQUIRE(stat("/bin/true", &st) == 0);
  lcpi::FileMapping m;
  m.pid = 4000000;  // gone: found at its path, checked by device and inode
  m.start = 0x400000;
  m.end = 0x401000;
  m.path = "/bin/true";
  m.dev = st.st_dev;
  m.ino = st.st_ino;
  auto real = lcpi::IdentifyElfFile("/bin/true");
  REQUIRE(real.has_value());

  lcpi::LookupWorker::Limits full;
  full.max_queued = 0;  // every lookup refused: "lookup queue full"
  lcpi::LookupWorker refusing(full);
  ImageTable t;
  t.SetLookups(&refusing);
  const int32_t first = t.ForFile(m);
  CHECK(t.pending(first));
  refusing.RunCompletions();
  REQUIRE_FALSE(t.pending(first));
  CHECK(t.at(first).path == "[unreadable /bin/true]");  // its samples so far

  // Lookups are served again: the next mapping of the file looks it up.
  lcpi::LookupWorker serving;
  t.SetLookups(&serving);
  const int32_t again = t.ForFile(m);
  REQUIRE(serving.WaitIdle(std::chrono::seconds(10)));
  CHECK(t.at(again).identity == real->identity);
  t.SetLookups(nullptr);
}

TEST_CASE(
    "the files the table knows are bounded in count and path bytes, and past them a file gets no "
    "image, counted") {
  auto mapping = [](const std::string& path) {
    struct stat st;
    REQUIRE(stat(path.c_str(), &st) == 0);
    lcpi::FileMapping m;
    m.pid = 4000000;
    m.start = 0x400000;
    m.end = 0x401000;
    m.path = path;
    m.dev = st.st_dev;
    m.ino = st.st_ino;
    return m;
  };
  ImageTable t;
  t.SetFileLimits(2, 1 << 20);
  CHECK(t.ForFile(mapping("/bin/true")) >= 0);
  CHECK(t.ForFile(mapping("/bin/false")) >= 0);
  CHECK(t.ForFile(mapping("/bin/sh")) == lcpi::kNoImage);  // its samples: the process's unknown
  CHECK(t.files_refused() == 1);
  CHECK(t.ForFile(mapping("/bin/true")) >= 0);  // known ones still found
  ImageTable bytes;
  bytes.SetFileLimits(100, 12);  // "/bin/true" is 9 bytes
  CHECK(bytes.ForFile(mapping("/bin/true")) >= 0);
  CHECK(bytes.ForFile(mapping("/bin/false")) == lcpi::kNoImage);
  CHECK(bytes.files_refused() == 1);
}
