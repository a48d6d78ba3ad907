// image_cache_test.cpp - what a reader of the database is told when lcpid's
// copy of an image is one they may not read: a copy of a file others could
// not read is kept root-only, and the tools say so rather than "cannot read".
#include <catch2/catch.hpp>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "libprofile/image/image_cache.h"
#include "test_files.h"

namespace {

constexpr uid_t kNobody = 65534;

// What CachedImageDenied(path) says to nobody.
std::string DeniedToNobody(const std::string& path) {
  int out[2];
  REQUIRE(pipe(out) == 0);
  pid_t child = fork();
  if (child == 0) {
    close(out[0]);
    if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(126);
    std::string why = lcpi::CachedImageDenied(path);
    (void)!write(out[1], why.data(), why.size());
    _exit(0);
  }
  close(out[1]);
  std::string why;
  char buf[256];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) why.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return why;
}

}  // namespace

TEST_CASE("a root-only cached copy is named as such to a reader who may not open it") {
  if (geteuid() != 0) {
    WARN("needs root (a copy nobody may not read): not run");
    return;
  }
  lcpi::testing::TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  std::string secret = dir / "build-id-00", open_copy = dir / "build-id-01";
  lcpi::testing::WriteFile(secret, "x");
  lcpi::testing::WriteFile(open_copy, "x");
  REQUIRE(chmod(secret.c_str(), 0600) == 0);
  REQUIRE(chmod(open_copy.c_str(), 0644) == 0);
  CHECK(DeniedToNobody(secret) == "cached copy is root-only: the file was not readable by others");
  CHECK(DeniedToNobody(open_copy).empty());
  CHECK(lcpi::CachedImageDenied(secret).empty());  // root reads it
  CHECK(DeniedToNobody(dir / "absent").empty());   // no copy: nothing to explain
}
