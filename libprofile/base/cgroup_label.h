// cgroup_label.h - what an operator calls a process's cgroup: the systemd
// unit (nginx.service, session-3.scope, a user's app.slice/foo.service) and,
// for a container, its id (docker, containerd, CRI-O, podman, kubepods) and
// its pod's uid. lcpid keeps each process's cgroup path as the kernel says it
// (/proc/PID/cgroup, read at exec and at the /proc scan); the tools turn it
// into labels when they read it, so a parser learning a new runtime labels
// old windows too.
//
// A cgroup path is untrusted text: its components are directory names that
// any user with a delegated subtree (every user@UID.service) chooses, so
// they may hold any byte but '/' and NUL (the kernel refuses '\n' in a
// cgroup's name). Nothing here trusts more than a component's exact shape:
// a unit is a component with a unit's suffix and a unit name's characters,
// a container id exactly 64 lowercase hex digits in a runtime's known
// spelling; anything else labels nothing. Below a user's manager
// (user@UID.service) every name is that user's: its units are named under
// it ("user@1000.service/nginx.service", never the system's nginx.service)
// and nothing below it is a container or a pod (rootless podman's
// containers included). A service that delegates its subtree (Delegate=yes)
// is not told apart so: labels are for grouping, not for authorization.
#ifndef LCPI_LIBPROFILE_BASE_CGROUP_LABEL_H
#define LCPI_LIBPROFILE_BASE_CGROUP_LABEL_H

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

// The longest cgroup path kept (bytes). A kubepods container under the
// systemd driver is about 220; longer ones are refused, not cut, since a
// cut path could name another unit.
inline constexpr size_t kMaxCgroupPath = 512;
// The most of /proc/PID/cgroup read (one line per v1 hierarchy and the v2
// line); a longer file is refused.
inline constexpr size_t kMaxProcCgroupBytes = 8192;

// The path to keep from the text of /proc/PID/cgroup: the first that is
// not the root "/" of the cgroup v2 line ("0::PATH"), cgroup v1's systemd
// hierarchy ("N:name=systemd:PATH"), the v1 hierarchy of the cpu controller
// and the first line (a v1 host with the v2 hierarchy mounted but unused
// says "0::/" of every process); "/" when all are. A trailing " (deleted)"
// (a cgroup removed under a zombie) is dropped.
// kInvalidArgument: empty, longer than kMaxProcCgroupBytes, a line not of
// the form "ID:CONTROLLERS:/PATH", a hierarchy id given twice (so no path
// can forge a line of its own), or the path longer than kMaxCgroupPath or
// holding a NUL.
Expected<std::string> CgroupPathFromProc(std::string_view text);

// The labels of one cgroup path; an empty string: no such label.
struct CgroupLabels {
  // The innermost systemd unit that holds processes: the last component
  // ending in .service, .scope, .socket, .mount or .swap made of a unit
  // name's characters (ASCII letters, digits, ":-_.\@"), at most 255 bytes;
  // below a user@UID.service, "user@UID.service/" and that component.
  std::string unit;
  // A container's id (none below a user@UID.service): 64 lowercase hex
  // digits, from docker-ID.scope,
  // cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope (the innermost
  // such component), or, under the cgroupfs driver, /docker/ID and
  // /kubepods/.../pod<UID>/ID. A runtime's monitor (libpod-conmon-ID,
  // crio-conmon-ID) is not the container.
  std::string container;
  // A Kubernetes pod's uid (dashes, as kubectl shows it), from
  // kubepods-...-pod<UID>.slice (underscores there) or /kubepods/.../pod<UID>.
  std::string pod;
};
CgroupLabels LabelsOfCgroup(std::string_view path);

// The label keys a tool may group and filter by, in the order they are
// shown: "unit", "container", "pod", and "cgroup" (the path itself).
const std::vector<std::string_view>& CgroupLabelKeys();
// The value of one key for a path ("" when it has none); key must be one of
// CgroupLabelKeys().
std::string CgroupLabelValue(std::string_view path, std::string_view key);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_CGROUP_LABEL_H
