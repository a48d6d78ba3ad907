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

namespace lcpi::testing {

struct Outcome {
  int status = -1000;  // exit code, or -signal
  std::string out;     // stdout and stderr together
};

// Runs argv with stdout and stderr captured; as user `as_user` if not empty
// (groups, gid and uid all dropped before exec).
inline Outcome RunOut(const std::vector<std::string>& argv, const std::string& as_user = "") {
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
    if (!as_user.empty() && (setgroups(0, nullptr) < 0 || setgid(gid) < 0 || setuid(uid) < 0))
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

// A status figure as a number (0 when absent).
inline uint64_t Num(const std::map<std::string, std::string>& status, const std::string& key) {
  auto it = status.find(key);
  return it == status.end() || it->second.empty() ? 0 : std::stoull(it->second);
}

// A temporary directory, removed at the end.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& name) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp ? tmp : "/tmp") + "/" + name + "-XXXXXX";
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Like DaemonFixture, but in a directory of the caller's choosing and with
// a flush interval of its choosing (lcpid refuses an option given twice, so
// DaemonFixture's 600 s cannot be overridden through its extra arguments).
class Lcpid {
 public:
  Lcpid(std::string dir, int flush_interval, std::vector<std::string> extra = {})
      : dir_(std::move(dir)), db_(dir_ + "/profiles.db"), socket_(dir_ + "/lcpid.sock") {
    args_ = {LCPID_PATH,
             "--foreground",
             "--db",
             db_,
             "--socket",
             socket_,
             "--log-level",
             "warn",
             "--flush-interval",
             std::to_string(flush_interval)};
    if (const char* source = std::getenv("LCPI_TEST_SOURCE"))
      args_.insert(args_.end(), {"--source", source});
    args_.insert(args_.end(), extra.begin(), extra.end());
    Start();
  }
  ~Lcpid() {
    if (pid_ > 0) Kill(SIGKILL);
  }
  void Start() {
    std::vector<char*> args;
    for (std::string& a : args_) args.push_back(a.data());
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], nullptr, nullptr, args.data(), environ) != 0) pid_ = -1;
    for (int i = 0; i < 300 && pid_ > 0 && Ctl("status").empty(); i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string Ctl(const std::string& verb) {
    return Capture(std::string(LCPICTL_PATH) + " --socket " + socket_ + " " + verb +
                   " 2>/dev/null");
  }
  std::map<std::string, std::string> Status() {
    std::map<std::string, std::string> kv;
    std::istringstream in(Ctl("status"));
    for (std::string line; std::getline(in, line);) {
      size_t sp = line.find(' ');
      if (sp != std::string::npos) kv[line.substr(0, sp)] = line.substr(sp + 1);
    }
    return kv;
  }
  int Kill(int sig) {
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  int Stop() { return Kill(SIGTERM); }
  bool running() const { return pid_ > 0; }
  const std::string& db_path() const { return db_; }

 private:
  std::string dir_, db_, socket_;
  std::vector<std::string> args_;
  pid_t pid_ = -1;
};

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_INTEGRATION_RELIABILITY_UTIL_H
