// public_file.cpp - OpenPublicParent and OpenPublicFile.
#include "libprofile/base/public_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "libprofile/base/regular_file.h"
#include "libprofile/base/unique_fd.h"

namespace lcpi {

namespace {

Error NotPublic(const std::string& path, const std::string& why) {
  return Error(Errc::kPermission, path + ": not readable by everyone (" + why + ")");
}

// File systems whose mode bits say who may read a file's bytes: disks,
// memory, unions of them and network/guest shares. Elsewhere (procfs,
// sysfs, debugfs, tracefs, securityfs, cgroup, bpf ...) a file's contents
// depend on who reads it, so 0444 there is no promise about what root sees.
bool OnDiskFileSystem(int fd) {
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // also ext2 and ext3
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case F2FS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case SQUASHFS_MAGIC:
    case EROFS_SUPER_MAGIC_V1:
    case ISOFS_SUPER_MAGIC:
    case MSDOS_SUPER_MAGIC:
    case EXFAT_SUPER_MAGIC:
    case NFS_SUPER_MAGIC:
    case CIFS_SUPER_MAGIC:
    case SMB2_SUPER_MAGIC:
    case CEPH_SUPER_MAGIC:
    case V9FS_MAGIC:        // the QEMU guests' shared directories
    case FUSE_SUPER_MAGIC:  // served by its user, with that user's rights
    case 0x2FC12FC1:        // ZFS (no <linux/magic.h> name)
      return true;
    default:
      return false;
  }
}

}  // namespace

Expected<UniqueFd> OpenPublicParent(int root, const std::string& path, std::string* name) {
  if (path.empty() || path[0] != '/') {
    return Error(Errc::kInvalidArgument, path + ": not an absolute path");
  }
  std::vector<std::string> parts;
  for (size_t at = 1; at <= path.size();) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(at, slash - at);
    at = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return Error(Errc::kInvalidArgument, path + ": has a '..' component");
    parts.push_back(std::move(part));
  }
  if (parts.empty()) return Error(Errc::kBadElf, path + ": not a regular file");

  // `root` itself is the first directory checked; the caller keeps its own.
  UniqueFd dir(fcntl(root, F_DUPFD_CLOEXEC, 0));
  if (dir.get() < 0) return ErrnoError(path, errno);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    struct stat ds;
    if (fstat(dir.get(), &ds) != 0) return ErrnoError(path, errno);
    if ((ds.st_mode & S_IXOTH) == 0) return NotPublic(path, "a directory others cannot search");
    // O_NOFOLLOW with O_PATH opens a symbolic link itself; O_DIRECTORY then
    // refuses it (ENOTDIR), as it refuses any other non-directory.
    int next = openat(dir.get(), parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOTDIR) {
      struct stat ls;
      if (fstatat(dir.get(), parts[i].c_str(), &ls, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(ls.st_mode)) {
        return NotPublic(path, "a symbolic link on the way");
      }
    }
    if (next < 0) return ErrnoError(path, errno);
    dir = UniqueFd(next);
  }
  struct stat ds;
  if (fstat(dir.get(), &ds) != 0) return ErrnoError(path, errno);
  if ((ds.st_mode & S_IXOTH) == 0) return NotPublic(path, "a directory others cannot search");
  *name = parts.back();
  return dir;
}

Expected<int> OpenPublicFile(const std::string& path, struct stat* st) {
  UniqueFd root(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) return ErrnoError("/", errno);
  std::string name;
  Expected<UniqueFd> dir = OpenPublicParent(root.get(), path, &name);
  if (!dir) return dir.error();
  // O_PATH: a device or FIFO named here (a binary's DWARF can name
  // /dev/watchdog as a source file) is looked at, never opened.
  int path_fd = openat(dir->get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (path_fd < 0) return ErrnoError(path, errno);
  struct stat link;
  if (fstat(path_fd, &link) == 0 && S_ISLNK(link.st_mode)) {
    close(path_fd);
    return NotPublic(path, "a symbolic link");
  }
  Expected<int> kept = ReopenRegularFile(path_fd, path, st);
  if (!kept) return kept;
  if (!OnDiskFileSystem(*kept)) {
    close(*kept);
    return NotPublic(path, "not on a disk file system: procfs, sysfs and the like show root more");
  }
  if ((st->st_mode & S_IROTH) == 0) {
    close(*kept);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st->st_mode & 07777));
    return NotPublic(path, std::string("mode ") + mode);
  }
  return kept;
}

}  // namespace lcpi
