// main.cpp - lcpid: parse the command line, set up logging, daemonize (the
// parent returns only once sampling has started, with the daemon's verdict),
// write the pid file, run.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>

#include "daemon/daemon.h"
#include "daemon/options.h"

namespace {

void SetUpLogging(const lcpi::DaemonOptions& o) {
  if (o.foreground) {
    spdlog::set_default_logger(spdlog::stderr_color_mt("lcpid"));
  } else {
    if (!o.log_file.empty())
      spdlog::set_default_logger(spdlog::basic_logger_mt("lcpid", o.log_file));
    else
      spdlog::set_default_logger(spdlog::syslog_logger_mt("lcpid", "lcpid", LOG_PID, LOG_DAEMON));
  }
  spdlog::set_level(spdlog::level::from_str(o.log_level));
  spdlog::flush_on(spdlog::level::info);
}

// Writes our pid, replacing an old pid file but never following a link
// planted at its path; every write checked.
lcpi::Expected<void> WritePidFile(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return lcpi::ErrnoError("pid file " + path, errno);
  std::string text = std::to_string(getpid()) + "\n";
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int err = errno;
  if (close(fd) != 0 && ok) ok = false, err = errno;
  if (!ok) return lcpi::ErrnoError("pid file " + path, err);
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  lcpi::DaemonOptions options;
  if (int rc = lcpi::ParseDaemonOptions(argc, argv, &options); rc >= 0) return rc;
  if (geteuid() != 0) {
    std::fprintf(stderr, "lcpid: must run as root (system-wide perf events, %s)\n",
                 options.socket.c_str());
    return 1;
  }
  int ready[2] = {-1, -1};
  if (!options.foreground) {
    if (pipe(ready) < 0) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child > 0) {
      close(ready[1]);
      char verdict = 1;
      if (read(ready[0], &verdict, 1) != 1) verdict = 1;
      if (verdict != 0) std::fprintf(stderr, "lcpid: failed to start (see the log)\n");
      return verdict;
    }
    close(ready[0]);
    setsid();
    if (chdir("/") < 0) return 1;
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
  }
  SetUpLogging(options);
  lcpi::Daemon daemon(options);
  lcpi::Expected<void> started = daemon.Start();
  if (!started) {
    spdlog::critical("lcpid: {}", started.error().ToString());  // stderr in the foreground
    if (ready[1] >= 0) {
      char verdict = 1;
      (void)!write(ready[1], &verdict, 1);
    }
    return 1;
  }
  if (!options.foreground) {
    if (lcpi::Expected<void> written = WritePidFile(options.pid_file); !written) {
      // A service manager that cannot find the pid cannot stop us: fail now.
      spdlog::critical("lcpid: {}", written.error().ToString());
      char verdict = 1;
      (void)!write(ready[1], &verdict, 1);
      return 1;
    }
    char verdict = 0;
    (void)!write(ready[1], &verdict, 1);
    close(ready[1]);
  }
  int rc = daemon.Run();
  if (!options.foreground) unlink(options.pid_file.c_str());
  if (daemon.left_threads_behind()) {
    // Everything is flushed. A thread blocked in a system call on a hung
    // mount cannot be joined: destructors and exit handlers would race with
    // it, and LeakSanitizer's, which stops every thread, would wait on it
    // for ever. Leave without them.
    spdlog::shutdown();
    _exit(rc);
  }
  return rc;
}
