// unwind_tables.cpp - opening an image's CFI through libdw, and the cache.
#include "libprofile/unwind/unwind_tables.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdlib>

#include "libprofile/base/regular_file.h"
#include "libprofile/image/image_cache.h"

namespace lcpi {
namespace {

std::string Hex(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; i++) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

// True when the ELF's build-id is the one `identity` names
// ("build-id:HEX:...").
bool BuildIdMatches(Elf* elf, const std::string& identity) {
  constexpr std::string_view kPrefix = "build-id:";
  if (identity.rfind(kPrefix, 0) != 0) return false;
  const void* id = nullptr;
  ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
  if (n <= 0) return false;
  std::string want = Hex(static_cast<const uint8_t*>(id), static_cast<size_t>(n));
  return identity.compare(kPrefix.size(), want.size(), want) == 0 &&
         (identity.size() == kPrefix.size() + want.size() ||
          identity[kPrefix.size() + want.size()] == ':');
}

}  // namespace

ImageCfi::~ImageCfi() {
  for (auto& table : frames)
    for (auto& [addr, frame] : table) free(frame);
  if (eh_frame) dwarf_cfi_end(static_cast<Dwarf_CFI*>(eh_frame));
  if (dwarf) dwarf_end(static_cast<Dwarf*>(dwarf));
  if (elf) elf_end(static_cast<Elf*>(elf));
  if (fd >= 0) close(fd);
}

std::optional<uint64_t> ImageCfi::VaddrOf(uint64_t offset) const {
  for (const Load& l : loads)
    if (offset >= l.offset && offset - l.offset < l.filesz) return l.vaddr + (offset - l.offset);
  return std::nullopt;
}

std::shared_ptr<ImageCfi> UnwindTables::Open(const std::string& identity,
                                             const std::string& path) const {
  static const bool version_set = elf_version(EV_CURRENT) != EV_NONE;
  if (!version_set) return nullptr;
  // The cache's copy is the image itself; a path is taken only when its
  // build-id says it is (the file there may have been replaced, or be
  // another mount namespace's).
  const std::string cached = db_path_.empty() ? "" : FindCachedImage(db_path_, identity);
  const std::string* files[] = {&cached, &path};
  for (const std::string* f : files) {
    const std::string& file = *f;
    if (file.empty() || file[0] != '/') continue;
    auto cfi = std::make_shared<ImageCfi>();
    // A path is whatever the process mapped first under that name: a FIFO
    // or device put there since is refused, never waited on.
    Expected<int> fd = OpenRegularFile(file);
    if (!fd) continue;
    cfi->fd = *fd;
    // ELF_C_READ, as every ELF reader here: a mapping of a file its owner
    // may truncate would end lcpid with SIGBUS at the next read of it.
    Elf* elf = elf_begin(cfi->fd, ELF_C_READ, nullptr);
    cfi->elf = elf;
    if (!elf || elf_kind(elf) != ELF_K_ELF) continue;
    if (f == &path && identity.rfind(kMappedIdentity, 0) != 0 && !BuildIdMatches(elf, identity))
      continue;
    size_t phnum = 0;
    if (elf_getphdrnum(elf, &phnum) != 0) continue;
    for (size_t i = 0; i < phnum; i++) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
        cfi->loads.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
    }
    cfi->eh_frame = dwarf_getcfi_elf(elf);
    if (Dwarf* dw = dwarf_begin_elf(elf, DWARF_C_READ, nullptr)) {
      cfi->dwarf = dw;
      cfi->debug_frame = dwarf_getcfi(dw);
    }
    if (!cfi->eh_frame && !cfi->debug_frame) continue;
    return cfi;
  }
  return nullptr;
}

std::shared_ptr<ImageCfi> UnwindTables::Get(const std::string& identity, const std::string& path) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(identity);
    if (it != entries_.end() && (it->second.cfi || now < it->second.retry_at)) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.cfi;
    }
  }
  // Opened without the lock: another thread may open the same identity
  // meanwhile; the first to finish is kept.
  std::shared_ptr<ImageCfi> cfi = Open(identity, path);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(identity);
  if (it == entries_.end()) {
    lru_.push_front(identity);
    it = entries_.emplace(identity, Entry{nullptr, {}, lru_.begin()}).first;
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    if (it->second.cfi) return it->second.cfi;
  }
  it->second.cfi = cfi;
  it->second.retry_at = now + kRetryAfter;
  (cfi ? stats_.opened : stats_.missing)++;
  while (entries_.size() > kMaxImages) {
    entries_.erase(lru_.back());
    lru_.pop_back();
    stats_.evicted++;
  }
  return cfi;
}

UnwindTableStats UnwindTables::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  UnwindTableStats s = stats_;
  s.held = entries_.size();
  return s;
}

}  // namespace lcpi
