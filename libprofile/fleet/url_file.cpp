// url_file.cpp - the ClickHouse URL read from a file (url_file.h).
#include "libprofile/fleet/url_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace lcpi::fleet {

Expected<std::string> ReadUrlFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return ErrnoError("URL file " + path, errno);
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return ErrnoError("URL file " + path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return Error(Errc::kInvalidArgument, "URL file " + path + " is not a regular file");
  }
  if ((st.st_mode & 0007) != 0) {
    close(fd);
    return Error(Errc::kPermission,
                 "URL file " + path +
                     " is one others may read, and it holds ClickHouse's password: "
                     "chmod o= " +
                     path +
                     " (e.g. 0640 root:lcpi-ship, or a systemd "
                     "credential, docs/fleet.md)");
  }
  constexpr size_t kMax = 64 * 1024;
  std::string text;
  char buf[4096];
  while (text.size() <= kMax) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return ErrnoError("URL file " + path, err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (text.size() > kMax) {
    return Error(Errc::kInvalidArgument, "URL file " + path + " is longer than 64 KiB");
  }
  text = text.substr(0, text.find('\n'));
  const char* space = " \t\r";
  const size_t first = text.find_first_not_of(space);
  if (first == std::string::npos) {
    return Error(Errc::kInvalidArgument, "URL file " + path + " is empty (want one line: the URL)");
  }
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

}  // namespace lcpi::fleet
