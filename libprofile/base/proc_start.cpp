// proc_start.cpp - a process's start time from /proc/PID/stat (proc_start.h).
#include "libprofile/base/proc_start.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "libprofile/base/clock_ns.h"
#include "libprofile/base/text.h"
#include "libprofile/base/unique_fd.h"

namespace lcpi {
namespace {

// The stat line is under 1 KB: 52 numbers and a 16-byte name.
std::string ReadStat(int fd) {
  std::string text(4096, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return StartTicksOf(text);
}

}  // namespace

std::string StartTicksOf(std::string_view stat) {
  // The command name (field 2) may hold blanks and parentheses, so fields
  // are counted after the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return "";
  stat.remove_prefix(close + 1);
  for (int field = 3; field <= 22; field++) {
    size_t begin = stat.find_first_not_of(" \n");
    if (begin == std::string_view::npos) return "";
    stat.remove_prefix(begin);
    size_t end = std::min(stat.find_first_of(" \n"), stat.size());
    if (field == 22) {
      std::string ticks(stat.substr(0, end));
      return ParseDecimal(ticks) ? ticks : "";
    }
    stat.remove_prefix(end);
  }
  return "";
}

std::string StartTicks(const std::string& stat_path) {
  UniqueFd fd(open(stat_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  return fd.get() < 0 ? "" : ReadStat(fd.get());
}

std::string StartTicksAt(int proc_pid_dir) {
  UniqueFd fd(openat(proc_pid_dir, "stat", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  return fd.get() < 0 ? "" : ReadStat(fd.get());
}

uint64_t BoottimeNs() { return ClockNs(CLOCK_BOOTTIME); }

uint64_t TicksToNs(uint64_t ticks) {
  static const uint64_t per_second = static_cast<uint64_t>(sysconf(_SC_CLK_TCK));
  return ticks / per_second * 1000000000ull + ticks % per_second * 1000000000ull / per_second;
}

}  // namespace lcpi
