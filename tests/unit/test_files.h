// test_files.h - temporary directories and small file and shell helpers
// shared by the unit tests that build real binaries or write fixture files.
#ifndef LCPI_TESTS_UNIT_TEST_FILES_H
#define LCPI_TESTS_UNIT_TEST_FILES_H

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sanitizer.h"

namespace lcpi::testing {

// A fresh directory under $TMPDIR (default /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "lcpi-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string File(const std::string& name) const { return *this / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Caps this process's address space at `bytes` (for a child of
// ExitStatusWithin: what runs away then aborts with bad_alloc instead of
// taking the host's memory). Not under AddressSanitizer, whose shadow
// already reserves terabytes of address space: there every later mmap
// would fail, and ASan aborts on that instead of throwing.
inline void LimitAddressSpace(unsigned long long bytes) {
  if (kAddressSanitizer) return;
  rlimit limit{bytes, bytes};
  setrlimit(RLIMIT_AS, &limit);
}

inline void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  REQUIRE(out.good());
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a shell command that must succeed.
inline void Run(const std::string& cmd) {
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

// Runs `body` in a child process that SIGALRM kills after `seconds`, and
// returns its exit status (body's return value), or 128 + the signal that
// ended it: 128 + SIGALRM (142) means it hung. An exception out of body
// (std::bad_alloc) is said on stderr and ends the child with 125, rather than
// running the rest of the test case in it. For calls that must never wait on
// another process, whose failure would otherwise hang the test.
template <class Body>
int ExitStatusWithin(unsigned seconds, Body body) {
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    alarm(seconds);
    int status = 125;
    try {
      status = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ExitStatusWithin: exception: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "ExitStatusWithin: exception\n");
    }
    _exit(status);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_TEST_FILES_H
