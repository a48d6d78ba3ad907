// cgroup_label_test.cpp - tests of what lcpi calls a process's cgroup
// (libprofile/base/cgroup_label.h): the path kept from /proc/PID/cgroup (v2,
// v1, hybrid; refused when malformed, forged or too long) and the labels of
// real path shapes (systemd services, scopes and user units; docker,
// containerd, CRI-O and podman under the systemd and cgroupfs drivers;
// kubepods), and of garbage.
#include "libprofile/base/cgroup_label.h"

#include <string>

#include <catch2/catch.hpp>

using lcpi::CgroupLabels;
using lcpi::CgroupLabelValue;
using lcpi::CgroupPathFromProc;
using lcpi::Errc;
using lcpi::LabelsOfCgroup;

namespace {

const std::string kId = "3f1c2a9b8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615243f";
const std::string kId2 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

std::string PathOf(std::string_view text) {
  auto p = CgroupPathFromProc(text);
  REQUIRE(p);
  return *p;
}

Errc RefusalOf(std::string_view text) {
  auto p = CgroupPathFromProc(text);
  REQUIRE_FALSE(p);
  return p.error().code();
}

}  // namespace

TEST_CASE("/proc/PID/cgroup: the v2 line is the path") {
  CHECK(PathOf("0::/system.slice/nginx.service\n") == "/system.slice/nginx.service");
  CHECK(PathOf("0::/\n") == "/");
  // No trailing newline (a read that stopped at the end of the text).
  CHECK(PathOf("0::/init.scope") == "/init.scope");
  // A cgroup removed while a zombie is in it.
  CHECK(PathOf("0::/system.slice/gone.service (deleted)\n") == "/system.slice/gone.service");
  // Colons belong to the path after the second one.
  CHECK(PathOf("0::/user.slice/a:b:c.scope\n") == "/user.slice/a:b:c.scope");
}

TEST_CASE("/proc/PID/cgroup: hybrid and v1 hosts") {
  // Hybrid (systemd's unified hierarchy beside v1 controllers): v2 wins.
  CHECK(PathOf("12:pids:/system.slice/nginx.service\n"
               "11:cpu,cpuacct:/system.slice/nginx.service\n"
               "1:name=systemd:/system.slice/nginx.service\n"
               "0::/system.slice/nginx.service\n") == "/system.slice/nginx.service");
  // Pure v1: systemd's hierarchy, wherever its line is.
  CHECK(PathOf("5:cpu,cpuacct:/docker/" + kId + "\n1:name=systemd:/docker/" + kId2 + "\n") ==
        "/docker/" + kId2);
  // v1 without systemd: the cpu controller's.
  CHECK(PathOf("4:memory:/a\n3:cpu,cpuacct:/b\n2:pids:/c\n") == "/b");
  // Nothing known: the first line.
  CHECK(PathOf("4:memory:/a\n2:pids:/c\n") == "/a");
  // A v1 host whose v2 hierarchy is mounted but unused prints "0::/" for
  // every process: the v1 paths say more.
  CHECK(PathOf("9:name=systemd:/system.slice/nginx.service\n1:cpu:/x\n0::/\n") ==
        "/system.slice/nginx.service");
  CHECK(PathOf("9:name=systemd:/\n4:memory:/m\n1:cpu:/\n0::/\n") == "/m");
  CHECK(PathOf("9:name=systemd:/\n1:cpu:/\n0::/\n") == "/");
}

TEST_CASE("/proc/PID/cgroup: malformed, forged and overlong text is refused") {
  CHECK(RefusalOf("") == Errc::kInvalidArgument);
  CHECK(RefusalOf("\n") == Errc::kInvalidArgument);
  CHECK(RefusalOf("garbage\n") == Errc::kInvalidArgument);
  CHECK(RefusalOf("0:/system.slice\n") == Errc::kInvalidArgument);   // one colon
  CHECK(RefusalOf("x::/system.slice\n") == Errc::kInvalidArgument);  // id not a number
  CHECK(RefusalOf("::/system.slice\n") == Errc::kInvalidArgument);   // no id
  CHECK(RefusalOf("0::system.slice\n") == Errc::kInvalidArgument);   // not absolute
  CHECK(RefusalOf("0::\n") == Errc::kInvalidArgument);               // no path
  CHECK(RefusalOf("0::/a\n\n0::/b\n") == Errc::kInvalidArgument);    // an empty line
  // A second v2 line can only be forged (the kernel prints one): refused,
  // whichever is first.
  CHECK(RefusalOf("0::/user.slice/x\n0::/system.slice/nginx.service\n") == Errc::kInvalidArgument);
  CHECK(RefusalOf("1:name=systemd:/a\n1:name=systemd:/b\n0::/a\n") == Errc::kInvalidArgument);
  // A NUL in the text.
  CHECK(RefusalOf(std::string("0::/system.slice/a\0b.service\n", 30)) == Errc::kInvalidArgument);
  // Bounds: the path, and the file.
  std::string longest = "/" + std::string(lcpi::kMaxCgroupPath - 1, 'a');
  CHECK(PathOf("0::" + longest + "\n") == longest);
  CHECK(RefusalOf("0::" + longest + "a\n") == Errc::kInvalidArgument);
  std::string big;
  for (int i = 1; big.size() <= lcpi::kMaxProcCgroupBytes; ++i)
    big += std::to_string(i) + ":c" + std::to_string(i) + ":/" + std::string(100, 'x') + "\n";
  CHECK(RefusalOf(big + "0::/\n") == Errc::kInvalidArgument);
}

TEST_CASE("/proc/PID/cgroup: any other byte is kept as the kernel gave it") {
  std::string odd = "/user.slice/user-1000.slice/user@1000.service/\xff\x1b[31m\xc3(";
  CHECK(PathOf("0::" + odd + "\n") == odd);
}

TEST_CASE("systemd units: system services, scopes, user units") {
  CHECK(LabelsOfCgroup("/system.slice/nginx.service").unit == "nginx.service");
  CHECK(LabelsOfCgroup("/system.slice/nginx.service").container.empty());
  CHECK(LabelsOfCgroup("/system.slice/system-getty.slice/getty@tty1.service").unit ==
        "getty@tty1.service");
  CHECK(LabelsOfCgroup("/init.scope").unit == "init.scope");
  CHECK(LabelsOfCgroup("/user.slice/user-1000.slice/session-3.scope").unit == "session-3.scope");
  // The user's manager, and a unit it runs: the innermost unit, named under
  // its manager (a user's units are the user's to name: never the system's
  // init.scope or nginx.service).
  CHECK(LabelsOfCgroup("/user.slice/user-1000.slice/user@1000.service/init.scope").unit ==
        "user@1000.service/init.scope");
  CHECK(
      LabelsOfCgroup("/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service").unit ==
      "user@1000.service/foo.service");
  CHECK(LabelsOfCgroup("/user.slice/user-1000.slice/user@1000.service/app.slice/nginx.service")
            .unit != LabelsOfCgroup("/system.slice/nginx.service").unit);
  CHECK(LabelsOfCgroup("/user.slice/user-1000.slice/user@1000.service/a/user@0.service/x.scope")
            .unit == "user@1000.service/x.scope");
  CHECK(LabelsOfCgroup("/user.slice/user-1000.slice/user@1000.service").unit ==
        "user@1000.service");
  // A service that delegates its subtree (Delegate=yes) and made cgroups in it.
  CHECK(LabelsOfCgroup("/system.slice/docker.service").unit == "docker.service");
  CHECK(LabelsOfCgroup("/system.slice/build.service/worker/3").unit == "build.service");
  // Sockets, mounts, swaps run processes too (ExecStartPre, mount helpers).
  CHECK(LabelsOfCgroup("/system.slice/sshd.socket").unit == "sshd.socket");
  CHECK(LabelsOfCgroup("/system.slice/boot-efi.mount").unit == "boot-efi.mount");
  CHECK(LabelsOfCgroup("/system.slice/dev-sda2.swap").unit == "dev-sda2.swap");
  // Escaped unit names (systemd-escape) are units.
  CHECK(LabelsOfCgroup("/system.slice/system-foo.slice/foo@a\\x2db.service").unit ==
        "foo@a\\x2db.service");
  // Slices hold no processes of their own; the root names nothing.
  CHECK(LabelsOfCgroup("/system.slice").unit.empty());
  CHECK(LabelsOfCgroup("/user.slice/user-1000.slice").unit.empty());
  CHECK(LabelsOfCgroup("/").unit.empty());
  CHECK(LabelsOfCgroup("").unit.empty());
}

TEST_CASE("docker: systemd and cgroupfs drivers") {
  CgroupLabels l = LabelsOfCgroup("/system.slice/docker-" + kId + ".scope");
  CHECK(l.unit == "docker-" + kId + ".scope");
  CHECK(l.container == kId);
  CHECK(l.pod.empty());
  CHECK(LabelsOfCgroup("/docker/" + kId).container == kId);
  CHECK(LabelsOfCgroup("/docker/" + kId).unit.empty());
  // Docker in docker: the innermost.
  CHECK(LabelsOfCgroup("/docker/" + kId + "/docker/" + kId2).container == kId2);
  // systemd inside a container (its payload in a sub-cgroup).
  l = LabelsOfCgroup("/system.slice/docker-" + kId + ".scope/system.slice/nginx.service");
  CHECK(l.container == kId);
  CHECK(l.unit == "nginx.service");
}

TEST_CASE("containerd and kubepods") {
  // Kubelet with the systemd driver (containerd), a burstable pod.
  const std::string uid = "8a7b6c5d-1e2f-4a3b-9c8d-7e6f5a4b3c2d";
  std::string uid_ = uid;
  for (char& c : uid_)
    if (c == '-') c = '_';
  CgroupLabels l =
      LabelsOfCgroup("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uid_ +
                     ".slice/cri-containerd-" + kId + ".scope");
  CHECK(l.container == kId);
  CHECK(l.pod == uid);
  CHECK(l.unit == "cri-containerd-" + kId + ".scope");
  // Guaranteed QoS: no QoS slice.
  l = LabelsOfCgroup("/kubepods.slice/kubepods-pod" + uid_ + ".slice/cri-containerd-" + kId +
                     ".scope");
  CHECK(l.pod == uid);
  CHECK(l.container == kId);
  // The cgroupfs driver.
  l = LabelsOfCgroup("/kubepods/burstable/pod" + uid + "/" + kId);
  CHECK(l.pod == uid);
  CHECK(l.container == kId);
  CHECK(l.unit.empty());
  l = LabelsOfCgroup("/kubepods/pod" + uid + "/" + kId);
  CHECK(l.pod == uid);
  CHECK(l.container == kId);
  // The pod's own cgroup (the pause container lives under it).
  l = LabelsOfCgroup("/kubepods/besteffort/pod" + uid);
  CHECK(l.pod == uid);
  CHECK(l.container.empty());
  // Plain containerd (ctr, nerdctl) under systemd.
  CHECK(LabelsOfCgroup("/system.slice/containerd-" + kId + ".scope").container.empty());
}

TEST_CASE("CRI-O and podman") {
  CHECK(LabelsOfCgroup("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234_ab."
                       "slice/crio-" +
                       kId + ".scope")
            .container == kId);
  // The monitor is not the container.
  CHECK(LabelsOfCgroup("/machine.slice/crio-conmon-" + kId + ".scope").container.empty());
  CHECK(LabelsOfCgroup("/machine.slice/libpod-" + kId + ".scope").container == kId);
  CHECK(LabelsOfCgroup("/machine.slice/libpod-" + kId + ".scope/container").container == kId);
  CHECK(LabelsOfCgroup("/machine.slice/libpod-conmon-" + kId + ".scope").container.empty());
  // Under a user's manager a name is the user's to choose: a scope named as
  // a container's (rootless podman's, or forged) is a unit of that user's,
  // no container, no pod.
  CgroupLabels l = LabelsOfCgroup(
      "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + kId + ".scope");
  CHECK(l.container.empty());
  CHECK(l.unit == "user@1000.service/libpod-" + kId + ".scope");
  l = LabelsOfCgroup("/user.slice/user-1000.slice/user@1000.service/docker/" + kId);
  CHECK(l.container.empty());
  l = LabelsOfCgroup(
      "/user.slice/user-1000.slice/user@1000.service/kubepods/"
      "pod8a7b6c5d-1e2f-4a3b-9c8d-7e6f5a4b3c2d/" +
      kId);
  CHECK(l.container.empty());
  CHECK(l.pod.empty());
  // A user's manager inside a container (made by root): the container stays.
  l = LabelsOfCgroup("/system.slice/docker-" + kId +
                     ".scope/user.slice/user-1000.slice/user@1000.service/x.service");
  CHECK(l.container == kId);
  CHECK(l.unit == "user@1000.service/x.service");
}

TEST_CASE("garbage, near misses and hostile names label nothing") {
  // An id one digit short, one long, in upper case, not hex.
  CHECK(LabelsOfCgroup("/system.slice/docker-" + kId.substr(1) + ".scope").container.empty());
  CHECK(LabelsOfCgroup("/system.slice/docker-" + kId + "0.scope").container.empty());
  std::string upper = kId;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(LabelsOfCgroup("/docker/" + upper).container.empty());
  CHECK(LabelsOfCgroup("/docker/" + std::string(64, 'g')).container.empty());
  // A bare 64-hex name outside docker or kubepods is nobody's container.
  CHECK(LabelsOfCgroup("/user.slice/" + kId).container.empty());
  // Not unit names: escape sequences, spaces, non-UTF-8, a bare suffix.
  CHECK(LabelsOfCgroup("/user.slice/\x1b[31mred.service").unit.empty());
  CHECK(LabelsOfCgroup("/user.slice/a b.service").unit.empty());
  CHECK(LabelsOfCgroup("/user.slice/caf\xc3\xa9.service").unit.empty());
  CHECK(LabelsOfCgroup("/user.slice/\xff.service").unit.empty());
  CHECK(LabelsOfCgroup("/system.slice/.service").unit.empty());
  CHECK(LabelsOfCgroup("/system.slice/nginx.services").unit.empty());
  // A hostile name inside a real unit: the unit stays.
  CHECK(LabelsOfCgroup("/system.slice/nginx.service/\x1b[2J").unit == "nginx.service");
  // Over 255 bytes is no unit name.
  CHECK(LabelsOfCgroup("/system.slice/" + std::string(248, 'a') + ".service").unit.empty());
  CHECK(LabelsOfCgroup("/system.slice/" + std::string(247, 'a') + ".service").unit.size() == 255);
  // Empty components and relative paths.
  CHECK(LabelsOfCgroup("//system.slice//nginx.service//").unit == "nginx.service");
  CHECK(LabelsOfCgroup("no slash").unit.empty());
  // Pod uids must look like uids.
  CHECK(LabelsOfCgroup("/kubepods/burstable/pod\x1b[2J/" + kId).pod.empty());
  CHECK(LabelsOfCgroup("/kubepods.slice/kubepods-podx.slice").pod.empty());
}

TEST_CASE("label keys and values, for the tools' --by and --label") {
  REQUIRE(lcpi::CgroupLabelKeys().size() == 4);
  CHECK(lcpi::CgroupLabelKeys()[0] == "unit");
  const std::string path = "/system.slice/docker-" + kId + ".scope";
  CHECK(CgroupLabelValue(path, "unit") == "docker-" + kId + ".scope");
  CHECK(CgroupLabelValue(path, "container") == kId);
  CHECK(CgroupLabelValue(path, "pod").empty());
  CHECK(CgroupLabelValue(path, "cgroup") == path);
}
