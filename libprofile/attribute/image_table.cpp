// image_table.cpp - interning images by identity.
#include "libprofile/attribute/image_table.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "libprofile/base/text.h"
#include "libprofile/image/image_id.h"

namespace lcpi {

uint32_t ProcessUid(uint32_t pid) {
  // A stat of /proc/PID: answered by procfs, never by a user's file system.
  struct stat st;
  const std::string dir = "/proc/" + std::to_string(pid);
  if (stat(dir.c_str(), &st) != 0) return LookupWorker::kNoUser;
  return static_cast<uint32_t>(st.st_uid);
}

int32_t ImageTable::Add(ImageEntry entry) {
  if (free_.empty()) {
    images_.push_back(std::move(entry));
    return static_cast<int32_t>(images_.size() - 1);
  }
  int32_t index = free_.back();
  free_.pop_back();
  images_[index] = std::move(entry);
  return index;
}

int32_t ImageTable::Intern(const std::string& identity, const std::string& path, ImageKind kind) {
  auto it = by_identity_.find(identity);
  if (it != by_identity_.end()) return it->second;
  int32_t index = Add({identity, path, kind});
  by_identity_.emplace(identity, index);
  return index;
}

size_t ImageTable::Forget(const std::vector<bool>& in_use) {
  auto forgettable = [&](int32_t i) {
    const ImageEntry& e = images_[i];
    if (e.identity.empty() || e.pending) return false;  // already forgotten; being identified
    if (static_cast<size_t>(i) < in_use.size() && in_use[i]) return false;
    if (e.kind == ImageKind::kUnknown) return true;
    return e.kind == ImageKind::kUser && !e.identity.starts_with("vdso:");
  };
  size_t gone = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(images_.size()); ++i) {
    if (!forgettable(i)) continue;
    // Two entries may share an identity: the table's index is the first's.
    auto it = by_identity_.find(images_[i].identity);
    if (it != by_identity_.end() && it->second == i) by_identity_.erase(it);
    images_[i] = ImageEntry{};
    free_.push_back(i);
    gone++;
  }
  if (gone == 0) return 0;
  std::erase_if(claims_, [&](const auto& c) { return !by_identity_.contains(c.second); });
  std::erase_if(conflicting_, [&](const std::string& id) { return !by_identity_.contains(id); });
  for (auto f = by_file_.begin(); f != by_file_.end();) {
    auto next = std::next(f);
    if (images_[f->second].identity.empty()) EraseFile(f);
    f = next;
  }
  // Said once per file while it was known; said again if it comes back.
  warned_.clear();
  return gone;
}

Expected<ImageTable::Identified> ImageTable::Identify(const FileMapping& m) {
  Expected<MappedFile> file = OpenMappedFile(m);
  if (!file) return file.error();
  Identified found;
  found.fd.reset(file->fd);
  Expected<ImageIdentity> id = IdentifyElfFd(file->fd, file->size, file->via);
  if (!id) return id.error();
  found.id = std::move(*id);
  return found;
}

void ImageTable::Settle(int32_t index, const FileMapping& m, Expected<Identified> found) {
  ImageEntry& e = images_[index];
  if (e.pending) pending_--;
  e.pending = false;
  if (!found) {
    // Its samples keep their offsets, under an image that says the file
    // was not read (the tools then never open the host's file at that path).
    if (warned_.insert({m.dev, m.ino, m.path}).second) {
      spdlog::warn("cannot identify {} (pid {}): {}; its samples are filed as unreadable",
                   Printable(m.path), m.pid, Printable(found.error().message()));
    }
    char devino[48];
    std::snprintf(devino, sizeof devino, "%" PRIx64 ":%" PRIu64 ":", m.dev, m.ino);
    e = {"unreadable:" + std::string(devino) + m.path, "[unreadable " + m.path + "]",
         ImageKind::kUnknown};
    // Refused for the lookups' load (queue full, stalled), not for the file:
    // its samples so far stay unreadable, but the file is not remembered
    // so, and its next mapping looks it up again.
    if (found.error().code() == Errc::kBusy && RefusedForLoad(found.error().message()))
      if (auto f = by_file_.find(KeyOf(m)); f != by_file_.end() && f->second == index) EraseFile(f);
  } else {
    e = {found->id.identity, m.path, ImageKind::kUser};
    if (!found->id.content_hashed) file_stat_++;
    NoteClaim(found->id, m);
  }
  // The first entry of an identity is the one Intern finds; a later one with
  // the same (another path to the same content) keeps its index, and batches
  // file both under the one identity.
  by_identity_.emplace(e.identity, index);
  // The file is open and checked: the cache copies from this descriptor.
  if (found && cache_) cache_->Offer(e.identity, m, found->fd.release());
}

void ImageTable::NoteClaim(const ImageIdentity& id, const FileMapping& m) {
  if (id.build_id.empty()) return;
  auto [it, fresh] = claims_.try_emplace(id.build_id, id.identity);
  if (fresh || it->second == id.identity) return;
  // Another file claims a build-id already seen, with another layout: its
  // own image, counted and said once per identity.
  if (conflicting_.insert(id.identity).second) {
    build_id_conflicts_++;
    spdlog::warn(
        "build-id conflict: {} (pid {}) claims build-id {} with another layout "
        "than the first file seen with it; its samples are its own ({})",
        Printable(m.path), m.pid, id.build_id, id.identity);
  }
}

void ImageTable::EraseFile(std::map<FileKey, int32_t>::iterator it) {
  path_bytes_ -= std::get<2>(it->first).size();
  by_file_.erase(it);
}

ImageTable::FileKey ImageTable::KeyOf(const FileMapping& m) {
  if (!m.build_id.empty() && m.ino == 0) return FileKey{~uint64_t{0}, m.pid, m.path};
  return FileKey{m.dev, m.ino, m.path};
}

int32_t ImageTable::ForFile(const FileMapping& m) {
  // Every file is read (its build-id is only a claim, image_id.h), once per
  // device, inode and path. A mapping known only by the build-id the
  // kernel read from it (no device and inode) is read once per process:
  // nothing else says which file it is.
  FileKey key = KeyOf(m);
  auto it = by_file_.find(key);
  if (it != by_file_.end()) return it->second;
  if (by_file_.size() >= max_files_ || path_bytes_ + m.path.size() > max_path_bytes_) {
    files_refused_++;
    return -1;  // kNoImage: the process's unknown image
  }
  path_bytes_ += m.path.size();
  char name[64];
  std::snprintf(name, sizeof name, "pending:%" PRIx64 ":%" PRIu64 ":", m.dev, m.ino);
  const int32_t index = Add({name + m.path, m.path, ImageKind::kUser, lookups_ != nullptr});
  by_file_.emplace(std::move(key), index);
  if (lookups_) pending_++;
  RunLookup<Identified>(
      lookups_, [m] { return Identify(m); },
      [this, index, m](Expected<Identified> found) { Settle(index, m, std::move(found)); },
      lookups_ ? ProcessUid(m.pid) : LookupWorker::kNoUser);
  return index;
}

int32_t ImageTable::Vdso() {
  utsname u{};
  uname(&u);
  return Intern(std::string("vdso:") + u.release, "[vdso]", ImageKind::kUser);
}

int32_t ImageTable::Unknown(const std::string& comm) {
  std::string name = comm.empty() ? "?" : comm;
  return Intern("unknown:" + name, "[unknown " + name + "]", ImageKind::kUnknown);
}

}  // namespace lcpi
