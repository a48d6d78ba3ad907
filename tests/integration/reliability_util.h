// reliability_util.h - helpers shared by the reliability tests
// (reliability_test.cpp, churn_test.cpp, load_test.cpp): running a command
// as another user with its output, reading a daemon's figures from the
// database as one consistent snapshot, and lcpid's own status figures.
#ifndef LCPI_TESTS_INTEGRATION_RELIABILITY_UTIL_H
#define LCPI_TESTS_INTEGRATION_RELIABILITY_UTIL_H

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "daemon_fixture.h"
#include "tests/unit/sanitizer.h"

namespace lcpi::testing {

struct Outcome {
  int status = -1000;  // exit code, or -signal
  std::string out;     // stdout and stderr together
};

// Runs argv with stdout and stderr captured; as user `as_user` if not empty
// (groups, gid and uid all dropped before exec), then with `groups` as its
// only supplementary groups.
inline Outcome RunOut(const std::vector<std::string>& argv, const std::string& as_user = "",
                      const std::vector<gid_t>& groups = {}) {
  Outcome o;
  int fds[2];
  if (pipe(fds) < 0) return o;
  uid_t uid = 0;
  gid_t gid = 0;
  if (!as_user.empty()) {
    passwd* pw = getpwnam(as_user.c_str());
    if (!pw) return o;
    uid = pw->pw_uid;
    gid = pw->pw_gid;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    if (!as_user.empty() &&
        (setgroups(groups.size(), groups.data()) < 0 || setgid(gid) < 0 || setuid(uid) < 0))
      _exit(126);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;)
    o.out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return o;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// What a database holds over all epochs, read in one snapshot.
struct DbFigures {
  bool ok = false;                       // opened, and every query answered
  bool intact = false;                   // PRAGMA integrity_check passed
  uint64_t on_disk = 0;                  // sum of every image's counts
  std::map<std::string, int64_t> stats;  // daemon statistics, summed
  int64_t Stat(const std::string& name) const {
    auto it = stats.find(name);
    return it == stats.end() ? 0 : it->second;
  }
};

inline DbFigures ReadDb(const std::string& path) {
  DbFigures f;
  auto db = ProfileDb::Open(path, DbMode::kReadOnly);
  if (!db) return f;
  f.intact = static_cast<bool>((*db)->CheckIntegrity());
  if (!(*db)->BeginSnapshot()) return f;
  auto totals = (*db)->ImageTotals(kAllEpochs);
  auto stats = (*db)->Stats(kAllEpochs);
  (void)(*db)->EndSnapshot();
  if (!totals || !stats) return f;
  for (const ImageTotal& t : *totals) f.on_disk += t.count;
  f.stats = *stats;
  f.ok = true;
  return f;
}

// A bound on lcpid's peak RSS, given for a plain build and widened in an ASan
// build (lcpid is built in the same tree as the test): there ASan's shadow
// memory and its quarantine of freed blocks (up to 256 MiB) count too.
constexpr uint64_t PeakRssBound(uint64_t plain) {
  return kAddressSanitizer ? 2 * plain + (256ull << 20) : plain;
}

// A status figure as a number (0 when absent).
inline uint64_t Num(const std::map<std::string, std::string>& status, const std::string& key) {
  auto it = status.find(key);
  return it == status.end() || it->second.empty() ? 0 : std::stoull(it->second);
}

// A status line's value as text ("" when absent).
inline std::string Text(const std::map<std::string, std::string>& status, const std::string& key) {
  auto it = status.find(key);
  return it == status.end() ? "" : it->second;
}

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_INTEGRATION_RELIABILITY_UTIL_H
