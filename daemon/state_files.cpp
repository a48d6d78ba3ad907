// state_files.cpp - creating and tightening lcpid's database files.
#include "daemon/state_files.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace lcpi {
namespace {

// Sets mode and group on an open file when they differ; the owner stays.
Expected<void> Apply(int fd, const std::string& path, const StateAccess& access) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoError(path, errno);
  if (!S_ISREG(st.st_mode)) return Error(Errc::kBadElf, path + ": not a regular file");
  if (access.group_found && st.st_gid != access.gid && fchown(fd, -1, access.gid) != 0)
    return ErrnoError("chown " + path, errno);
  if ((st.st_mode & 07777) != access.file_mode && fchmod(fd, access.file_mode) != 0)
    return ErrnoError("chmod " + path, errno);
  return {};
}

// Opens an existing file at `path` without following a link or waiting on a
// FIFO and applies `access`; a missing file is fine.
Expected<void> Tighten(const std::string& path, const StateAccess& access) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Expected<void>() : ErrnoError(path, errno);
  Expected<void> ok = Apply(fd, path, access);
  close(fd);
  return ok;
}

}  // namespace

StateAccess ResolveStateAccess(const std::string& group) {
  StateAccess access;
  access.group = group;
  if (group.empty()) return access;
  if (const struct group* g = getgrnam(group.c_str())) {
    access.group_found = true;
    access.gid = g->gr_gid;
    access.file_mode = 0640;
    access.dir_mode = 0750;
  }
  return access;
}

Expected<void> PrepareStateFiles(const std::string& db_path, const StateAccess& access) {
  std::filesystem::path dir = std::filesystem::path(db_path).parent_path();
  if (!dir.empty() && mkdir(dir.c_str(), access.dir_mode) == 0) {
    // New: ours to set up (mkdir's mode is cut by the umask).
    if (access.group_found && chown(dir.c_str(), -1, access.gid) != 0)
      return ErrnoError("chown " + dir.string(), errno);
    if (chmod(dir.c_str(), access.dir_mode) != 0) return ErrnoError("chmod " + dir.string(), errno);
  } else if (!dir.empty() && errno != EEXIST) {
    return ErrnoError("mkdir " + dir.string(), errno);
  }
  int fd =
      open(db_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, access.file_mode);
  if (fd >= 0) {
    Expected<void> ok = Apply(fd, db_path, access);
    close(fd);
    if (!ok) return ok;
  } else if (errno != EEXIST) {
    return ErrnoError(db_path, errno);
  }
  for (const char* suffix : {"", "-wal", "-shm"}) {
    Expected<void> ok = Tighten(db_path + suffix, access);
    if (!ok) return ok;
  }
  return {};
}

}  // namespace lcpi
