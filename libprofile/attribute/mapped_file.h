// mapped_file.h - opening the file a process mapped, as that process sees it.
//
// A path in a mapping record is the process's path: in a container or a
// private mount namespace the host may have no file there, or a different
// one. So the file is opened through the process (/proc/PID/map_files/
// START-END, the mapped file itself; then /proc/PID/root/PATH), and the host
// path is only a last resort once the process is gone; whatever is opened
// must be the file the kernel described, or it is not used.
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_MAPPED_FILE_H
#define LCPI_LIBPROFILE_ATTRIBUTE_MAPPED_FILE_H

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

#include "libprofile/base/error.h"

namespace lcpi {

// What the kernel said about a file mapping of process pid.
struct FileMapping {
  uint32_t pid = 0;
  uint64_t start = 0, end = 0;  // the mapping's range
  std::string path;             // as the process sees it
  std::string build_id;         // hex, when the MMAP2 record carried one
  // Else the file's device (user-space dev_t, makedev(major, minor): both
  // perf's MMAP2 and /proc/PID/maps give major and minor apart) and inode,
  // and the inode's generation when MMAP2 gave it.
  uint64_t dev = 0, ino = 0;
  std::optional<uint32_t> generation;
};

struct MappedFile {
  int fd = -1;  // read-only, regular; the caller closes it
  uint64_t size = 0;
  std::string via;  // where it was opened: "/proc/PID/map_files/...", ...
};

// Whether the open file `fd` (fstat in st) is the one m describes: same
// device and inode, and same generation where both sides know it. Not for
// mappings known by build-id (the kernel gives no device and inode then).
// mapped_itself: fd came from /proc/PID/map_files, the mapped file itself
// unless the pid or the range was reused since; the inode (and generation)
// then suffice, because stat's device may differ from the one the kernel
// reports for mappings (a btrfs subvolume's, not its file system's).
bool SameInode(int fd, const struct stat& st, const FileMapping& m, bool mapped_itself = false);

// Opens the file m maps: /proc/PID/map_files/START-END, then PATH inside
// /proc/PID/root, then PATH on the host, each without following a final
// symbolic link or waiting on a FIFO (regular files only), and returns the
// first that is the file the kernel described: same device and inode, or,
// for a mapping known by build-id, same build-id. Error kNotFound (saying
// why each place failed) when none is.
Expected<MappedFile> OpenMappedFile(const FileMapping& m, const std::string& proc = "/proc");

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_MAPPED_FILE_H
