// image_table.cpp - interning images by identity.
#include "libprofile/attribute/image_table.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "libprofile/base/text.h"
#include "libprofile/image/image_id.h"

namespace lcpi {

int32_t ImageTable::Intern(const std::string& identity, const std::string& path, ImageKind kind) {
  auto it = by_identity_.find(identity);
  if (it != by_identity_.end()) return it->second;
  int32_t index;
  if (free_.empty()) {
    index = static_cast<int32_t>(images_.size());
    images_.push_back({identity, path, kind});
  } else {
    index = free_.back();
    free_.pop_back();
    images_[index] = {identity, path, kind};
  }
  by_identity_.emplace(identity, index);
  return index;
}

size_t ImageTable::Forget(const std::vector<bool>& in_use) {
  auto forgettable = [&](int32_t i) {
    const ImageEntry& e = images_[i];
    if (e.identity.empty()) return false;  // already forgotten
    if (static_cast<size_t>(i) < in_use.size() && in_use[i]) return false;
    if (e.kind == ImageKind::kUnknown) return true;
    return e.kind == ImageKind::kUser && !e.identity.starts_with("vdso:");
  };
  size_t gone = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(images_.size()); ++i) {
    if (!forgettable(i)) continue;
    by_identity_.erase(images_[i].identity);
    images_[i] = ImageEntry{};
    free_.push_back(i);
    gone++;
  }
  if (gone == 0) return 0;
  std::erase_if(by_file_, [&](const auto& f) { return images_[f.second].identity.empty(); });
  // Said once per file while it was known; said again if it comes back.
  warned_.clear();
  return gone;
}

int32_t ImageTable::ForFile(const FileMapping& m) {
  if (!m.build_id.empty()) {
    // Named by the kernel: the file is opened only for the cache, on its
    // thread; offered at every mapping, so a copy that failed (its process
    // gone too soon) is tried again from the next process that maps it.
    int32_t index = Intern("build-id:" + m.build_id, m.path, ImageKind::kUser);
    if (cache_) cache_->Offer(images_[index].identity, m);
    return index;
  }
  auto key = std::make_tuple(m.dev, m.ino, m.path);
  auto it = by_file_.find(key);
  if (it != by_file_.end()) return it->second;
  Expected<ImageIdentity> id = Error(Errc::kNotFound, "");
  Expected<MappedFile> file = OpenMappedFile(m);
  if (file) {
    id = IdentifyElfFd(file->fd, file->size, file->via);
  } else {
    id = file.error();
  }
  if (!id) {
    if (file) close(file->fd);
    // Its samples keep their offsets, under an image that says the file
    // was not read (the tools then never open the host's file at that path).
    if (warned_.insert(key).second) {
      spdlog::warn("cannot identify {} (pid {}): {}; its samples are filed as unreadable",
                   Printable(m.path), m.pid, Printable(id.error().message()));
    }
    char devino[48];
    std::snprintf(devino, sizeof devino, "%" PRIx64 ":%" PRIu64 ":", m.dev, m.ino);
    return Intern("unreadable:" + std::string(devino) + m.path, "[unreadable " + m.path + "]",
                  ImageKind::kUnknown);
  }
  int32_t index = Intern(id->identity, m.path, ImageKind::kUser);
  by_file_.emplace(key, index);
  // The file is open and checked: the cache copies from this descriptor.
  if (cache_)
    cache_->Offer(id->identity, m, file->fd);
  else
    close(file->fd);
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
