// image_table.cpp - interning images by identity.
#include "libprofile/attribute/image_table.h"

#include <sys/utsname.h>

#include <spdlog/spdlog.h>

#include "libprofile/base/text.h"
#include "libprofile/image/image_id.h"

namespace lcpi {

int32_t ImageTable::Intern(const std::string& identity, const std::string& path, ImageKind kind) {
  auto it = by_identity_.find(identity);
  if (it != by_identity_.end()) return it->second;
  int32_t index = static_cast<int32_t>(images_.size());
  images_.push_back({identity, path, kind});
  by_identity_.emplace(identity, index);
  return index;
}

int32_t ImageTable::ForFile(const std::string& path, const std::string& build_id, uint64_t dev,
                            uint64_t ino) {
  if (!build_id.empty()) return Intern("build-id:" + build_id, path, ImageKind::kUser);
  auto key = std::make_tuple(dev, ino, path);
  auto it = by_file_.find(key);
  if (it != by_file_.end()) return it->second;
  Expected<ImageIdentity> id = IdentifyElfFile(path);
  if (!id) {
    // Once per file (the result is cached below): its samples keep a name,
    // but no identity by content, and the operator should know why.
    spdlog::warn("cannot identify {}: {}; its samples are filed under its path", Printable(path),
                 Printable(id.error().message()));
  }
  int32_t index = id ? Intern(id->identity, path, ImageKind::kUser)
                     : Intern("file:" + path, path, ImageKind::kUser);
  by_file_.emplace(key, index);
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
