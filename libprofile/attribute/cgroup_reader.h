// cgroup_reader.h - each process's cgroup, read from /proc/PID/cgroup when
// lcpid first sees the process run a program (its exec, or the /proc scan
// at start) and never per sample. A fork is where its parent is (the kernel
// puts it there); an exec is in no known cgroup until its own file is read,
// since a service manager or container runtime moves its child between
// fork and exec. The text is parsed by base/cgroup_label.h.
//
// Off lcpid's loop: reading the file takes the kernel's cgroup_mutex on
// older kernels, which any user can keep busy (writing cgroup.procs, mkdir),
// so the reads run on the lookups (base/lookup_worker.h), at most
// max_pending at once; one more is not read (counted: overflow) and its
// process stays in no known cgroup. A read checks the process's start time
// (base/proc_start.h): a process that started after its exec was seen is
// another one with the pid, and is not taken for it (counted: reused).
//
// Bounded: the paths are interned, at most max_paths distinct ones held (a
// path no address space uses any more is let go when the table is full);
// a new path beyond the bound is given its nearest ancestor held, or none
// (counted: over_bound); a path refused (malformed, over kMaxCgroupPath)
// leaves the process in no known cgroup, and is counted, as a process gone
// before its file was read is.
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_CGROUP_READER_H
#define LCPI_LIBPROFILE_ATTRIBUTE_CGROUP_READER_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <absl/container/flat_hash_map.h>

namespace lcpi {

class LookupWorker;

// A cgroup path shared by the address spaces in it; null: not known.
using CgroupRef = std::shared_ptr<const std::string>;

struct CgroupReadStats {
  uint64_t read = 0;        // files read and kept
  uint64_t gone = 0;        // the process ended before its file was read
  uint64_t reused = 0;      // its pid was another process's by then
  uint64_t refused = 0;     // a file or path refused (cgroup_label.h)
  uint64_t over_bound = 0;  // a new path while max_paths were held and in use
  uint64_t overflow = 0;    // not read: max_pending reads under way, or the lookups full
  size_t pending = 0;       // reads under way now
  size_t paths = 0;         // distinct paths held now
};

// What one read found (on any thread: it touches no reader's state).
struct CgroupFile {
  enum Outcome { kRead, kGone, kReused, kRefused } outcome = kGone;
  std::string path;  // kRead: the cgroup's path
};

class CgroupReader {
 public:
  static constexpr size_t kDefaultMaxPaths = 4096;
  static constexpr size_t kDefaultMaxPending = 256;
  explicit CgroupReader(std::string proc = "/proc", size_t max_paths = kDefaultMaxPaths,
                        size_t max_pending = kDefaultMaxPending);

  // Reads run on `lookups` (null, the default: at once, on the caller's
  // thread). Set before the first Request.
  void set_lookups(LookupWorker* lookups) { lookups_ = lookups; }
  // Reads pid's cgroup for the process that ran at seen_by (CLOCK_BOOTTIME
  // ns; 0: now): one that started later is another. `done` runs on this
  // thread with the path, unless it cannot be known (see the counts).
  void Request(uint32_t pid, uint64_t seen_by, std::function<void(CgroupRef)> done);
  // pid's cgroup now, read on this thread; null when it cannot be known.
  CgroupRef Read(uint32_t pid);
  // The one shared copy of `path`; over the bound, its nearest ancestor
  // held, or null.
  CgroupRef Intern(std::string_view path);
  CgroupReadStats stats() const;

  // The read itself: /proc/PID/cgroup of the process at pid, if it started
  // by seen_by (0: any).
  static CgroupFile ReadFile(const std::string& proc, uint32_t pid, uint64_t seen_by);

 private:
  // Counts a read and interns its path (null if none).
  CgroupRef Take(const CgroupFile& file);

  std::string proc_;
  size_t max_paths_;
  size_t max_pending_;
  LookupWorker* lookups_ = nullptr;
  CgroupReadStats stats_;
  absl::flat_hash_map<std::string, CgroupRef> paths_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_CGROUP_READER_H
