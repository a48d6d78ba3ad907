// ship_mark.cpp - see ship_mark.h.
#include "libprofile/store/ship_mark.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "libprofile/base/regular_file.h"

namespace lcpi {

Expected<int64_t> ReadShipMark(const std::string& path) {
  // lcpid reads this as root from a directory the shipper's user writes: no
  // symbolic link in any component (OpenRecordedFile), so a link planted
  // there cannot lead root's open to another file.
  Expected<int> fd = OpenRecordedFile(path);
  if (!fd) return fd.error();
  // A number is 20 characters at most: more is not a mark.
  Expected<std::string> text = ReadBounded(*fd, 0, 64, path);
  close(*fd);
  if (!text) return text.error();
  const char* begin = text->c_str();
  char* end = nullptr;
  errno = 0;
  const long long mark = std::strtoll(begin, &end, 10);
  while (end != nullptr && (*end == '\n' || *end == ' ')) ++end;
  if (end == begin || errno != 0 || *end != '\0' || mark < 0) {
    return Error(Errc::kInvalidArgument, "the ship mark " + path + " is not a time in seconds");
  }
  return static_cast<int64_t>(mark);
}

Expected<void> WriteShipMark(const std::string& path, int64_t mark) {
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) return ErrnoError("cannot write the ship mark " + tmp, errno);
  const std::string line = std::to_string(mark) + "\n";
  const bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const int write_errno = errno;
  if (close(fd) != 0 || !written) {
    unlink(tmp.c_str());
    return ErrnoError("cannot write the ship mark " + tmp, written ? errno : write_errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    return ErrnoError("cannot replace the ship mark " + path, e);
  }
  return {};
}

}  // namespace lcpi
