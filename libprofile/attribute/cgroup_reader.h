// cgroup_reader.h - each process's cgroup, read from /proc/PID/cgroup when
// lcpid first sees the process run a program (its exec, or the /proc scan
// at start) and never per sample. A fork inherits its parent's (the kernel
// does the same) and an exec keeps it; lcpid reads it again at the exec,
// since a service manager or container runtime moves its child between
// fork and exec. The text is parsed by base/cgroup_label.h.
//
// Bounded: the paths are interned, at most max_paths distinct ones held (a
// path no address space uses any more is let go when the table is full);
// a path refused (malformed, over kMaxCgroupPath) or beyond the bound
// leaves the process in no known cgroup, and is counted, as a process gone
// before its file was read is.
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_CGROUP_READER_H
#define LCPI_LIBPROFILE_ATTRIBUTE_CGROUP_READER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <absl/container/flat_hash_map.h>

namespace lcpi {

// A cgroup path shared by the address spaces in it; null: not known.
using CgroupRef = std::shared_ptr<const std::string>;

struct CgroupReadStats {
  uint64_t read = 0;        // files read and kept
  uint64_t gone = 0;        // the process ended before its file was read
  uint64_t refused = 0;     // a file or path refused (cgroup_label.h)
  uint64_t over_bound = 0;  // a new path while max_paths were held and in use
  size_t paths = 0;         // distinct paths held now
};

class CgroupReader {
 public:
  static constexpr size_t kDefaultMaxPaths = 4096;
  explicit CgroupReader(std::string proc = "/proc", size_t max_paths = kDefaultMaxPaths);

  // pid's cgroup now; null when it cannot be known (see the counts).
  CgroupRef Read(uint32_t pid);
  // The one shared copy of `path`; null over the bound.
  CgroupRef Intern(std::string_view path);
  CgroupReadStats stats() const;

 private:
  std::string proc_;
  size_t max_paths_;
  CgroupReadStats stats_;
  absl::flat_hash_map<std::string, CgroupRef> paths_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_CGROUP_READER_H
