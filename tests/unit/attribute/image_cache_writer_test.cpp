// image_cache_writer_test.cpp - copies of real programs (/bin/true,
// /bin/false) kept by identity with the database's mode, counted as hits and
// misses, never filed under an identity they do not have, and evicted least
// recently used first when the bound shrinks; what a hostile user cannot do
// to it: stop all caching with a file on a hung mount, flush root's copies
// with files of their own, have their file stand for root's under the same
// identity, or get a copy read by others that others could not read.
#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "hung_mount.h"
#include "libprofile/attribute/image_cache_writer.h"
#include "libprofile/image/image_cache.h"
#include "libprofile/image/image_id.h"
#include "test_files.h"

using lcpi::FileMapping;
using lcpi::ImageCacheConfig;
using lcpi::ImageCacheStats;
using lcpi::ImageCacheWriter;

namespace {

// The mapping of a program by a process that has gone: found by path, checked
// by inode. The path is canonical, as the kernel names a mapped file in
// /proc/PID/maps (/bin/true, /bin a link to usr/bin, is /usr/bin/true).
FileMapping GoneMapping(const std::string& path) {
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  FileMapping m;
  m.pid = static_cast<uint32_t>(child);
  m.start = 0x1000;
  m.end = 0x2000;
  m.path = std::filesystem::canonical(path).string();
  m.dev = st.st_dev;
  m.ino = st.st_ino;
  return m;
}

std::string Identity(const std::string& path) {
  auto id = lcpi::IdentifyElfFile(path);
  REQUIRE(id);
  return id->identity;
}

// Waits until the writer has dealt with `n` offers (copied or failed). Each
// look hands over what waits in the backlog (an offer that found the lock
// taken), as lcpid's loop does each iteration.
ImageCacheStats Settle(ImageCacheWriter& w, uint64_t n) {
  for (int i = 0; i < 500; i++) {
    w.Pump();
    ImageCacheStats s = w.stats();
    if (s.files + s.failed >= n) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return w.stats();
}

// Waits until `n` copies were made (whether kept, evicted since, or failed).
ImageCacheStats Processed(ImageCacheWriter& w, uint64_t n) {
  for (int i = 0; i < 500; i++) {
    w.Pump();
    ImageCacheStats s = w.stats();
    if (s.files + s.evicted + s.failed >= n) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return w.stats();
}

uint64_t FileSize(const std::string& p) { return std::filesystem::file_size(p); }

constexpr uid_t kNobody = 65534;

// A copy of /bin/true at `path`, owned by `owner` with `mode`; with `tag`
// set, its build-id's last byte is changed to it: another identity.
void Program(const std::string& path, uid_t owner, mode_t mode, int tag = -1) {
  std::string bytes = lcpi::testing::ReadFile("/bin/true");
  if (tag >= 0) {
    std::string id = Identity("/bin/true");
    REQUIRE(id.rfind("build-id:", 0) == 0);
    std::string hex = id.substr(9, 40);
    std::string raw;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
      raw.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    size_t at = bytes.find(raw);
    REQUIRE(at != std::string::npos);
    bytes[at + raw.size() - 1] = static_cast<char>(tag);
  }
  lcpi::testing::WriteFile(path, bytes);
  REQUIRE(chown(path.c_str(), owner, owner) == 0);
  REQUIRE(chmod(path.c_str(), mode) == 0);
}

// The owner lcpid recorded for a copy, or -1.
long CopyOwner(const std::string& copy) {
  char value[32] = {};
  ssize_t n = getxattr(copy.c_str(), lcpi::kCachedOwnerXattr, value, sizeof value - 1);
  return n > 0 ? std::stol(std::string(value, static_cast<size_t>(n))) : -1;
}

mode_t Mode(const std::string& p) {
  struct stat st;
  REQUIRE(stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// A cache whose copies the readers' group may read (0640), beside a
// database in a directory others may pass: the cases on who may read a copy.
struct PublicCache {
  lcpi::testing::TempDir dir;
  std::string db = dir.path().string() + "/profiles.db";
  ImageCacheWriter w{{lcpi::ImageCacheDir(db), 1 << 30, 0640, 0750, std::nullopt}};
  PublicCache() { std::filesystem::permissions(dir.path(), std::filesystem::perms(0755)); }
};

}  // namespace

TEST_CASE("an image is copied once by identity, private, then a hit") {
  lcpi::testing::TempDir dir;
  std::string cache = dir.path().string() + "/images";
  std::string db = dir.path().string() + "/profiles.db";
  REQUIRE(lcpi::ImageCacheDir(db) == cache);
  ImageCacheConfig config{cache, 1 << 30, 0640, 0750, std::nullopt};
  std::string id = Identity("/bin/true");
  {
    ImageCacheWriter w(config);
    REQUIRE(w.Start());
    w.Offer(id, GoneMapping("/bin/true"));
    w.Offer(id, GoneMapping("/bin/true"));  // queued or done: not again
    ImageCacheStats s = Settle(w, 1);
    CHECK(s.misses == 1);
    CHECK(s.hits == 0);
    CHECK(s.files == 1);
    CHECK(s.bytes == FileSize("/bin/true"));
  }
  std::string copy = lcpi::FindCachedImage(db, id);
  REQUIRE(!copy.empty());
  CHECK(Identity(copy) == id);
  CHECK((std::filesystem::status(copy).permissions() & std::filesystem::perms::all) ==
        std::filesystem::perms(0640));
  CHECK((std::filesystem::status(cache).permissions() & std::filesystem::perms::all) ==
        std::filesystem::perms(0750));
  ImageCacheWriter again(config);
  REQUIRE(again.Start());
  again.Offer(id, GoneMapping("/bin/true"));
  ImageCacheStats s = again.stats();
  for (int i = 0; i < 500 && s.hits == 0; i++) {  // the offer may wait in the backlog
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    again.Pump();
    s = again.stats();
  }
  CHECK(s.hits == 1);
  CHECK(s.misses == 0);
  CHECK(s.files == 1);
}

TEST_CASE("a file that is not the identity offered is not kept") {
  lcpi::testing::TempDir dir;
  ImageCacheWriter w({dir.path().string() + "/images", 1 << 30, 0600, 0700, std::nullopt});
  REQUIRE(w.Start());
  // /bin/false's identity, but /bin/true's file (found by inode)
  w.Offer(Identity("/bin/false"), GoneMapping("/bin/true"));
  ImageCacheStats s = Settle(w, 1);
  CHECK(s.failed == 1);
  CHECK(s.files == 0);
  CHECK(lcpi::FindCachedImage(dir.path().string() + "/p.db", Identity("/bin/false")).empty());
  // and identities that are not files are never cached
  CHECK(lcpi::CachedImageName("kernel:abc").empty());
  CHECK(lcpi::CachedImageName("build-id:../../etc").empty());
  CHECK(lcpi::CachedImageName("build-id:00ff") == "build-id-00ff");
}

TEST_CASE("a smaller bound evicts the least recently used copy first") {
  lcpi::testing::TempDir dir;
  std::string cache = dir.path().string() + "/images";
  std::string db = dir.path().string() + "/profiles.db";
  std::string t = Identity("/bin/true"), f = Identity("/bin/false");
  REQUIRE(t != f);
  {
    ImageCacheWriter w({cache, 1 << 30, 0600, 0700, std::nullopt});
    REQUIRE(w.Start());
    w.Offer(t, GoneMapping("/bin/true"));
    REQUIRE(Settle(w, 1).files == 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct mtimes
    w.Offer(f, GoneMapping("/bin/false"));
    REQUIRE(Settle(w, 2).files == 2);
  }
  uint64_t one = std::max(FileSize("/bin/true"), FileSize("/bin/false"));
  ImageCacheWriter small({cache, one, 0600, 0700, std::nullopt});
  REQUIRE(small.Start());
  ImageCacheStats s = small.stats();
  CHECK(s.files == 1);
  CHECK(s.evicted == 1);
  CHECK(lcpi::FindCachedImage(db, t).empty());  // the older one went
  CHECK(!lcpi::FindCachedImage(db, f).empty());
}

TEST_CASE("copies leave a tenth of the file system, 64 MiB to 1 GiB, to the database") {
  constexpr uint64_t kMiB = 1ULL << 20;
  CHECK(lcpi::ImageCacheReserve(48 * kMiB) == 64 * kMiB);  // a small disk: no copy fits
  CHECK(lcpi::ImageCacheReserve(2048 * kMiB) == 2048 * kMiB / 10);
  CHECK(lcpi::ImageCacheReserve(100 * 1024 * kMiB) == 1024 * kMiB);
}

TEST_CASE("a copy stuck on a hung mount is abandoned and caching goes on") {
  if (!lcpi::testing::HungMount::available()) {
    WARN("needs root and hang_fs (libfuse3): not run");
    return;
  }
  lcpi::testing::TempDir dir;
  std::string db = dir.path().string() + "/profiles.db";
  ImageCacheConfig config{lcpi::ImageCacheDir(db), 1 << 30, 0600, 0700, std::nullopt};
  config.stuck_after = std::chrono::milliseconds(300);
  config.max_stuck = 2;
  // Declared first, destroyed last: the mount's server dies before it, so a
  // thread still blocked on it gets its error and ends.
  auto* w = new ImageCacheWriter(config);
  std::future<void> destroyed;
  lcpi::testing::HungMount mount("/bin/true", 3, dir.path().string() + "/mnt");
  REQUIRE(mount.mounted());
  REQUIRE(w->Start());
  std::string t = Identity("/bin/true");
  // Opened while the server answered; read once it does not.
  FileMapping hung = GoneMapping("/bin/true");
  hung.path = mount.File(1);
  int fd = open(hung.path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  mount.Hang();
  w->Offer(t, hung, fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the copy has begun
  std::string f = Identity("/bin/false");
  w->Offer(f, GoneMapping("/bin/false"));
  ImageCacheStats s = Settle(*w, 1);
  CHECK(s.files == 1);  // /bin/false, copied by a fresh thread
  CHECK(s.stuck == 1);
  CHECK(s.stuck_threads == 1);
  CHECK(!lcpi::FindCachedImage(db, f).empty());
  // With max_stuck threads left behind, no thread is started for another:
  // a second hung copy stops caching until one comes back.
  FileMapping hung2 = hung;
  hung2.path = mount.File(2);
  w->Offer(t, hung2);  // opened on the copying thread: blocks in the open
  // Found stuck once a look sees no CPU used since the last (within 2 looks).
  for (int i = 0; i < 100 && (s = w->stats()).stuck < 2; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(s.stuck == 2);
  CHECK(s.stuck_threads == 2);
  // Destroying the writer does not wait for its stuck threads.
  destroyed = std::async(std::launch::async, [w] { delete w; });
  CHECK(destroyed.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  // (the mount's server dies here, then a destruction still waiting ends)
}

TEST_CASE("a user's copies stay within their share and never evict root's") {
  lcpi::testing::TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  std::string db = dir.path().string() + "/profiles.db";
  uint64_t size = FileSize("/bin/true");
  ImageCacheConfig config{lcpi::ImageCacheDir(db), 4 * size, 0600, 0700, std::nullopt};
  config.user_share = 2;  // a user may hold 2 * size
  ImageCacheWriter w(config);
  REQUIRE(w.Start());
  Program(dir / "root", 0, 0755, 0);
  std::string root_id = Identity(dir / "root");
  w.Offer(root_id, GoneMapping(dir / "root"));
  REQUIRE(Settle(w, 1).files == 1);
  // nobody's programs, each with a build-id of its own
  for (int i = 1; i <= 6; i++) {
    std::string p = dir / ("user" + std::to_string(i));
    Program(p, kNobody, 0755, i);
    w.Offer(Identity(p), GoneMapping(p));
    Processed(w, 1 + static_cast<uint64_t>(i));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct mtimes
  }
  ImageCacheStats s = w.stats();
  CHECK(s.failed == 0);
  CHECK(!lcpi::FindCachedImage(db, root_id).empty());
  CHECK(s.files == 3);  // root's and the user's newest two
  CHECK(s.evicted == 4);
  CHECK(s.evicted_share == 4);
  CHECK(!lcpi::FindCachedImage(db, Identity(dir / "user6")).empty());
  CHECK(lcpi::FindCachedImage(db, Identity(dir / "user1")).empty());
}

TEST_CASE("a user's file never fills a root file's identity, even with root's bytes") {
  lcpi::testing::TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  std::string db = dir.path().string() + "/profiles.db";
  ImageCacheWriter w({lcpi::ImageCacheDir(db), 1 << 30, 0600, 0700, std::nullopt});
  REQUIRE(w.Start());
  // Byte for byte the same program, nobody's and root's: two identities
  // (a file's owner is part of it), each copy filed under its own.
  Program(dir / "users", kNobody, 0755);
  Program(dir / "system", 0, 0755);
  const std::string id = Identity(dir / "system");
  const std::string users_id = Identity(dir / "users");
  REQUIRE(users_id == id + ":u" + std::to_string(kNobody));
  // nobody's file offered under root's identity: refused, nothing filed.
  w.Offer(id, GoneMapping(dir / "users"));
  ImageCacheStats s;
  for (int i = 0; i < 300 && (s = w.stats()).failed == 0; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(s.failed == 1);
  CHECK(s.files == 0);
  CHECK(lcpi::FindCachedImage(db, id).empty());
  // Each under its own identity: root's copy is root's, nobody's nobody's.
  w.Offer(id, GoneMapping(dir / "system"));
  w.Offer(users_id, GoneMapping(dir / "users"));
  s = Settle(w, 3);  // the refusal and the two copies
  CHECK(s.files == 2);
  CHECK(CopyOwner(lcpi::FindCachedImage(db, id)) == 0);
  CHECK(CopyOwner(lcpi::FindCachedImage(db, users_id)) == kNobody);
  CHECK(lcpi::FindCachedImage(db, id) != lcpi::FindCachedImage(db, users_id));
}

TEST_CASE_METHOD(PublicCache,
                 "only a file others could read gets a copy the readers' group may read") {
  REQUIRE(w.Start());
  std::filesystem::create_directory(dir / "private");
  std::filesystem::permissions(dir / "private", std::filesystem::perms(0700));
  Program(dir / "public", kNobody, 0755, 1);
  Program(dir / "secret", 0, 0711, 2);                // runnable, not readable, by others
  Program(dir / "private/hidden", kNobody, 0755, 3);  // readable, in a directory others cannot pass
  std::string pub = Identity(dir / "public"), secret = Identity(dir / "secret"),
              hidden = Identity(dir / "private/hidden");
  w.Offer(pub, GoneMapping(dir / "public"));
  REQUIRE(Settle(w, 1).files == 1);
  w.Offer(secret, GoneMapping(dir / "secret"));
  REQUIRE(Settle(w, 2).files == 2);
  w.Offer(hidden, GoneMapping(dir / "private/hidden"));
  ImageCacheStats s = Settle(w, 3);
  REQUIRE(s.files == 3);
  CHECK(Mode(lcpi::FindCachedImage(db, pub)) == 0640);
  CHECK(Mode(lcpi::FindCachedImage(db, secret)) == 0600);
  CHECK(Mode(lcpi::FindCachedImage(db, hidden)) == 0600);
  CHECK(s.private_files == 2);
}

TEST_CASE_METHOD(PublicCache,
                 "a public path to another file than the one copied gets a private copy") {
  // The mapping's pid, reused by a user's process in a namespace of its own,
  // can make the mapped path lead to a public file of theirs: the walk must
  // end at the file whose bytes are copied (the hostile review's finding).
  REQUIRE(w.Start());
  std::filesystem::create_directory(dir / "private");
  std::filesystem::permissions(dir / "private", std::filesystem::perms(0700));
  Program(dir / "private/hidden", kNobody, 0755, 5);  // readable, in a directory others cannot pass
  Program(dir / "decoy", kNobody, 0755, 6);
  const std::string id = Identity(dir / "private/hidden");
  FileMapping m = GoneMapping(dir / "private/hidden");
  m.path = dir / "decoy";  // what the path leads to now
  int fd = open((dir / "private/hidden").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  w.Offer(id, m, fd);
  ImageCacheStats s = Settle(w, 1);
  REQUIRE(s.files == 1);
  CHECK(Mode(lcpi::FindCachedImage(db, id)) == 0600);
  CHECK(s.private_files == 1);
}

TEST_CASE_METHOD(PublicCache, "a file reached through a symbolic link gets a private copy") {
  // A mapping's path (/proc/PID/maps) has none; one on the way now means the
  // tree changed since, or resolves against lcpid's root instead of the
  // process's: any doubt is a no (public_file.h, OpenPublicParent).
  REQUIRE(w.Start());
  std::filesystem::create_directory(dir / "real");
  std::filesystem::permissions(dir / "real", std::filesystem::perms(0755));
  std::filesystem::create_directory_symlink("real", dir / "link");
  Program(dir / "real/prog", kNobody, 0755, 4);
  std::string id = Identity(dir / "real/prog");
  FileMapping through_link = GoneMapping(dir / "link/prog");
  through_link.path = dir / "link/prog";
  w.Offer(id, through_link);
  ImageCacheStats s = Settle(w, 1);
  REQUIRE(s.files == 1);
  CHECK(Mode(lcpi::FindCachedImage(db, id)) == 0600);
  CHECK(s.private_files == 1);
}

// A live process confined by `confine` (run in the child: a chroot, a
// mount namespace of its own) and its mapping of host_file, which it sees
// at `seen`; killed at the end of the scope.
struct ConfinedProcess {
  pid_t pid = -1;
  FileMapping mapping;
  ConfinedProcess(const std::function<bool()>& confine, const std::string& host_file,
                  const std::string& seen) {
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    pid = fork();
    if (pid == 0) {
      bool ok = confine();
      (void)!write(ready[1], ok ? "y" : "n", 1);
      pause();
      _exit(0);
    }
    char c = 0;
    REQUIRE(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    close(ready[1]);
    REQUIRE(c == 'y');
    struct stat st;
    REQUIRE(stat(host_file.c_str(), &st) == 0);
    mapping.pid = static_cast<uint32_t>(pid);
    mapping.start = 0x1000;
    mapping.end = 0x2000;
    mapping.path = seen;
    mapping.dev = st.st_dev;
    mapping.ino = st.st_ino;
  }
  ~ConfinedProcess() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

TEST_CASE_METHOD(PublicCache, "a file in a root others cannot reach gets a private copy") {
  // A container's files, public inside it, are not the host's users' to
  // read when its root lies in a directory they cannot pass (docker keeps
  // /var/lib/docker 0710): the walk from the process's root must start at a
  // root others can reach from the host's "/".
  REQUIRE(w.Start());
  for (const char* d : {"private", "open"}) {
    std::filesystem::create_directories(dir / (std::string(d) + "/root"));
    std::filesystem::permissions(dir / d, std::filesystem::perms(strcmp(d, "open") ? 0700 : 0755));
    std::filesystem::permissions(dir / (std::string(d) + "/root"), std::filesystem::perms(0755));
  }
  Program(dir / "private/root/prog", kNobody, 0755, 7);
  Program(dir / "open/root/prog", kNobody, 0755, 8);
  const std::string hidden = Identity(dir / "private/root/prog");
  const std::string shown = Identity(dir / "open/root/prog");
  for (const std::string& d : {dir / "private/root", dir / "open/root"}) {
    ConfinedProcess p([&] { return chroot(d.c_str()) == 0 && chdir("/") == 0; }, d + "/prog",
                      "/prog");
    int fd = open((d + "/prog").c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    w.Offer(d == dir / "open/root" ? shown : hidden, p.mapping, fd);
    Settle(w, d == dir / "open/root" ? 2 : 1);
  }
  ImageCacheStats s = w.stats();
  REQUIRE(s.files == 2);
  CHECK(Mode(lcpi::FindCachedImage(db, hidden)) == 0600);
  CHECK(Mode(lcpi::FindCachedImage(db, shown)) == 0640);
  CHECK(s.private_files == 1);
}

TEST_CASE_METHOD(PublicCache,
                 "a file public only in a mount namespace of its own gets a private copy") {
  // The hostile review's bypass of the root check: the process keeps the
  // host's root but, in a mount namespace of its own (unshare -m, systemd's
  // PrivateTmp= and BindPaths=), binds a directory others cannot reach on
  // the host onto a public one. Its path must lead to the file as the host
  // sees it.
  REQUIRE(w.Start());
  std::filesystem::create_directories(dir / "private/inner");
  std::filesystem::create_directories(dir / "pub");
  std::filesystem::permissions(dir / "private", std::filesystem::perms(0700));
  std::filesystem::permissions(dir / "private/inner", std::filesystem::perms(0755));
  std::filesystem::permissions(dir / "pub", std::filesystem::perms(0755));
  Program(dir / "private/inner/prog", kNobody, 0755, 9);
  const std::string id = Identity(dir / "private/inner/prog");
  const std::string inner = dir / "private/inner", pub = dir / "pub";
  ImageCacheStats s;
  {
    // public where the process sees it
    ConfinedProcess p(
        [&] {
          return unshare(CLONE_NEWNS) == 0 &&
                 mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
                 mount(inner.c_str(), pub.c_str(), nullptr, MS_BIND, nullptr) == 0;
        },
        inner + "/prog", pub + "/prog");
    int fd = open((inner + "/prog").c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    w.Offer(id, p.mapping, fd);
    s = Settle(w, 1);
  }
  REQUIRE(s.files == 1);
  CHECK(Mode(lcpi::FindCachedImage(db, id)) == 0600);
  CHECK(s.private_files == 1);
}
