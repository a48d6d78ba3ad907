// daemon_fixture.h - runs a real lcpid on a temporary database and control
// socket for one test, and reads back what it wrote.
#ifndef LCPI_TESTS_INTEGRATION_DAEMON_FIXTURE_H
#define LCPI_TESTS_INTEGRATION_DAEMON_FIXTURE_H

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "libprofile/store/profile_db.h"

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

// A temporary directory, removed at the end.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& name) {
    // TMPDIR: in the QEMU guest /tmp is the host's, read-only
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp ? tmp : "/tmp") + "/" + name + "-XXXXXX";
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// A real lcpid (perf source, or LCPI_TEST_SOURCE=kmod through /dev/lcpi in
// the guest) on a database and control socket in dir, flushing every
// flush_interval seconds; killed at the end if still running.
class Lcpid {
 public:
  Lcpid(const std::string& dir, int flush_interval, std::vector<std::string> extra = {})
      : db_(dir + "/profiles.db"), socket_(dir + "/lcpid.sock") {
    args_ = {LCPID_PATH, "--foreground", "--log-level", "warn", "--db", db_, "--socket", socket_};
    args_.insert(args_.end(), {"--flush-interval", std::to_string(flush_interval)});
    if (const char* source = std::getenv("LCPI_TEST_SOURCE"))
      args_.insert(args_.end(), {"--source", source});
    // At the rate asked, whatever it costs: these tests count samples across
    // windows and between runs; the governor has its own (budget_test.cpp).
    if (std::find(extra.begin(), extra.end(), "--max-overhead") == extra.end())
      args_.insert(args_.end(), {"--max-overhead", "0"});
    args_.insert(args_.end(), extra.begin(), extra.end());
    Start();
  }
  ~Lcpid() {
    if (pid_ > 0) Kill(SIGKILL);
  }
  Lcpid(const Lcpid&) = delete;
  Lcpid& operator=(const Lcpid&) = delete;

  // Starts lcpid (again, after Kill or Stop); returns when its socket answers.
  void Start() {
    std::vector<char*> args;
    for (std::string& a : args_) args.push_back(a.data());
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], nullptr, nullptr, args.data(), environ) != 0) pid_ = -1;
    for (int i = 0; i < 300 && pid_ > 0 && Ctl("status").empty(); i++)
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
  pid_t pid() const { return pid_; }

  std::unique_ptr<ProfileDb> OpenDb() {
    auto db = ProfileDb::Open(db_, DbMode::kReadOnly);
    return db ? std::move(*db) : nullptr;
  }
  const std::string& db_path() const { return db_; }
  const std::string& socket_path() const { return socket_; }

 private:
  std::string db_, socket_;
  std::vector<std::string> args_;
  pid_t pid_ = -1;
};

// lcpid in a temporary directory of its own, flushing only when asked (its
// interval is 600 s): what most daemon tests need.
class DaemonFixture : private TempDir, public Lcpid {
 public:
  explicit DaemonFixture(std::vector<std::string> extra = {})
      : TempDir("lcpi-daemon-test"), Lcpid(TempDir::path, 600, std::move(extra)) {}
};

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_INTEGRATION_DAEMON_FIXTURE_H
