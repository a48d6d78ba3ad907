// public_file.h - opening a file only when every user of the host may read
// it. For paths that someone else wrote into a file the tools read as root:
// the source paths of an image's DWARF line table (`#line 1 "/etc/shadow"`
// costs its author nothing). Reading such a file with the tool's own rights
// would print what its author could not read; reading it only when everyone
// may read it prints nothing its author could not have read.
#ifndef LCPI_LIBPROFILE_BASE_PUBLIC_FILE_H
#define LCPI_LIBPROFILE_BASE_PUBLIC_FILE_H

#include <sys/stat.h>

#include <string>

#include "libprofile/base/error.h"
#include "libprofile/base/unique_fd.h"

namespace lcpi {

// The rule both OpenPublicFile and the image cache (image_cache_writer.cpp:
// may the readers' group read a copy?) apply, written once: whether others
// may reach the file at the absolute `path`, as seen from the directory
// `root` (an open descriptor, O_PATH will do: "/" for the tools, a process's
// /proc/PID/root for the files it maps). `root` and every directory below it
// on the way have the others-search bit (S_IXOTH). The path is walked one
// directory descriptor at a time (openat, O_NOFOLLOW), so a directory
// swapped during the walk cannot lead it elsewhere (nor an absolute link
// out of a process's root); no component may be a symbolic link or "..".
// Mode bits only: ACLs are not consulted. Returns the O_PATH descriptor of
// the file's directory and sets *name to the file's name in it: the file
// itself is not looked at (its own checks are the caller's). Errors:
// kPermission "<path>: not readable by everyone (why)" for a mode bit or a
// symbolic link, kInvalidArgument for a relative path or "..", kBadElf
// "not a regular file" for "/" alone, and errno's.
Expected<UniqueFd> OpenPublicParent(int root, const std::string& path, std::string* name);

// A read-only descriptor of the regular file at the absolute `path`, which
// the caller closes, when others may read it: OpenPublicParent from "/",
// and the file has the others-read bit (S_IROTH) and is no symbolic link.
// Only on disk-like file systems (ext4, xfs, btrfs,
// tmpfs, overlay, 9p, NFS, fuse ...: an allowlist): on procfs, sysfs and
// the other pseudo file systems a file's contents depend on who reads it,
// so they are refused whatever the mode. *st is the file's fstat.
// Errors: kPermission "<path>: not readable by everyone" (a mode bit, a
// symbolic link), kInvalidArgument for a relative path or "..", and those of
// OpenRegularFile (a FIFO, device or directory is refused, never waited on).
Expected<int> OpenPublicFile(const std::string& path, struct stat* st);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_PUBLIC_FILE_H
