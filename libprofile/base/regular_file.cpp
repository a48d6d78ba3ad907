// regular_file.cpp - OpenRegularFile.
#include "libprofile/base/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace lcpi {

Expected<int> OpenRegularFile(const std::string& path, uint64_t* size) {
  // O_NONBLOCK: a FIFO opens at once instead of waiting for a writer (and
  // is then refused below); on a regular file it changes nothing.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, errno);
  struct stat st;
  Expected<int> kept = KeepRegularFile(fd, path, &st);
  if (kept && size) *size = static_cast<uint64_t>(st.st_size);
  return kept;
}

Expected<int> KeepRegularFile(int fd, const std::string& name, struct stat* st) {
  if (fstat(fd, st) != 0) {
    int err = errno;
    close(fd);
    return ErrnoError(name, err);
  }
  if (!S_ISREG(st->st_mode)) {
    close(fd);
    return Error(Errc::kBadElf, name + ": not a regular file");
  }
  return fd;
}

}  // namespace lcpi
