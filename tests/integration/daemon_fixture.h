// daemon_fixture.h - runs a real lcpid (perf source) on a temporary database
// and control socket for one test, and reads back what it wrote.
#ifndef LCPI_TESTS_INTEGRATION_DAEMON_FIXTURE_H
#define LCPI_TESTS_INTEGRATION_DAEMON_FIXTURE_H

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "libprofile/profile_db.h"

extern char** environ;

namespace lcpi::testing {

// Runs argv, waits; returns the exit status (or -signal).
inline int Run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1000;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// Output of a shell command.
inline std::string Capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

class DaemonFixture {
 public:
  explicit DaemonFixture(std::vector<std::string> extra = {}) {
    // TMPDIR: in the QEMU guest /tmp is the host's, read-only
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp ? tmp : "/tmp") + "/lcpi-daemon-test-XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    // LCPI_TEST_SOURCE=kmod runs the same tests through /dev/lcpi (in the guest)
    if (const char* source = std::getenv("LCPI_TEST_SOURCE"))
      extra.insert(extra.begin(), {"--source", source});
    db_ = dir_ + "/profiles.db";
    socket_ = dir_ + "/lcpid.sock";
    extra_ = std::move(extra);
    Start();
  }
  ~DaemonFixture() {
    if (pid_ > 0) Kill(SIGKILL);
    std::system(("rm -rf " + dir_).c_str());
  }

  void Start() {
    std::vector<std::string> argv = {LCPID_PATH,         "--foreground", "--db",        db_,
                                     "--socket",         socket_,        "--log-level", "warn",
                                     "--flush-interval", "600"};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn(&pid_, args[0], nullptr, nullptr, args.data(), environ);
    // Ready when the control socket answers.
    for (int i = 0; i < 300 && Ctl("status").empty(); i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The reply body of an lcpictl request; empty if lcpid did not answer.
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
  // Sends sig and waits; returns the exit status (or -signal).
  int Kill(int sig) {
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  int Stop() { return Kill(SIGTERM); }
  bool running() const { return pid_ > 0; }

  std::unique_ptr<ProfileDb> OpenDb() {
    auto db = ProfileDb::Open(db_, DbMode::kReadOnly);
    return db ? std::move(*db) : nullptr;
  }
  const std::string& db_path() const { return db_; }

 private:
  std::string dir_, db_, socket_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
};

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_INTEGRATION_DAEMON_FIXTURE_H
