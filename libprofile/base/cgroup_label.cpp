// cgroup_label.cpp - the cgroup path kept from /proc/PID/cgroup, and the
// labels operators call it by (cgroup_label.h says which shapes and why).
#include "libprofile/base/cgroup_label.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include "libprofile/base/text.h"

namespace lcpi {
namespace {

Error Refused(const std::string& why) {
  return Error(Errc::kInvalidArgument, "/proc/PID/cgroup: " + why);
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// A container id as docker, containerd, CRI-O and podman spell it.
bool IsContainerId(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), IsLowerHex);
}

// A pod uid (a UUID; a static pod's is a hash): lowercase hex and dashes.
bool IsPodUid(std::string_view s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return IsLowerHex(c) || c == '-'; }) &&
         std::any_of(s.begin(), s.end(), IsLowerHex);
}

// A systemd unit that holds processes: a unit name's characters, at most
// 255 bytes (systemd's UNIT_NAME_MAX), a name before the suffix.
bool IsUnit(std::string_view s) {
  static constexpr std::array<std::string_view, 5> kSuffixes = {".service", ".scope", ".socket",
                                                                ".mount", ".swap"};
  if (s.size() > 255) return false;
  bool suffixed = std::any_of(kSuffixes.begin(), kSuffixes.end(), [&](std::string_view suffix) {
    return s.size() > suffix.size() && EndsWith(s, suffix);
  });
  return suffixed && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == ':' || c == '-' || c == '_' || c == '.' || c == '\\' || c == '@';
         });
}

// The id in RUNTIME-ID.scope, for the runtimes that name a container's
// scope so (systemd cgroup driver); "" otherwise.
std::string_view ScopeContainerId(std::string_view c) {
  static constexpr std::array<std::string_view, 4> kPrefixes = {"docker-", "cri-containerd-",
                                                                "crio-", "libpod-"};
  if (!EndsWith(c, ".scope")) return {};
  for (std::string_view prefix : kPrefixes) {
    if (!StartsWith(c, prefix)) continue;
    std::string_view id = c.substr(prefix.size(), c.size() - prefix.size() - 6);
    if (IsContainerId(id)) return id;
  }
  return {};
}

// The uid in kubepods[-QOS]-pod<UID>.slice (underscores for dashes, as
// systemd escapes them) or, under the cgroupfs driver, pod<UID>.
std::optional<std::string> PodUid(std::string_view c, bool systemd) {
  std::string_view uid;
  if (systemd) {
    if (!StartsWith(c, "kubepods-") || !EndsWith(c, ".slice")) return std::nullopt;
    size_t at = c.rfind("-pod");
    if (at == std::string_view::npos) return std::nullopt;
    uid = c.substr(at + 4, c.size() - at - 4 - 6);
  } else {
    if (!StartsWith(c, "pod")) return std::nullopt;
    uid = c.substr(3);
  }
  std::string dashed(uid);
  if (systemd) std::replace(dashed.begin(), dashed.end(), '_', '-');
  if (!IsPodUid(dashed)) return std::nullopt;
  return dashed;
}

}  // namespace

Expected<std::string> CgroupPathFromProc(std::string_view text) {
  if (text.empty()) return Refused("empty");
  if (text.size() > kMaxProcCgroupBytes)
    return Refused("longer than " + std::to_string(kMaxProcCgroupBytes) + " bytes");
  if (text.find('\0') != std::string_view::npos) return Refused("a NUL byte");
  if (text.back() == '\n') text.remove_suffix(1);
  std::set<uint64_t> ids;
  std::optional<std::string_view> v2, systemd, cpu, first;
  while (true) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    // ID:CONTROLLERS:PATH; the path may hold colons, the controllers none.
    size_t c1 = line.find(':');
    size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) return Refused("a line without two colons");
    std::optional<uint64_t> id = ParseDecimal(line.substr(0, c1));
    if (!id) return Refused("a hierarchy id that is not a number");
    // The kernel prints each hierarchy once: a second line can only come
    // from a path that forged it.
    if (!ids.insert(*id).second) return Refused("hierarchy " + std::to_string(*id) + " twice");
    std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    std::string_view path = line.substr(c2 + 1);
    if (path.empty() || path[0] != '/') return Refused("a path that is not absolute");
    if (!first && path != "/") first = path;
    if (*id == 0 && controllers.empty()) v2 = path;
    if (controllers == "name=systemd") systemd = path;
    for (size_t at = 0; at <= controllers.size();) {
      size_t comma = std::min(controllers.find(',', at), controllers.size());
      if (controllers.substr(at, comma - at) == "cpu") cpu = path;
      at = comma + 1;
    }
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  // The first of them that is not the root: a v1 host with the v2
  // hierarchy mounted but unused prints "0::/" for every process.
  std::string_view path = "/";
  for (const auto& candidate : {v2, systemd, cpu, first}) {
    if (candidate && *candidate != "/") {
      path = *candidate;
      break;
    }
  }
  constexpr std::string_view kDeleted = " (deleted)";
  if (EndsWith(path, kDeleted)) path.remove_suffix(kDeleted.size());
  if (path.size() > kMaxCgroupPath)
    return Refused("a path longer than " + std::to_string(kMaxCgroupPath) + " bytes");
  return std::string(path);
}

CgroupLabels LabelsOfCgroup(std::string_view path) {
  CgroupLabels labels;
  if (path.empty() || path[0] != '/') return labels;
  std::string_view previous;  // the component before, "" at the root
  bool kubepods = false;      // under /kubepods (cgroupfs) or /kubepods.slice
  bool pod_before = false;    // the previous component named a pod (cgroupfs)
  // A user's manager (user@UID.service): every name below it is the user's
  // to choose, so its units are named under it and nothing below it is a
  // container or a pod.
  std::string_view user_manager;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view c = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    if (c.empty()) continue;
    if (!user_manager.empty()) {
      if (IsUnit(c)) labels.unit = std::string(user_manager) + "/" + std::string(c);
      continue;
    }
    if (IsUnit(c)) labels.unit = std::string(c);
    if (StartsWith(c, "user@") && EndsWith(c, ".service") && IsUnit(c)) {
      user_manager = c;  // a container above it (made by root) stays its label
      continue;
    }
    if (std::string_view id = ScopeContainerId(c); !id.empty()) {
      labels.container = std::string(id);
    } else if (IsContainerId(c) && (previous == "docker" || (kubepods && pod_before))) {
      labels.container = std::string(c);
    }
    if (c == "kubepods" || c == "kubepods.slice") kubepods = true;
    pod_before = false;
    if (kubepods) {
      if (auto uid = PodUid(c, EndsWith(c, ".slice"))) {
        labels.pod = *uid;
        pod_before = !EndsWith(c, ".slice");
      }
    }
    previous = c;
  }
  return labels;
}

const std::vector<std::string_view>& CgroupLabelKeys() {
  static const std::vector<std::string_view> keys = {"unit", "container", "pod", "cgroup"};
  return keys;
}

std::string CgroupLabelValue(std::string_view path, std::string_view key) {
  if (key == "cgroup") return std::string(path);
  CgroupLabels labels = LabelsOfCgroup(path);
  if (key == "unit") return labels.unit;
  if (key == "container") return labels.container;
  if (key == "pod") return labels.pod;
  return {};
}

}  // namespace lcpi
