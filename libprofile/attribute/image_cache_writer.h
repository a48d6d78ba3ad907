// image_cache_writer.h - lcpid's side of the image cache (image/image_cache.h):
// the first time an image is seen, a copy of its file is kept under the
// cache directory by its identity, so the tools can name its code after the
// file is deleted, replaced, or gone with its container. Copies are made on
// a thread of their own, at low priority, from a bounded queue (newest
// first; the oldest offer is dropped and counted when it is full): offering
// an image never waits for a disk, and a copy that stops making progress (a
// hung mount) is abandoned to a thread of its own while another goes on.
// The cache is bounded in bytes and files; the least recently used copies
// go first (use is the copy's modification time, touched each time lcpid
// sees the image again), users' before root's, and a user over their share
// loses their own. Files are told apart by owner: root's file stands for an
// identity over a user's, and only a file others could read gets a copy
// the readers' group may read.
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_CACHE_WRITER_H
#define LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_CACHE_WRITER_H

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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
  // A copy whose thread neither copied a byte nor used CPU for this long
  // (a hung mount) is abandoned; another thread goes on caching, up to
  // max_stuck threads left behind at once.
  std::chrono::milliseconds stuck_after{10000};
  size_t max_stuck = 4;
  uint64_t max_files = 16384;
  // Each owner but root may hold 1/user_share of the bytes and of the files.
  unsigned user_share = 8;
};

struct ImageCacheStats {
  uint64_t hits = 0;           // images offered that were already cached
  uint64_t misses = 0;         // images offered that were not (copied, or failed)
  uint64_t failed = 0;         // copies that could not be made (file gone, too big, disk)
  uint64_t dropped = 0;        // offers lost to a full queue (or a full backlog)
  uint64_t evicted = 0;        // copies removed to stay within max_bytes
  uint64_t evicted_share = 0;  // of those, a user's own copies over their share
  uint64_t stuck = 0;          // copies abandoned: no progress for stuck_after
  uint64_t replaced = 0;       // a user's copy replaced by a root-owned file's
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t private_files = 0;  // copies kept root-only: others could not read the file
  size_t stuck_threads = 0;    // copying threads still blocked now
};

// The extended attribute of a copy that holds the uid of the file it was
// copied from (decimal): root's copies are never evicted or replaced for a
// user's. A copy without it (made by an older lcpid) counts as a user's.
inline constexpr char kCachedOwnerXattr[] = "trusted.lcpi.owner";

// The free space a copy must leave on the cache's file system, for the
// database beside it: a tenth of the file system, at least 64 MiB and at
// most 1 GiB. A copy that would go below it is not made (counted failed).
uint64_t ImageCacheReserve(uint64_t file_system_bytes);

class ImageCacheWriter {
 public:
  explicit ImageCacheWriter(ImageCacheConfig config);
  // Stop(stuck_after): a thread still blocked is left to end with the process.
  ~ImageCacheWriter();
  ImageCacheWriter(const ImageCacheWriter&) = delete;
  ImageCacheWriter& operator=(const ImageCacheWriter&) = delete;

  // Creates the directory (or checks the one there), takes stock of the
  // copies already in it and starts the copying thread.
  Expected<void> Start();
  // Offer, Pump and stats are called from one thread (lcpid's loop), and
  // none of them waits for the copying threads: those run at nice 10, and one
  // preempted while it holds the cache's lock would hold the loop (and every
  // status request) for as long as busier work keeps it off a CPU (2 s seen
  // under the hostile test's load). When the lock is taken they leave the
  // offer in a backlog of their own, or answer with the last figures.
  //
  // Keeps a copy of image `identity`, the file m maps: read from `fd` when
  // the caller has it open already (the descriptor passes here), else
  // opened on the copying thread (OpenMappedFile). Never blocks on I/O.
  // Cheap to call for every mapping: an image cached or queued is skipped
  // (but a user's copy is looked at again for each new path that maps it,
  // in case that file is root's). Also where a stuck copy is noticed.
  void Offer(const std::string& identity, const FileMapping& m, int fd = -1);
  // Hands the backlog to the copying threads if their lock is free.
  void Pump();
  // Stops the copying thread: a copy under way is abandoned between chunks.
  // False when a thread did not finish within `wait`, or an abandoned one is
  // still blocked (in a system call on a hung file system): those threads
  // keep what they use and end with the process, which must then leave
  // without joining them (lcpid's _exit).
  bool Stop(std::chrono::milliseconds wait);
  // Counters; notices a stuck copy too. The last figures read when the lock
  // is taken.
  ImageCacheStats stats() const;

  // Shared with the copying threads, which may outlive this object (a
  // stuck one); in image_cache_writer.cpp.
  struct State;

 private:
  struct Backlogged {
    std::string identity;
    FileMapping mapping;
    int fd = -1;
  };
  // With the lock held: offers one image to the copying threads.
  void OfferLocked(const std::string& identity, const FileMapping& m, int fd);
  // With the lock held: the backlog, offered in order.
  void PumpLocked();

  std::shared_ptr<State> state_;
  std::vector<Backlogged> backlog_;     // offers made while the lock was taken
  uint64_t backlog_dropped_ = 0;        // offers lost to a full backlog
  mutable ImageCacheStats last_stats_;  // as stats() last read them
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_CACHE_WRITER_H
