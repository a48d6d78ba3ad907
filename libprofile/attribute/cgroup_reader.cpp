// cgroup_reader.cpp - reading /proc/PID/cgroup off the loop, bounded, and
// interning the paths (cgroup_reader.h).
#include "libprofile/attribute/cgroup_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "libprofile/base/cgroup_label.h"
#include "libprofile/base/lookup_worker.h"
#include "libprofile/base/proc_start.h"
#include "libprofile/base/text.h"
#include "libprofile/base/unique_fd.h"

namespace lcpi {

CgroupReader::CgroupReader(std::string proc, size_t max_paths, size_t max_pending)
    : proc_(std::move(proc)), max_paths_(max_paths), max_pending_(max_pending) {}

CgroupFile CgroupReader::ReadFile(const std::string& proc, uint32_t pid, uint64_t seen_by) {
  CgroupFile out;
  // A kernel file, not one a user names: no FIFO or FUSE to wait on. Both
  // files are opened through the one directory, so both are of the process
  // it is (a later one with the pid has another directory).
  std::string dir = proc + "/" + std::to_string(pid);
  UniqueFd pid_dir(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (pid_dir.get() < 0) return out;
  if (seen_by != 0) {
    std::optional<uint64_t> ticks = ParseDecimal(StartTicksAt(pid_dir.get()));
    if (!ticks) return out;
    if (TicksToNs(*ticks) > seen_by) {
      out.outcome = CgroupFile::kReused;
      return out;
    }
  }
  UniqueFd fd(openat(pid_dir.get(), "cgroup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) return out;
  // One byte more than the bound is read to know a file is over it.
  std::string text(kMaxProcCgroupBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return out;  // ESRCH: the process ended while the file was open
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  Expected<std::string> cgroup = CgroupPathFromProc(text);
  if (!cgroup) {
    out.outcome = CgroupFile::kRefused;
    return out;
  }
  out.outcome = CgroupFile::kRead;
  out.path = std::move(*cgroup);
  return out;
}

CgroupRef CgroupReader::Take(const CgroupFile& file) {
  switch (file.outcome) {
    case CgroupFile::kGone:
      stats_.gone++;
      return nullptr;
    case CgroupFile::kReused:
      stats_.reused++;
      return nullptr;
    case CgroupFile::kRefused:
      stats_.refused++;
      return nullptr;
    case CgroupFile::kRead:
      break;
  }
  CgroupRef ref = Intern(file.path);
  if (ref && *ref == file.path) stats_.read++;
  return ref;
}

CgroupRef CgroupReader::Read(uint32_t pid) { return Take(ReadFile(proc_, pid, 0)); }

void CgroupReader::Request(uint32_t pid, uint64_t seen_by, std::function<void(CgroupRef)> done) {
  if (stats_.pending >= max_pending_) {
    stats_.overflow++;
    return;
  }
  if (seen_by == 0) seen_by = BoottimeNs();
  stats_.pending++;
  RunLookup<CgroupFile>(
      lookups_,
      [proc = proc_, pid, seen_by]() -> Expected<CgroupFile> {
        return ReadFile(proc, pid, seen_by);
      },
      [this, done = std::move(done)](Expected<CgroupFile> file) {
        stats_.pending--;
        if (!file) {
          stats_.overflow++;  // refused by the lookups, or stopped
          return;
        }
        if (CgroupRef ref = Take(*file)) done(std::move(ref));
      });
}

CgroupRef CgroupReader::Intern(std::string_view path) {
  std::string key(path);  // this abseil's string_view is not std's
  if (auto it = paths_.find(key); it != paths_.end()) return it->second;
  if (paths_.size() >= max_paths_) {
    // Let go of the paths only this table holds: no space is in them now.
    absl::erase_if(paths_, [](const auto& entry) { return entry.second.use_count() == 1; });
    if (paths_.size() >= max_paths_) {
      // Still full: the nearest ancestor held names a cgroup the process is
      // in (a subtree of it), never a sibling's or its parent process's.
      stats_.over_bound++;
      for (size_t slash = key.rfind('/'); slash != std::string::npos && slash > 0;
           slash = key.rfind('/', slash - 1))
        if (auto it = paths_.find(key.substr(0, slash)); it != paths_.end()) return it->second;
      return nullptr;
    }
  }
  auto ref = std::make_shared<const std::string>(key);
  paths_.emplace(std::move(key), ref);
  return ref;
}

CgroupReadStats CgroupReader::stats() const {
  CgroupReadStats st = stats_;
  st.paths = paths_.size();
  return st;
}

}  // namespace lcpi
