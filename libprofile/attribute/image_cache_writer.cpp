// image_cache_writer.cpp - the copying threads, their queue, the bounds and
// who owns what.
#include "libprofile/attribute/image_cache_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include <spdlog/spdlog.h>

#include "libprofile/base/public_file.h"
#include "libprofile/base/quiet_thread.h"
#include "libprofile/base/stuck_watch.h"
#include "libprofile/base/text.h"
#include "libprofile/base/unique_fd.h"
#include "libprofile/image/image_cache.h"
#include "libprofile/image/image_id.h"

namespace lcpi {
namespace {

constexpr size_t kQueueLimit = 256;          // offers waiting for the thread
constexpr uint64_t kChunk = 1 << 20;         // bytes per copy step (stop is checked between)
constexpr int kIoprioClassBestEffort = 2;    // linux/ioprio.h: IOPRIO_CLASS_BE
constexpr int kIoprioLowest = 7;             // of the best-effort levels 0-7
constexpr int kIoprioClassShift = 13;        // IOPRIO_CLASS_SHIFT
constexpr int kIoprioWhoProcess = 1;         // IOPRIO_WHO_PROCESS (a thread id works)
constexpr char kTempPrefix[] = ".partial-";  // a copy being written; removed at start
constexpr size_t kSeenLimit = 65536;         // see State::seen
constexpr size_t kCheckedPaths = 16;         // see Entry::checked
constexpr size_t kCheckedBytes = 1 << 20;    // the same
constexpr uid_t kRoot = 0;
constexpr uid_t kUnknownOwner = static_cast<uid_t>(-1);  // a copy without kCachedOwnerXattr

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Copies `size` bytes of src to dst: copy_file_range (in the kernel, no
// user-space buffer), else read and write. False with errno on failure;
// `stop` is checked between chunks so lcpid never waits on a long copy;
// `progress` counts the bytes copied, for the stuck watch.
bool CopyBytes(int src, int dst, uint64_t size, const std::atomic<bool>& stop,
               std::atomic<uint64_t>& progress) {
  std::vector<char> buf;
  uint64_t done = 0;
  bool plain = false;
  while (done < size) {
    if (stop) {
      errno = ECANCELED;
      return false;
    }
    size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, size - done));
    ssize_t n = -1;
    if (!plain) {
      off_t in = static_cast<off_t>(done);
      n = copy_file_range(src, &in, dst, nullptr, want, 0);
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        plain = true;
        continue;
      }
    } else {
      buf.resize(want);
      n = pread(src, buf.data(), want, static_cast<off_t>(done));
      if (n > 0 && write(dst, buf.data(), static_cast<size_t>(n)) != n) return false;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = ENODATA;  // the file shrank under us
      return false;
    }
    done += static_cast<uint64_t>(n);
    progress = done;
  }
  return true;
}

// The host's view of the file tree: pid 1's root and mount namespace
// (lcpid's own are private under systemd: PrivateTmp=, ProtectSystem=), or
// lcpid's where pid 1's cannot be read (a container without CAP_SYS_PTRACE
// over its init).
struct HostView {
  UniqueFd root;
  const char* mount_ns = nullptr;
};

HostView OpenHostView() {
  UniqueFd init(open("/proc/1/root", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (init.get() >= 0) return {std::move(init), "/proc/1/ns/mnt"};
  return {UniqueFd(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)), "/proc/self/ns/mnt"};
}

bool SameMountNamespace(uint32_t pid, const char* host_ns) {
  struct stat a, b;
  const std::string ns = "/proc/" + std::to_string(pid) + "/ns/mnt";
  return stat(ns.c_str(), &a) == 0 && stat(host_ns, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// A process in a root of its own (a chroot) sees public paths from there,
// but that root must be reachable by others from the host's "/" as well: a
// root under a directory others cannot pass hides all it holds.
bool RootReachable(const std::string& proc_root, int root, int host) {
  struct stat r, h;
  if (fstat(root, &r) != 0 || fstat(host, &h) != 0) return false;
  if (r.st_dev == h.st_dev && r.st_ino == h.st_ino) return true;
  char target[4096];
  ssize_t n = readlink(proc_root.c_str(), target, sizeof target - 1);
  if (n <= 1 || target[0] != '/') return false;
  target[n] = '\0';
  std::string name;
  Expected<UniqueFd> dir = OpenPublicParent(host, target, &name);
  struct stat st;
  return dir && fstatat(dir->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISDIR(st.st_mode) && (st.st_mode & S_IXOTH) && st.st_dev == r.st_dev &&
         st.st_ino == r.st_ino;
}

// Whether others could reach the file copied (`copied`, fstat of the
// descriptor read): every directory above m's path lets others pass (o+x),
// with no symbolic link or ".." on the way (OpenPublicParent: the tools'
// rule for source files, from another root), and that path ends at the very
// file copied. The path is walked as its process sees it, from
// /proc/PID/root, when the process shares the host's mount namespace (its
// root then reachable by others from the host's, RootReachable); otherwise
// (a container, a service's private mounts, a process gone) from the
// host's root: a mount namespace of its own can bind a directory others
// cannot reach on the host onto a public one. The pid may be another
// process's by now, in a namespace of its own whose path leads elsewhere:
// a public path to some other file proves nothing of this one. The file's
// own o+r is the caller's, on the file copied; OpenPublicFile's allowlist of
// file systems stays its own (procfs and the like answer each reader
// differently; an image copied here is the mapped file's bytes). Any doubt
// is a no (an overlay whose inodes differ gets a private copy).
bool OthersCanReach(const FileMapping& m, const struct stat& copied) {
  HostView host = OpenHostView();
  if (host.root.get() < 0) return false;
  const std::string proc_root = "/proc/" + std::to_string(m.pid) + "/root";
  UniqueFd root(open(proc_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (root.get() >= 0 && SameMountNamespace(m.pid, host.mount_ns)) {
    if (!RootReachable(proc_root, root.get(), host.root.get())) return false;
  } else {
    root = std::move(host.root);
  }
  std::string name;
  Expected<UniqueFd> dir = OpenPublicParent(root.get(), m.path, &name);
  if (!dir) return false;
  struct stat st;
  return fstatat(dir->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
         st.st_dev == copied.st_dev && st.st_ino == copied.st_ino;
}

uid_t CopyOwner(int dir, const char* name) {
  char value[16] = {};
  int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return kUnknownOwner;
  ssize_t n = fgetxattr(fd, kCachedOwnerXattr, value, sizeof value - 1);
  close(fd);
  if (n <= 0) return kUnknownOwner;
  char* end = nullptr;
  unsigned long uid = std::strtoul(value, &end, 10);
  return end == value + n && uid < kUnknownOwner ? static_cast<uid_t>(uid) : kUnknownOwner;
}

}  // namespace

struct ImageCacheWriter::State : std::enable_shared_from_this<State> {
  struct Job {
    std::string name;  // CachedImageName
    std::string key;   // name and path: what queued holds
    std::string identity;
    FileMapping mapping;
    int fd = -1;
    bool touch = false;  // a hit: mark the copy used
  };
  struct Entry {
    uint64_t size = 0;
    int64_t used = 0;  // ns since the epoch
    uid_t owner = kUnknownOwner;
    bool root_only = false;  // copied 0600: others could not read the file
    // Paths whose file was looked at for this identity: a user's copy is
    // looked at again for each new one, in case it is root's. Forgotten
    // when kCheckedPaths is reached, and all entries' at once when they
    // come to kCheckedBytes (16 paths of up to 4 KiB for each of 16,384
    // copies would be a gigabyte).
    std::set<std::string> checked;
  };
  struct Usage {
    uint64_t bytes = 0, files = 0;
  };
  // One copying thread: the live one takes the queue; an abandoned one is
  // stuck in a copy and leaves when (if) it comes back.
  struct Copier {
    uint64_t id = 0;
    bool busy = false;       // in a copy
    bool abandoned = false;  // found stuck, or stopped
    StuckWatch watch;        // of its thread, while busy
    std::string what;        // the path it copies, for the log
    std::atomic<uint64_t> progress{0};
    std::atomic<bool> cancel{false};
  };

  explicit State(ImageCacheConfig c) : config(std::move(c)) {}

  const ImageCacheConfig config;
  std::mutex mutex;
  std::condition_variable wake;      // a job queued, or stop
  std::condition_variable finished;  // a thread left
  // One commit (check, rename, account, unlink) at a time, across threads:
  // taken before `mutex`, never while holding it.
  std::mutex commit;
  std::deque<Job> queue;
  std::map<std::string, Entry> entries;  // copies on disk, by name
  std::map<uid_t, Usage> usage;          // by the copied file's owner
  std::set<std::string> queued;          // Job::key of jobs offered and not done
  // Names offered since start, so that hits and misses count each image
  // once; forgotten all at once when it reaches kSeenLimit, so that a host
  // running new binaries for months does not grow it without bound (an
  // image offered again after that counts again).
  std::set<std::string> seen;
  std::map<uint64_t, std::shared_ptr<Copier>> copiers;  // threads alive, by id
  uint64_t live = 0;                                    // the copier taking jobs; 0: none
  uint64_t next_id = 0;
  bool started = false;
  bool stop = false;
  ImageCacheStats stats;

  size_t checked_bytes = 0;  // of all Entry::checked

  // With mutex held: true when `path` was not looked at yet for e (now it is).
  bool Check(Entry& e, const std::string& path) {
    if (checked_bytes + path.size() > kCheckedBytes) {
      for (auto& [name, other] : entries) other.checked.clear();
      checked_bytes = 0;
    }
    if (e.checked.size() >= kCheckedPaths) {
      for (const std::string& p : e.checked) checked_bytes -= p.size();
      e.checked.clear();
    }
    if (!e.checked.insert(path).second) return false;
    checked_bytes += path.size();
    return true;
  }

  uint64_t ShareBytes() const { return config.max_bytes / std::max(config.user_share, 1u); }
  uint64_t ShareFiles() const { return config.max_files / std::max(config.user_share, 1u); }

  // With mutex held: the entry's bytes and files counted, or no longer.
  void Add(const std::string& name, Entry e) {
    Usage& u = usage[e.owner];
    u.bytes += e.size;
    u.files++;
    stats.bytes += e.size;
    stats.private_files += e.root_only ? 1 : 0;
    entries[name] = std::move(e);
    stats.files = entries.size();
  }
  void Remove(std::map<std::string, Entry>::iterator it) {
    Usage& u = usage[it->second.owner];
    u.bytes -= it->second.size;
    if (--u.files == 0) usage.erase(it->second.owner);
    stats.bytes -= it->second.size;
    stats.private_files -= it->second.root_only ? 1 : 0;
    for (const std::string& p : it->second.checked) checked_bytes -= p.size();
    entries.erase(it);
    stats.files = entries.size();
  }

  // With mutex held: forgets copies until the cache fits and returns their
  // paths, for Unlink once the lock is let go (Offer, on lcpid's sampling
  // thread, never waits for a disk). A user over their share loses their
  // own least recently used copies; then, over the bounds, users' copies go
  // before root's, least recently used first, and root's only to make room
  // for root's (or at start, for a smaller bound). `keep`: the copy just
  // made; `newcomer`: its owner, or none at start.
  std::vector<std::string> Evict(std::optional<uid_t> newcomer, const std::string& keep) {
    std::vector<std::string> victims;
    auto lru = [&](auto&& eligible) {
      auto best = entries.end();
      for (auto it = entries.begin(); it != entries.end(); ++it) {
        if (it->first == keep || !eligible(it->second)) continue;
        if (best == entries.end() || it->second.used < best->second.used) best = it;
      }
      return best;
    };
    auto evict = [&](std::map<std::string, Entry>::iterator it) {
      victims.push_back(config.dir + "/" + it->first);
      stats.evicted++;
      Remove(it);
    };
    std::vector<uid_t> users;
    for (const auto& [uid, u] : usage)
      if (uid != kRoot && (!newcomer || *newcomer == uid)) users.push_back(uid);
    for (uid_t uid : users) {
      auto over = [&] {
        auto u = usage.find(uid);
        return u != usage.end() &&
               (u->second.bytes > ShareBytes() || u->second.files > ShareFiles());
      };
      while (over()) {
        auto victim = lru([&](const Entry& e) { return e.owner == uid; });
        if (victim == entries.end()) break;
        stats.evicted_share++;
        evict(victim);
      }
    }
    const bool for_root = !newcomer || *newcomer == kRoot;
    while (stats.bytes > config.max_bytes || entries.size() > config.max_files) {
      auto victim = lru([](const Entry& e) { return e.owner != kRoot; });
      if (victim == entries.end() && for_root) victim = lru([](const Entry&) { return true; });
      if (victim == entries.end()) victim = entries.find(keep);  // never at root's expense
      if (victim == entries.end()) break;
      evict(victim);
    }
    return victims;
  }

  // With mutex held: a new copying thread takes the queue.
  void StartCopierLocked() {
    auto c = std::make_shared<Copier>();
    c->id = ++next_id;
    try {
      QuietThread(Run, shared_from_this(), c).detach();
    } catch (const std::system_error&) {
      return;  // no thread: offers wait, and are dropped when the queue is full
    }
    copiers[c->id] = c;
    live = c->id;
  }

  // With mutex held: abandons the live copier when it has made no progress
  // (no byte copied, no CPU used) for stuck_after, and starts another while
  // fewer than max_stuck are left behind.
  void CheckStuckLocked() {
    if (!started || stop) return;
    if (live == 0) {
      if (stats.stuck_threads < config.max_stuck) StartCopierLocked();
      return;
    }
    Copier& c = *copiers.at(live);
    if (!c.busy || !c.watch.Stuck(StuckWatch::Clock::now(), config.stuck_after, c.progress)) return;
    c.abandoned = true;
    c.cancel = true;
    live = 0;
    stats.stuck++;
    stats.stuck_threads++;
    spdlog::warn(
        "image cache: the copy of {} made no progress for {} ms (a file system that "
        "does not answer?): abandoned, {} thread(s) left behind",
        Printable(c.what), config.stuck_after.count(), stats.stuck_threads);
    if (stats.stuck_threads < config.max_stuck) StartCopierLocked();
  }

  static void Run(std::shared_ptr<State> s, std::shared_ptr<Copier> c);
  Expected<void> Copy(Job& job, Copier& c);
  static void Unlink(const std::vector<std::string>& paths) {
    for (const std::string& p : paths) unlink(p.c_str());
  }
};

uint64_t ImageCacheReserve(uint64_t file_system_bytes) {
  return std::clamp<uint64_t>(file_system_bytes / 10, 64ULL << 20, 1ULL << 30);
}

ImageCacheWriter::ImageCacheWriter(ImageCacheConfig config)
    : state_(std::make_shared<State>(std::move(config))) {}

ImageCacheWriter::~ImageCacheWriter() { Stop(state_->config.stuck_after); }

Expected<void> ImageCacheWriter::Start() {
  State& s = *state_;
  const std::string& dir = s.config.dir;
  if (mkdir(dir.c_str(), s.config.dir_mode) == 0) {
    if (s.config.group && chown(dir.c_str(), static_cast<uid_t>(-1), *s.config.group) != 0)
      return ErrnoError("chown " + dir, errno);
    if (chmod(dir.c_str(), s.config.dir_mode) != 0) return ErrnoError("chmod " + dir, errno);
  } else if (errno != EEXIST) {
    return ErrnoError("mkdir " + dir, errno);
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return ErrnoError(dir, errno);
  if (!S_ISDIR(st.st_mode)) return Error(Errc::kBadElf, dir + ": not a directory");
  std::lock_guard<std::mutex> lock(s.mutex);
  // What an earlier lcpid kept: each copy's size, last use (mtime), owner
  // and mode.
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind(kTempPrefix, 0) == 0) {
        unlinkat(dirfd(d), name.c_str(), 0);  // an interrupted copy
        continue;
      }
      struct stat fst;
      if (fstatat(dirfd(d), name.c_str(), &fst, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(fst.st_mode))
        continue;
      State::Entry entry;
      entry.size = static_cast<uint64_t>(fst.st_size);
      entry.used = static_cast<int64_t>(fst.st_mtim.tv_sec) * 1000000000 + fst.st_mtim.tv_nsec;
      entry.owner = CopyOwner(dirfd(d), name.c_str());
      entry.root_only = (fst.st_mode & 077) == 0;
      s.Add(name, std::move(entry));
    }
    closedir(d);
  }
  State::Unlink(s.Evict(std::nullopt, ""));  // the bounds may have shrunk since
  s.started = true;
  last_stats_ = s.stats;  // what status shows until a look finds the lock free
  s.StartCopierLocked();
  if (s.live == 0) return Error(Errc::kBusy, "no thread for the image cache");
  return {};
}

void ImageCacheWriter::Offer(const std::string& identity, const FileMapping& m, int fd) {
  std::unique_lock<std::mutex> lock(state_->mutex, std::try_to_lock);
  if (!lock.owns_lock()) {
    if (backlog_.size() >= kQueueLimit) {  // full: the oldest goes, as from the queue
      if (backlog_.front().fd >= 0) close(backlog_.front().fd);
      backlog_.erase(backlog_.begin());
      backlog_dropped_++;
    }
    backlog_.push_back({identity, m, fd});
    return;
  }
  PumpLocked();
  OfferLocked(identity, m, fd);
}

void ImageCacheWriter::Pump() {
  if (backlog_.empty()) return;
  std::unique_lock<std::mutex> lock(state_->mutex, std::try_to_lock);
  if (lock.owns_lock()) PumpLocked();
}

void ImageCacheWriter::PumpLocked() {
  for (Backlogged& b : backlog_) OfferLocked(b.identity, b.mapping, b.fd);
  backlog_.clear();
}

void ImageCacheWriter::OfferLocked(const std::string& identity, const FileMapping& m, int fd) {
  std::string name = CachedImageName(identity);
  State& s = *state_;
  s.CheckStuckLocked();
  if (s.seen.size() >= kSeenLimit) s.seen.clear();
  bool first = !name.empty() && s.seen.insert(name).second;
  std::string key = name + '\0' + m.path;
  if (name.empty() || s.stop || !s.started || s.queued.count(key)) {
    if (fd >= 0) close(fd);
    return;
  }
  auto cached = s.entries.find(name);
  State::Job job{name, key, identity, m, fd, false};
  if (cached != s.entries.end()) {
    // A copy is made once; a cached one is marked used the first time this
    // lcpid sees it; a user's is looked at again for each path that maps
    // its identity, since root's file takes its place.
    State::Entry& e = cached->second;
    if (first) {
      s.stats.hits++;
      e.used = NowNs();
    }
    bool look = false;
    if (e.owner != kRoot) {
      look = s.Check(e, m.path);
    }
    if (!look) {
      job.touch = true;
      job.fd = -1;
      if (fd >= 0) close(fd);
      if (!first) return;
    }
  } else if (first) {
    s.stats.misses++;  // an offer that failed or was dropped is tried again
  }
  s.queue.push_back(std::move(job));
  s.queued.insert(key);
  // Full: the oldest offer goes. The newest is the likeliest to be a
  // short-lived process whose file is about to become unreachable.
  if (s.queue.size() > kQueueLimit) {
    State::Job& old = s.queue.front();
    if (old.fd >= 0) close(old.fd);
    s.queued.erase(old.key);
    if (!old.touch) s.stats.dropped++;
    s.queue.pop_front();
  }
  s.wake.notify_one();
}

void ImageCacheWriter::State::Run(std::shared_ptr<State> s, std::shared_ptr<Copier> c) {
  // Copies are background work: low CPU and I/O priority for this thread,
  // but not the idle class, which a busy host's disk never serves (a copy
  // that waits too long misses a short-lived program).
  pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 10);
  syscall(SYS_ioprio_set, kIoprioWhoProcess, tid,
          (kIoprioClassBestEffort << kIoprioClassShift) | kIoprioLowest);
  std::unique_lock<std::mutex> lock(s->mutex);
  while (true) {
    s->wake.wait(lock, [&] { return s->stop || c->abandoned || !s->queue.empty(); });
    if (s->stop || c->abandoned) break;
    // Newest first: a process seen long ago (the /proc scan at start) is
    // likelier still to be there than one that just started.
    Job job = std::move(s->queue.back());
    s->queue.pop_back();
    c->busy = true;
    c->what = job.mapping.path;
    c->progress = 0;
    c->watch.Start();
    lock.unlock();
    Expected<void> done;
    if (job.touch) {
      std::string path = s->config.dir + "/" + job.name;
      utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
    } else {
      done = s->Copy(job, *c);
    }
    if (job.fd >= 0) close(job.fd);
    lock.lock();
    c->busy = false;
    s->queued.erase(job.key);
    if (c->abandoned) {
      // Back from a copy that was given up: this thread takes the queue
      // again if no other does, else leaves.
      s->stats.stuck_threads--;
      if (s->stop || s->live != 0) break;
      c->abandoned = false;
      c->cancel = false;
      s->live = c->id;
      continue;
    }
    if (!done) {
      s->stats.failed++;
      spdlog::info("image cache: no copy of {} ({}): {}", Printable(job.mapping.path), job.identity,
                   Printable(done.error().message()));
    }
  }
  if (s->live == c->id) s->live = 0;
  s->copiers.erase(c->id);
  s->finished.notify_all();
}

Expected<void> ImageCacheWriter::State::Copy(Job& job, Copier& c) {
  if (job.fd < 0) {
    Expected<MappedFile> f = OpenMappedFile(job.mapping);
    if (!f) return f.error();
    job.fd = f->fd;
  }
  struct stat st;
  if (fstat(job.fd, &st) != 0) return ErrnoError(job.mapping.path, errno);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uid_t owner = st.st_uid;
  std::string path = config.dir + "/" + job.name;
  // Root's file stands for an identity: a user's never replaces its copy,
  // and replaces only a user's (whose file came first, or an older lcpid's
  // copy of unknown owner).
  auto kept = [&] {
    auto e = entries.find(job.name);
    if (e == entries.end()) return false;
    return e->second.owner == kRoot || owner != kRoot;
  };
  {
    std::unique_lock<std::mutex> lock(mutex);
    if (kept()) {
      lock.unlock();
      utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
      return {};
    }
    uint64_t root_bytes = 0, root_files = 0;
    if (auto r = usage.find(kRoot); r != usage.end()) {
      root_bytes = r->second.bytes;
      root_files = r->second.files;
    }
    if (size > config.max_bytes)
      return Error(Errc::kFull, std::to_string(size) + " bytes, more than the whole cache");
    if (owner != kRoot && size > ShareBytes())
      return Error(Errc::kFull, std::to_string(size) + " bytes, more than a user's share");
    if (owner != kRoot && (root_bytes + size > config.max_bytes || root_files >= config.max_files))
      return Error(Errc::kFull, "the cache is full of root's copies");
  }
  // The database beside the cache comes first: a copy never takes the room
  // its merges need (on a full disk, copies would eat every byte freed).
  struct statvfs fs;
  if (statvfs(config.dir.c_str(), &fs) == 0) {
    uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
    uint64_t reserve = ImageCacheReserve(static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize);
    if (free_bytes < reserve + size)
      return Error(Errc::kFull, "the file system keeps " + std::to_string(reserve) +
                                    " bytes free for the database");
  }
  // Readable by the readers' group only when others could read the file:
  // else root-only, and the tools say why a reader cannot open it.
  const bool readable = (st.st_mode & S_IROTH) && OthersCanReach(job.mapping, st);
  const mode_t mode = readable ? config.file_mode : (config.file_mode & 0600);
  std::string temp = config.dir + "/" + kTempPrefix + job.name + "." + std::to_string(c.id);
  int out = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
  if (out < 0) return ErrnoError(temp, errno);
  std::string uid = std::to_string(owner);
  // The owner is best kept: a file system without it makes every copy a
  // user's after a restart (replaceable and evicted first), never root's.
  (void)fsetxattr(out, kCachedOwnerXattr, uid.data(), uid.size(), 0);
  bool ok =
      (!readable || !config.group || fchown(out, static_cast<uid_t>(-1), *config.group) == 0) &&
      fchmod(out, mode) == 0 && CopyBytes(job.fd, out, size, c.cancel, c.progress);
  int err = errno;
  if (close(out) != 0 && ok) {
    ok = false;
    err = errno;
  }
  // The copy must be the image it is filed under (the file may have changed
  // since it was identified): checked on the copy itself.
  if (ok) {
    // (The copy is root's: its identity with the file's owner is the one
    // offered, so a user's file never fills a root file's identity.)
    Expected<ImageIdentity> id = IdentifyElfFile(temp);
    if (!id || WithOwner(id->identity, owner) != job.identity) {
      unlink(temp.c_str());
      return Error(Errc::kBadElf, "the copy is " + (id ? id->identity : id.error().message()) +
                                      ", not the image offered (changed since identified?)");
    }
  }
  if (!ok) {
    unlink(temp.c_str());
    return ErrnoError(temp, err);
  }
  // Another thread (one given up for stuck, come back) may have filed this
  // identity meanwhile: looked at again, and renamed, under `commit`.
  std::lock_guard<std::mutex> committing(commit);
  bool replaced = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (kept()) {
      unlink(temp.c_str());
      return {};
    }
    replaced = entries.count(job.name) > 0;
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    err = errno;
    unlink(temp.c_str());
    return ErrnoError(temp, err);
  }
  std::vector<std::string> victims;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto old = entries.find(job.name); old != entries.end()) Remove(old);
    if (replaced) stats.replaced++;
    Entry e;
    e.size = size;
    e.used = NowNs();
    e.owner = owner;
    e.root_only = !readable;
    Check(e, job.mapping.path);
    Add(job.name, std::move(e));
    victims = Evict(owner, job.name);
  }
  Unlink(victims);
  return {};
}

bool ImageCacheWriter::Stop(std::chrono::milliseconds wait) {
  State& s = *state_;
  std::deque<State::Job> left;
  bool all_ended = true;
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    s.stop = true;
    for (auto& [id, c] : s.copiers) c->cancel = true;
    s.wake.notify_all();
    left.swap(s.queue);
    s.queued.clear();
    auto ended = [&s] { return s.copiers.empty(); };
    if (wait == std::chrono::milliseconds::max())
      s.finished.wait(lock, ended);  // now + max would overflow
    else
      all_ended = s.finished.wait_for(lock, wait, ended);
  }
  for (State::Job& job : left)
    if (job.fd >= 0) close(job.fd);
  for (Backlogged& b : backlog_)
    if (b.fd >= 0) close(b.fd);
  backlog_dropped_ += backlog_.size();  // offered, never handed over: counted
  backlog_.clear();
  return all_ended;
}

ImageCacheStats ImageCacheWriter::stats() const {
  std::unique_lock<std::mutex> lock(state_->mutex, std::try_to_lock);
  if (lock.owns_lock()) {
    state_->CheckStuckLocked();
    last_stats_ = state_->stats;
  }
  ImageCacheStats s = last_stats_;
  s.dropped += backlog_dropped_;
  return s;
}

}  // namespace lcpi
