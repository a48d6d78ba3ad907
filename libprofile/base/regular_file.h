// regular_file.h - opening files that someone else named: images mapped by
// other users' processes, debug files, /sys notes. Such a path may lead to a
// FIFO (open would wait for a writer for ever), a device (opening it is an
// act: a watchdog starts, a tape rewinds) or a terminal, so every such open
// goes through here: the name is opened O_PATH, which does nothing to what
// it names, and reopened for reading only if it is a regular file.
#ifndef LCPI_LIBPROFILE_BASE_REGULAR_FILE_H
#define LCPI_LIBPROFILE_BASE_REGULAR_FILE_H

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "libprofile/base/error.h"

namespace lcpi {

// A read-only descriptor of the regular file at `path`, which the caller
// closes. Errors: those of open(2) (kNotFound, kPermission, kIo) and kBadElf
// "not a regular file" for FIFOs, sockets, devices and directories, returned
// at once: nothing here waits on another process. With `size`, the file's
// size from the same fstat that checked it.
Expected<int> OpenRegularFile(const std::string& path, uint64_t* size = nullptr);

// The same for `path` inside another process's view of the file system:
// root_fd is a directory descriptor of its root (/proc/PID/root), which
// stays usable after the process has exited. The path is resolved as if
// root_fd were "/" (absolute symlinks and ".." cannot leave it), magic
// links such as /proc/self/fd/N are refused, and so is a symlink as the
// last component (a link planted at the path would otherwise open whatever
// file it names with the caller's privileges). With `st`, the fstat that
// checked it (size, owner, device and inode). Errors as OpenRegularFile's;
// kUnsupported on kernels without openat2 (before 5.6).
Expected<int> OpenRegularFileInRoot(int root_fd, const std::string& path,
                                    struct stat* st = nullptr);

// The check OpenRegularFile makes, for a descriptor the caller opened some
// other way (O_NONBLOCK | O_NOCTTY, e.g. relative to a process's root): fd
// back if it is a regular file, with its fstat in *st; else fd is closed and
// the error names `name`.
Expected<int> KeepRegularFile(int fd, const std::string& name, struct stat* st);

// The regular file an O_PATH descriptor holds, opened read-only through
// /proc/self/fd (the same inode, whatever its path names by now), with its
// fstat in *st; anything else (a symbolic link held with O_NOFOLLOW, a FIFO,
// a device) is never opened. path_fd is closed in every case; errors name
// `name`.
Expected<int> ReopenRegularFile(int path_fd, const std::string& name, struct stat* st);

// The largest file OpenRecordedFile opens by default: no image is near it.
inline constexpr uint64_t kMaxRecordedFileSize = uint64_t{8} << 30;

// A path recorded in the profile (an image's, a debug file's, a source
// file's: chosen by some user) opened for the analysis tools by the
// daemon's rules: OpenRegularFile's (no FIFO, device, socket, terminal,
// directory), no symbolic link in any component and no magic link
// (openat2 RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: kUnsupported on
// kernels before 5.6, so refused there), nothing
// on procfs or sysfs (fstatfs: /proc/kcore is a "regular file" of all of
// memory), and at most `max_size` bytes (kInvalidArgument "larger than").
// Refusals are kBadElf/kInvalidArgument saying why; open's errors as ever.
Expected<int> OpenRecordedFile(const std::string& path, uint64_t* size = nullptr,
                               uint64_t max_size = kMaxRecordedFileSize);

// Up to `max` bytes of the open file `fd` from `offset` (fewer at its end),
// retrying interrupted reads; errors name `name`. For files another user
// writes, which may be large or still growing: the bound is the caller's.
Expected<std::string> ReadBounded(int fd, uint64_t offset, uint64_t max, const std::string& name);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_REGULAR_FILE_H
