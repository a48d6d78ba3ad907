// regular_file.cpp - OpenRegularFile.
#include "libprofile/base/regular_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
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

Expected<int> OpenRecordedFile(const std::string& path, uint64_t* size, uint64_t max_size) {
  // No symbolic link in any component, no magic link (/proc/PID/root,
  // /proc/PID/fd/N): a link planted in a directory the user owns would
  // otherwise lead root's open anywhere. The kernel records paths resolved
  // (d_path), so a true recorded path has no link to follow.
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
  if (fd < 0) {
    if (errno == ELOOP) return Error(Errc::kBadElf, path + ": a symbolic link, not followed");
    if (errno == ENOSYS) return Error(Errc::kUnsupported, path + ": openat2 is not available");
    return ErrnoError(path, errno);
  }
  struct stat st;
  Expected<int> kept = KeepRegularFile(fd, path, &st);
  if (!kept) return kept;
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) {
    int err = errno;
    close(fd);
    return ErrnoError(path, err);
  }
  if (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC) {
    close(fd);
    return Error(Errc::kBadElf, path + ": on procfs or sysfs, not an image");
  }
  if (static_cast<uint64_t>(st.st_size) > max_size) {
    close(fd);
    return Error(Errc::kInvalidArgument, path + ": larger than " + std::to_string(max_size) +
                                             " bytes (" + std::to_string(st.st_size) + ")");
  }
  if (size) *size = static_cast<uint64_t>(st.st_size);
  return fd;
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

Expected<int> OpenRegularFileInRoot(int root_fd, const std::string& path, struct stat* st) {
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  // glibc 2.36 has no openat2() wrapper.
  int fd = static_cast<int>(syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof how));
  if (fd < 0) {
    if (errno == ENOSYS) return Error(Errc::kUnsupported, path + ": openat2 is not available");
    return ErrnoError(path, errno);
  }
  struct stat unused;
  return KeepRegularFile(fd, path, st ? st : &unused);
}

Expected<std::string> ReadBounded(int fd, uint64_t offset, uint64_t max, const std::string& name) {
  std::string data(static_cast<size_t>(max), '\0');
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = pread(fd, data.data() + got, data.size() - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(name, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  return data;
}

}  // namespace lcpi
