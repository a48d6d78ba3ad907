// hung_mount.h - a FUSE file system (tests/integration/workloads/hang_fs)
// that stops answering on demand, as a network mount does when its server
// goes away; for the unit tests of code that must not wait on one. Needs
// root and the hang_fs workload (built with libfuse3): available() says.
#ifndef LCPI_TESTS_UNIT_HUNG_MOUNT_H
#define LCPI_TESTS_UNIT_HUNG_MOUNT_H

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace lcpi::testing {

class HungMount {
 public:
  static std::string Server() {
    return std::string(LCPI_BINARY_DIR) + "/tests/integration/workloads/hang_fs";
  }
  static bool available() { return geteuid() == 0 && access(Server().c_str(), X_OK) == 0; }

  // Serves `files` copies of `source` at dir/prog0...
  HungMount(const std::string& source, int files, const std::string& dir) : dir_(dir) {
    std::filesystem::create_directories(dir);
    pid_ = fork();
    if (pid_ == 0) {
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      std::string n = std::to_string(files);
      execl(Server().c_str(), "hang_fs", source.c_str(), n.c_str(), dir.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 200 && !mounted(); i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    // One close while it answers, so that later closes do not wait on it
    // for a FLUSH (see tests/integration/hostile_test.cpp).
    if (int fd = open(File(0).c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) close(fd);
  }
  ~HungMount() {
    // Its death aborts the pending requests: whoever waited gets an error.
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    (void)!std::system(("umount -l " + dir_ + " 2>/dev/null").c_str());
  }
  HungMount(const HungMount&) = delete;
  HungMount& operator=(const HungMount&) = delete;

  bool mounted() const { return std::filesystem::exists(File(0)); }
  // From now on nothing on it is answered: returns once every thread of
  // the server has stopped (one still running could answer a request sent
  // after Hang, on a loaded host).
  void Hang() {
    kill(pid_, SIGSTOP);
    for (int i = 0; i < 500 && !Stopped(); i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string File(int k) const { return dir_ + "/prog" + std::to_string(k); }

 private:
  bool Stopped() const {
    std::string tasks = "/proc/" + std::to_string(pid_) + "/task";
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
      std::ifstream in(t.path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      size_t paren = stat.rfind(')');  // the state follows the command name
      if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
      char state = stat[paren + 2];
      if (state != 'T' && state != 't') return false;
    }
    return !ec;
  }

  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_HUNG_MOUNT_H
