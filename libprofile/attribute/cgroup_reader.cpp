// cgroup_reader.cpp - reading /proc/PID/cgroup, bounded, and interning the
// paths (cgroup_reader.h).
#include "libprofile/attribute/cgroup_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "libprofile/base/cgroup_label.h"
#include "libprofile/base/unique_fd.h"

namespace lcpi {

CgroupReader::CgroupReader(std::string proc, size_t max_paths)
    : proc_(std::move(proc)), max_paths_(max_paths) {}

CgroupRef CgroupReader::Read(uint32_t pid) {
  // A kernel file, not one a user names: no FIFO or FUSE to wait on. One
  // byte more than the bound is read to know a file is over it.
  std::string path = proc_ + "/" + std::to_string(pid) + "/cgroup";
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) {
    stats_.gone++;
    return nullptr;
  }
  std::string text(kMaxProcCgroupBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // ESRCH: the process ended while the file was open.
      stats_.gone++;
      return nullptr;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  Expected<std::string> cgroup = CgroupPathFromProc(text);
  if (!cgroup) {
    stats_.refused++;
    return nullptr;
  }
  CgroupRef ref = Intern(*cgroup);
  if (ref) stats_.read++;
  return ref;
}

CgroupRef CgroupReader::Intern(std::string_view path) {
  std::string key(path);  // this abseil's string_view is not std's
  if (auto it = paths_.find(key); it != paths_.end()) return it->second;
  if (paths_.size() >= max_paths_) {
    // Let go of the paths only this table holds: no space is in them now.
    absl::erase_if(paths_, [](const auto& entry) { return entry.second.use_count() == 1; });
    if (paths_.size() >= max_paths_) {
      stats_.over_bound++;
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
