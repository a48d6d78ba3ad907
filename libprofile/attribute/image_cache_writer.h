// image_cache_writer.h - lcpid's side of the image cache (image/image_cache.h):
// the first time an image is seen, a copy of its file is kept under the
// cache directory by its identity, so the tools can name its code after the
// file is deleted, replaced, or gone with its container. Copies are made on
// a thread of their own, at low priority, from a bounded queue (newest
// first; the oldest offer is dropped and counted when it is full): offering
// an image never waits for a disk. The cache
// is bounded in bytes; the least recently used copies go first (use is the
// copy's modification time, touched each time lcpid sees the image again).
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_CACHE_WRITER_H
#define LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_CACHE_WRITER_H

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "libprofile/attribute/mapped_file.h"
#include "libprofile/base/error.h"

namespace lcpi {

struct ImageCacheConfig {
  std::string dir;  // ImageCacheDir(database)
  uint64_t max_bytes = 0;
  mode_t file_mode = 0600;     // as the database's files
  mode_t dir_mode = 0700;      // as the database's directory
  std::optional<gid_t> group;  // the readers' group, when it exists
};

struct ImageCacheStats {
  uint64_t hits = 0;     // images offered that were already cached
  uint64_t misses = 0;   // images offered that were not (copied, or failed)
  uint64_t failed = 0;   // copies that could not be made (file gone, too big, disk)
  uint64_t dropped = 0;  // offers lost to a full queue
  uint64_t evicted = 0;  // copies removed to stay within max_bytes
  uint64_t files = 0;
  uint64_t bytes = 0;
};

// The free space a copy must leave on the cache's file system, for the
// database beside it: a tenth of the file system, at least 64 MiB and at
// most 1 GiB. A copy that would go below it is not made (counted failed).
uint64_t ImageCacheReserve(uint64_t file_system_bytes);

class ImageCacheWriter {
 public:
  explicit ImageCacheWriter(ImageCacheConfig config) : config_(std::move(config)) {}
  ~ImageCacheWriter() { Stop(std::chrono::milliseconds::max()); }
  ImageCacheWriter(const ImageCacheWriter&) = delete;
  ImageCacheWriter& operator=(const ImageCacheWriter&) = delete;

  // Creates the directory (or checks the one there), takes stock of the
  // copies already in it and starts the copying thread.
  Expected<void> Start();
  // Keeps a copy of image `identity`, the file m maps: read from `fd` when
  // the caller has it open already (the descriptor passes here), else
  // opened on the copying thread (OpenMappedFile). Never blocks on I/O.
  // Cheap to call for every mapping: an image cached or queued is skipped.
  void Offer(const std::string& identity, const FileMapping& m, int fd = -1);
  // Stops the copying thread: a copy under way is abandoned between chunks.
  // False when the thread did not finish within `wait` (stuck in a system
  // call on a hung file system): the caller must then leak this object,
  // whose thread dies with the process, rather than destroy it.
  bool Stop(std::chrono::milliseconds wait);
  ImageCacheStats stats() const;

 private:
  struct Job {
    std::string name;  // CachedImageName
    std::string identity;
    FileMapping mapping;
    int fd = -1;
    bool touch = false;  // a hit: mark the copy used
  };
  struct Entry {
    uint64_t size = 0;
    int64_t used = 0;  // ns since the epoch
  };
  void Run();
  Expected<void> Copy(Job& job);
  // With mutex_ held: forgets the least recently used copies until the
  // cache fits and returns their paths, for Unlink once the lock is let go
  // (Offer, on lcpid's sampling thread, never waits for a disk).
  std::vector<std::string> Evict();
  static void Unlink(const std::vector<std::string>& paths);

  ImageCacheConfig config_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::map<std::string, Entry> entries_;  // copies on disk, by name
  std::set<std::string> queued_;          // names offered and not done
  // Names offered since start, so that hits and misses count each image
  // once; forgotten all at once when it reaches kSeenLimit, so that a host
  // running new binaries for months does not grow it without bound (an
  // image offered again after that counts again).
  std::set<std::string> seen_;
  static constexpr size_t kSeenLimit = 65536;
  ImageCacheStats stats_;
  std::atomic<bool> stop_{false};
  bool finished_ = false;  // the thread is out of Run
  std::condition_variable finished_cv_;
  std::thread thread_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_CACHE_WRITER_H
