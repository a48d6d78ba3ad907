// mapped_file.cpp - OpenMappedFile: the three places a mapped file is
// looked for, and the check that what was opened is what was mapped.
#include "libprofile/attribute/mapped_file.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>

#include "libprofile/base/regular_file.h"
#include "libprofile/image/image_id.h"

namespace lcpi {
namespace {

// O_PATH: what `where` names is looked at first, and opened for reading
// only if it is a regular file (ReopenRegularFile): a device or FIFO there
// is never opened.
constexpr int kFlags = O_PATH | O_CLOEXEC;

// `where` opened with open(2) `flags`, kept only if it is a regular file.
Expected<int> OpenChecked(const std::string& where, int flags, struct stat* st) {
  int path_fd = open(where.c_str(), flags);
  if (path_fd < 0) return ErrnoError(where, errno);
  return ReopenRegularFile(path_fd, where, st);
}

// PATH inside the process's root (OpenRegularFileInRoot: resolved as if
// that root were "/", so an absolute symbolic link in a container stays in
// the container; no magic /proc links, no final symbolic link).
Expected<int> OpenInRoot(const std::string& proc, uint32_t pid, const std::string& path,
                         struct stat* st) {
  std::string root = proc + "/" + std::to_string(pid) + "/root";
  int dir = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return ErrnoError(root, errno);
  Expected<int> fd = OpenRegularFileInRoot(dir, path.substr(path.find_first_not_of('/')), st);
  close(dir);
  return fd;
}

// Keeps the regular file `opened` (fstat in st) if it is the one m
// describes; else closes it. Says why not in *why.
bool Matches(Expected<int> opened, const struct stat& st, const std::string& where,
             const FileMapping& m, bool mapped_itself, MappedFile* out, std::string* why) {
  if (!opened) {
    *why += "; " + opened.error().message();
    return false;
  }
  int fd = *opened;
  bool same;
  if (!m.build_id.empty()) {
    Expected<ImageIdentity> id = IdentifyElfFd(fd, static_cast<uint64_t>(st.st_size), where);
    same = id && id->build_id == m.build_id;
  } else {
    same = SameInode(fd, st, m, mapped_itself);
  }
  if (!same) {
    close(fd);
    *why += "; " + where + ": a different file";
    return false;
  }
  out->fd = fd;
  out->size = static_cast<uint64_t>(st.st_size);
  out->via = where;
  return true;
}

}  // namespace

bool SameInode(int fd, const struct stat& st, const FileMapping& m, bool mapped_itself) {
  if (static_cast<uint64_t>(st.st_ino) != m.ino) return false;
  if (static_cast<uint64_t>(st.st_dev) != m.dev && !mapped_itself) return false;
  // An inode number reused after the mapped file was deleted: the
  // generation tells them apart on file systems that keep one.
  int generation = 0;
  if (m.generation && ioctl(fd, FS_IOC_GETVERSION, &generation) == 0)
    return static_cast<uint32_t>(generation) == *m.generation;
  return true;
}

Expected<MappedFile> OpenMappedFile(const FileMapping& m, const std::string& proc) {
  MappedFile out;
  std::string why;
  if (m.path.empty() || m.path[0] != '/')
    return Error(Errc::kInvalidArgument, "'" + m.path + "' is not an absolute path");
  // The mapped file itself, even deleted or in another mount namespace. Its
  // name is a kernel link to the open file (no path is looked up), so it is
  // followed; it needs CAP_SYS_ADMIN and a live process.
  char range[40];
  std::snprintf(range, sizeof range, "%" PRIx64 "-%" PRIx64, m.start, m.end);
  std::string map_file = proc + "/" + std::to_string(m.pid) + "/map_files/" + range;
  struct stat st;
  if (Matches(OpenChecked(map_file, kFlags, &st), st, map_file, m, true, &out, &why)) return out;
  std::string in_root = proc + "/" + std::to_string(m.pid) + "/root" + m.path;
  if (Matches(OpenInRoot(proc, m.pid, m.path, &st), st, in_root, m, false, &out, &why)) return out;
  // The process is gone (or its root unreadable): the host's file at that
  // path, only if it is the same file.
  if (Matches(OpenChecked(m.path, kFlags | O_NOFOLLOW, &st), st, m.path, m, false, &out, &why))
    return out;
  return Error(Errc::kNotFound, "cannot open the file mapped as " + m.path + why);
}

}  // namespace lcpi
