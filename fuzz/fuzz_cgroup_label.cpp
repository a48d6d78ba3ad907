// fuzz_cgroup_label.cpp - fuzz target for the cgroup parsers
// (libprofile/base/cgroup_label.h): /proc/PID/cgroup text, and cgroup paths,
// whose directory names any user with a delegated subtree chooses. Whatever
// the bytes, a path kept is absolute, within kMaxCgroupPath and holds no NUL
// or newline; a unit is a unit name's characters within 255 bytes, found in
// the path (or user@UID.service/UNIT, two such, below a user's manager); a container id is 64
// lowercase hex digits; a pod uid is lowercase hex and dashes.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "libprofile/base/cgroup_label.h"

namespace {

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// A unit name of the path: a unit's characters, within 255 bytes, found in it.
void CheckUnitName(std::string_view path, std::string_view unit) {
  if (unit.size() > 255 || path.find(unit) == std::string_view::npos) std::abort();
  for (char c : unit) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == ':' || c == '-' || c == '_' || c == '.' || c == '\\' || c == '@';
    if (!ok) std::abort();
  }
}

void CheckLabels(std::string_view path) {
  const lcpi::CgroupLabels l = lcpi::LabelsOfCgroup(path);
  // A unit, or one below a user's manager, named under it: user@UID.service/UNIT.
  std::string_view unit = l.unit;
  if (const size_t slash = unit.find('/'); slash != std::string_view::npos) {
    const std::string_view manager = unit.substr(0, slash);
    if (manager.rfind("user@", 0) != 0 || manager.size() < 13 ||
        manager.substr(manager.size() - 8) != ".service")
      std::abort();
    CheckUnitName(path, manager);
    unit.remove_prefix(slash + 1);
  }
  CheckUnitName(path, unit);
  if (!l.container.empty() && (l.container.size() != 64 ||
                               !std::all_of(l.container.begin(), l.container.end(), IsLowerHex)))
    std::abort();
  if (l.pod.size() > 64 ||
      !std::all_of(l.pod.begin(), l.pod.end(), [](char c) { return IsLowerHex(c) || c == '-'; }))
    std::abort();
  for (std::string_view key : lcpi::CgroupLabelKeys()) (void)lcpi::CgroupLabelValue(path, key);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lcpi::Expected<std::string> path = lcpi::CgroupPathFromProc(text);
  if (path) {
    if (path->empty() || (*path)[0] != '/' || path->size() > lcpi::kMaxCgroupPath) std::abort();
    if (path->find('\0') != std::string::npos || path->find('\n') != std::string::npos)
      std::abort();
    CheckLabels(*path);
  }
  CheckLabels(text);
  return 0;
}
