// image_table.h - the daemon's table of images seen so far, each identified
// by content (build-id, else a hash of the ELF file, see image_id.h), so a
// binary replaced on disk becomes a new image, and a file claiming another's
// build-id is not that file (a build-id conflict). A mapped file is read as its
// process sees it (mapped_file.h) and only when it is the file the kernel
// described; mappings are identified once per (device, inode, path) and
// cached; the kernel, its modules, the per-process-name "unknown" images and
// files that could not be read have identities of their own.
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_TABLE_H
#define LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_TABLE_H

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "libprofile/attribute/image_cache_writer.h"
#include "libprofile/attribute/mapped_file.h"
#include "libprofile/base/image_kind.h"
#include "libprofile/base/lookup_worker.h"
#include "libprofile/base/unique_fd.h"
#include "libprofile/image/image_id.h"

namespace lcpi {

// The uid of process `pid`, the user its lookups (and its stacks' walks)
// are queued under; a process already gone shares LookupWorker::kNoUser
// with the other such.
uint32_t ProcessUid(uint32_t pid);

struct ImageEntry {
  // "build-id:..", "content-hash:..", "kernel:..", "unknown:comm"; two
  // entries may share one (two files found to have the same content)
  std::string identity;
  std::string path;  // where it was first seen
  ImageKind kind = ImageKind::kUser;
  bool pending = false;  // identity not known yet: a lookup is identifying the file
};

class ImageTable {
 public:
  // The image of a file mapping. Its build-id (hex) comes from the MMAP2
  // record when the kernel supplied it; else the file is opened through the
  // process (OpenMappedFile: the same device and inode) and identified. A
  // file that cannot be opened, matched or identified never takes another
  // file's identity: it gets an "[unreadable PATH]" image of its own (per
  // device, inode and path), and a log line says why.
  // Each user image new to the table is offered to the cache, if set.
  //
  // With lookups set, opening and identifying the file (which may block on
  // a FIFO, a hung mount or a 2 GB file) runs there, and ForFile returns at
  // once an image that is pending() until the lookup's result comes back
  // (LookupWorker::RunCompletions): samples are counted under it meanwhile,
  // and a batch holds its counts back until it has its identity. A lookup
  // that does not end (abandoned) files the image as unreadable, saying why;
  // one refused for the lookups' load (queue full, stalled) does so for the
  // samples so far only: the file's next mapping looks it up again.
  // Lookups are queued per user (the uid of the mapping's process), so one
  // user's slow files do not hold up another user's (LookupWorker).
  //
  // At most max_files files are known at once, their paths max_path_bytes
  // in all: past either, a new file gets no image (-1, kNoImage: its
  // samples go to its process's unknown image) and is counted
  // (files_refused); forgotten files make room.
  int32_t ForFile(const FileMapping& m);
  void SetFileLimits(size_t max_files, size_t max_path_bytes) {
    max_files_ = max_files;
    max_path_bytes_ = max_path_bytes;
  }
  uint64_t files_refused() const { return files_refused_; }
  void SetCache(ImageCacheWriter* cache) { cache_ = cache; }
  void SetLookups(LookupWorker* lookups) { lookups_ = lookups; }
  bool pending(int32_t index) const { return images_[index].pending; }
  size_t pending_count() const { return pending_; }
  // Files named by their metadata, not their content ("file-stat:"): past
  // the hashing budget (image_id.h HashLimits). Counted as identified.
  uint64_t file_stat_count() const { return file_stat_; }
  // Files that claimed a build-id an earlier file claimed, with another
  // layout (one count per such identity): each is an image of its own.
  uint64_t build_id_conflicts() const { return build_id_conflicts_; }
  // The kernel's vDSO, mapped into every process ("[vdso]"); one per kernel release.
  int32_t Vdso();
  // The explicit unknown image of a process name (anonymous, JIT, unmapped).
  int32_t Unknown(const std::string& comm);
  int32_t Intern(const std::string& identity, const std::string& path, ImageKind kind);

  // Forgets the file and unknown images nothing refers to any more, and
  // none being identified
  // (in_use[index] false or past its end: the caller knows that no address
  // space maps them and no pending count names them), so that the table does
  // not grow for months with every binary a host ever ran. Their indices go
  // to later images; one seen again is identified again. The kernel side,
  // the vDSO and JIT images stay. Returns how many went.
  size_t Forget(const std::vector<bool>& in_use);

  const ImageEntry& at(int32_t index) const { return images_[index]; }
  size_t size() const { return images_.size(); }  // indices handed out, forgotten included
  size_t live() const { return images_.size() - free_.size(); }
  const std::vector<ImageEntry>& all() const { return images_; }  // forgotten: identity ""

 private:
  using FileKey = std::tuple<uint64_t, uint64_t, std::string>;  // device, inode, path
  // An identified mapped file: its identity, and the file, still open,
  // for the cache to copy.
  struct Identified {
    ImageIdentity id;
    UniqueFd fd;
  };
  // The key a mapping's file is looked up once under (ForFile).
  static FileKey KeyOf(const FileMapping& m);
  // Opens the file as its process sees it and identifies it (may block).
  static Expected<Identified> Identify(const FileMapping& m);
  // A new entry in a free slot or at the end.
  int32_t Add(ImageEntry entry);
  // Gives entry `index` (pending, or new) the identity found, or files it
  // as unreadable, saying why; offers an identified file to the cache.
  void Settle(int32_t index, const FileMapping& m, Expected<Identified> found);
  // Remembers the first identity that claimed id's build-id; counts a
  // conflict when another does.
  void NoteClaim(const ImageIdentity& id, const FileMapping& m);

  std::vector<ImageEntry> images_;
  std::unordered_map<std::string, int32_t> by_identity_;
  // Files identified, being identified, or found unreadable: each is
  // looked up once while the table knows it. An unreadable one is tried
  // again once it has been forgotten (after a merge that found nothing
  // mapping it): a later process may have a readable view of it.
  std::map<FileKey, int32_t> by_file_;
  size_t max_files_ = 65536;
  size_t max_path_bytes_ = size_t{64} << 20;
  size_t path_bytes_ = 0;  // of by_file_'s keys
  uint64_t files_refused_ = 0;
  // Drops a file's key, its path's bytes with it.
  void EraseFile(std::map<FileKey, int32_t>::iterator it);
  std::set<FileKey> warned_;   // said once per file while it is known
  std::vector<int32_t> free_;  // forgotten indices, for reuse
  size_t pending_ = 0;
  uint64_t file_stat_ = 0;
  // Build-id -> the first identity seen claiming it, while known.
  std::unordered_map<std::string, std::string> claims_;
  std::set<std::string> conflicting_;  // identities counted as conflicts
  uint64_t build_id_conflicts_ = 0;
  ImageCacheWriter* cache_ = nullptr;
  LookupWorker* lookups_ = nullptr;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_TABLE_H
