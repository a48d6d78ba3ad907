// image_table.h - the daemon's table of images seen so far, each identified
// by content (build-id, else a hash of the ELF file, see image_id.h), so a
// binary replaced on disk becomes a new image. A mapped file is read as its
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

namespace lcpi {

struct ImageEntry {
  std::string identity;  // unique: "build-id:..", "content-hash:..", "kernel:..", "unknown:comm"
  std::string path;      // where it was first seen
  ImageKind kind = ImageKind::kUser;
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
  int32_t ForFile(const FileMapping& m);
  void SetCache(ImageCacheWriter* cache) { cache_ = cache; }
  // The kernel's vDSO, mapped into every process ("[vdso]"); one per kernel release.
  int32_t Vdso();
  // The explicit unknown image of a process name (anonymous, JIT, unmapped).
  int32_t Unknown(const std::string& comm);
  int32_t Intern(const std::string& identity, const std::string& path, ImageKind kind);

  // Forgets the file and unknown images nothing refers to any more
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
  std::vector<ImageEntry> images_;
  std::unordered_map<std::string, int32_t> by_identity_;
  // Identified files. One that failed is not kept here: a later mapping (a
  // live process, a readable root) may succeed; its log line is said once.
  std::map<std::tuple<uint64_t, uint64_t, std::string>, int32_t> by_file_;
  std::set<std::tuple<uint64_t, uint64_t, std::string>> warned_;
  std::vector<int32_t> free_;  // forgotten indices, for reuse
  ImageCacheWriter* cache_ = nullptr;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_IMAGE_TABLE_H
