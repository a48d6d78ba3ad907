// regular_file.cpp - opening files someone else named, regular files only.
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

Expected<int> ReopenRegularFile(int path_fd, const std::string& name, struct stat* st) {
  struct stat was;
  if (fstat(path_fd, &was) != 0) {
    int err = errno;
    close(path_fd);
    return ErrnoError(name, err);
  }
  if (!S_ISREG(was.st_mode)) {
    close(path_fd);
    return Error(Errc::kBadElf, name + (S_ISLNK(was.st_mode) ? ": a symbolic link, not followed"
                                                             : ": not a regular file"));
  }
  // The same inode, opened for reading: /proc/self/fd/N names the file the
  // O_PATH descriptor holds, whatever the path names by now. O_NONBLOCK
  // and O_NOCTTY in case that ever were not a regular file.
  const std::string self = "/proc/self/fd/" + std::to_string(path_fd);
  int fd = open(self.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  int err = errno;
  close(path_fd);
  if (fd < 0) return ErrnoError(name, err);
  return KeepRegularFile(fd, name, st);
}

Expected<int> OpenRegularFile(const std::string& path, uint64_t* size) {
  int path_fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (path_fd < 0) return ErrnoError(path, errno);
  struct stat st;
  Expected<int> kept = ReopenRegularFile(path_fd, path, &st);
  if (kept && size) *size = static_cast<uint64_t>(st.st_size);
  return kept;
}

Expected<int> OpenRecordedFile(const std::string& path, uint64_t* size, uint64_t max_size) {
  // No symbolic link in any component, no magic link (/proc/PID/root,
  // /proc/PID/fd/N): a link planted in a directory the user owns would
  // otherwise lead root's open anywhere. The kernel records paths resolved
  // (d_path), so a true recorded path has no link to follow.
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int path_fd = static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
  if (path_fd < 0) {
    if (errno == ELOOP) return Error(Errc::kBadElf, path + ": a symbolic link, not followed");
    if (errno == ENOSYS) return Error(Errc::kUnsupported, path + ": openat2 is not available");
    return ErrnoError(path, errno);
  }
  struct stat st;
  Expected<int> kept = ReopenRegularFile(path_fd, path, &st);
  if (!kept) return kept;
  const int fd = *kept;
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
  how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  // glibc 2.36 has no openat2() wrapper.
  int path_fd = static_cast<int>(syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof how));
  if (path_fd < 0) {
    if (errno == ENOSYS) return Error(Errc::kUnsupported, path + ": openat2 is not available");
    return ErrnoError(path, errno);
  }
  struct stat unused;
  return ReopenRegularFile(path_fd, path, st ? st : &unused);
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
