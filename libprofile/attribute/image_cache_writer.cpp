// image_cache_writer.cpp - the copying thread, its queue and the size bound.
#include "libprofile/attribute/image_cache_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <vector>

#include <spdlog/spdlog.h>

#include "libprofile/base/quiet_thread.h"
#include "libprofile/base/text.h"
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

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Copies `size` bytes of src to dst: copy_file_range (in the kernel, no
// user-space buffer), else read and write. False with errno on failure;
// `stop` is checked between chunks so lcpid never waits on a long copy.
bool CopyBytes(int src, int dst, uint64_t size, const std::atomic<bool>& stop) {
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
  }
  return true;
}

}  // namespace

uint64_t ImageCacheReserve(uint64_t file_system_bytes) {
  return std::clamp<uint64_t>(file_system_bytes / 10, 64ULL << 20, 1ULL << 30);
}

Expected<void> ImageCacheWriter::Start() {
  const std::string& dir = config_.dir;
  if (mkdir(dir.c_str(), config_.dir_mode) == 0) {
    if (config_.group && chown(dir.c_str(), static_cast<uid_t>(-1), *config_.group) != 0)
      return ErrnoError("chown " + dir, errno);
    if (chmod(dir.c_str(), config_.dir_mode) != 0) return ErrnoError("chmod " + dir, errno);
  } else if (errno != EEXIST) {
    return ErrnoError("mkdir " + dir, errno);
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return ErrnoError(dir, errno);
  if (!S_ISDIR(st.st_mode)) return Error(Errc::kBadElf, dir + ": not a directory");
  // What an earlier lcpid kept: each copy's size, and its last use (mtime).
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
      entries_[name] = {
          static_cast<uint64_t>(fst.st_size),
          static_cast<int64_t>(fst.st_mtim.tv_sec) * 1000000000 + fst.st_mtim.tv_nsec};
      stats_.bytes += static_cast<uint64_t>(fst.st_size);
    }
    closedir(d);
  }
  stats_.files = entries_.size();
  Unlink(Evict());  // the bound may have shrunk since
  thread_ = QuietThread([this] { Run(); });
  return {};
}

void ImageCacheWriter::Offer(const std::string& identity, const FileMapping& m, int fd) {
  std::string name = CachedImageName(identity);
  std::lock_guard<std::mutex> lock(mutex_);
  if (seen_.size() >= kSeenLimit) seen_.clear();
  bool first = !name.empty() && seen_.insert(name).second;
  auto cached = entries_.find(name);
  // Once queued is enough; a copy is made once; a cached one is marked used
  // the first time this lcpid sees it. An offer that failed or was dropped
  // is tried again when the image is mapped again.
  bool wanted = !name.empty() && !stop_ && thread_.joinable() && !queued_.count(name) &&
                (cached == entries_.end() || first);
  if (!wanted) {
    if (fd >= 0) close(fd);
    return;
  }
  if (cached != entries_.end()) {
    stats_.hits++;
    cached->second.used = NowNs();
    if (fd >= 0) close(fd);
    queue_.push_back({name, identity, m, -1, true});
  } else {
    if (first) stats_.misses++;
    queue_.push_back({name, identity, m, fd, false});
  }
  queued_.insert(name);
  // Full: the oldest offer goes. The newest is the likeliest to be a
  // short-lived process whose file is about to become unreachable.
  if (queue_.size() > kQueueLimit) {
    Job& old = queue_.front();
    if (old.fd >= 0) close(old.fd);
    queued_.erase(old.name);
    if (!old.touch) stats_.dropped++;
    queue_.pop_front();
  }
  wake_.notify_one();
}

void ImageCacheWriter::Run() {
  // Copies are background work: low CPU and I/O priority for this thread,
  // but not the idle class, which a busy host's disk never serves (a copy
  // that waits too long misses a short-lived program).
  pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 10);
  syscall(SYS_ioprio_set, kIoprioWhoProcess, tid,
          (kIoprioClassBestEffort << kIoprioClassShift) | kIoprioLowest);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    // Newest first: a process seen long ago (the /proc scan at start) is
    // likelier still to be there than one that just started.
    Job job = std::move(queue_.back());
    queue_.pop_back();
    lock.unlock();
    std::string path = config_.dir + "/" + job.name;
    Expected<void> done;
    if (job.touch) {
      utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
    } else {
      done = Copy(job);
    }
    if (job.fd >= 0) close(job.fd);
    lock.lock();
    queued_.erase(job.name);
    if (!done) {
      stats_.failed++;
      spdlog::info("image cache: no copy of {} ({}): {}", Printable(job.mapping.path), job.identity,
                   Printable(done.error().message()));
    }
  }
  for (Job& job : queue_)
    if (job.fd >= 0) close(job.fd);
  queue_.clear();
  finished_ = true;
  finished_cv_.notify_all();
}

Expected<void> ImageCacheWriter::Copy(Job& job) {
  uint64_t size = 0;
  if (job.fd < 0) {
    Expected<MappedFile> f = OpenMappedFile(job.mapping);
    if (!f) return f.error();
    job.fd = f->fd;
    size = f->size;
  } else {
    struct stat st;
    if (fstat(job.fd, &st) != 0) return ErrnoError(job.mapping.path, errno);
    size = static_cast<uint64_t>(st.st_size);
  }
  if (size > config_.max_bytes)
    return Error(Errc::kFull, std::to_string(size) + " bytes, more than the whole cache");
  // The database beside the cache comes first: a copy never takes the room
  // its merges need (on a full disk, copies would eat every byte freed).
  struct statvfs fs;
  if (statvfs(config_.dir.c_str(), &fs) == 0) {
    uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
    uint64_t reserve = ImageCacheReserve(static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize);
    if (free_bytes < reserve + size)
      return Error(Errc::kFull, "the file system keeps " + std::to_string(reserve) +
                                    " bytes free for the database");
  }
  std::string temp = config_.dir + "/" + kTempPrefix + job.name;
  std::string path = config_.dir + "/" + job.name;
  int out =
      open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, config_.file_mode);
  if (out < 0) return ErrnoError(temp, errno);
  bool ok = (!config_.group || fchown(out, static_cast<uid_t>(-1), *config_.group) == 0) &&
            fchmod(out, config_.file_mode) == 0 && CopyBytes(job.fd, out, size, stop_);
  int err = errno;
  if (close(out) != 0 && ok) {
    ok = false;
    err = errno;
  }
  // The copy must be the image it is filed under (the file may have changed
  // since it was identified): checked on the copy itself.
  if (ok) {
    Expected<ImageIdentity> id = IdentifyElfFile(temp);
    if (!id || id->identity != job.identity) {
      unlink(temp.c_str());
      return Error(Errc::kBadElf, "the copy is " + (id ? id->identity : id.error().message()) +
                                      ", not the image offered (changed since identified?)");
    }
  }
  if (!ok || rename(temp.c_str(), path.c_str()) != 0) {
    if (ok) err = errno;
    unlink(temp.c_str());
    return ErrnoError(temp, err);
  }
  std::vector<std::string> victims;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_[job.name] = {size, NowNs()};
    stats_.bytes += size;
    victims = Evict();
  }
  Unlink(victims);
  return {};
}

std::vector<std::string> ImageCacheWriter::Evict() {
  std::vector<std::string> victims;
  while (stats_.bytes > config_.max_bytes && !entries_.empty()) {
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->second.used < oldest->second.used) oldest = it;
    victims.push_back(config_.dir + "/" + oldest->first);
    stats_.bytes -= oldest->second.size;
    stats_.evicted++;
    entries_.erase(oldest);
  }
  stats_.files = entries_.size();
  return victims;
}

void ImageCacheWriter::Unlink(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) unlink(p.c_str());
}

bool ImageCacheWriter::Stop(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  stop_ = true;
  wake_.notify_all();
  if (!thread_.joinable()) return true;
  auto finished = [this] { return finished_; };
  if (wait == std::chrono::milliseconds::max())
    finished_cv_.wait(lock, finished);  // now + max would overflow
  else if (!finished_cv_.wait_for(lock, wait, finished))
    return false;
  lock.unlock();
  thread_.join();
  return true;
}

ImageCacheStats ImageCacheWriter::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace lcpi
