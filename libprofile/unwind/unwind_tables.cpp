// unwind_tables.cpp - opening an image's CFI through libdw, and the cache.
#include "libprofile/unwind/unwind_tables.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <elf.h>

#include <cstdlib>
#include <cstring>

#include "libprofile/base/regular_file.h"
#include "libprofile/image/image_cache.h"
#include "libprofile/unwind/cfi_screen.h"

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

// libdw reaches .debug_frame only through dwarf_begin_elf, which reads
// every debug section and expands every compressed one (a zlib bomb in a
// user's .debug_info is gigabytes, and a -gz binary's legitimate debug
// information hundreds of megabytes). So .debug_frame is read only from an
// image without .eh_frame, and only when its debug sections are none of
// them compressed and together at most kMaxDebugBytes.
constexpr uint64_t kMaxDebugBytes = uint64_t{16} << 20;

// libdw's index of one CIE or FDE it has read (its struct and tree node),
// counted for every entry screened: it reads no more than those.
constexpr uint64_t kEntryBytes = 96;

// The walk unwinds this host's processes only: any other ELF (32-bit,
// big-endian, another machine's) has no tables here, and libdw never sees
// it. Its CFI would be read with other pointer sizes and byte orders than
// cfi_screen reads (a 32-bit .debug_frame reached libdw unscreened).
#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
constexpr uint16_t kHostMachine = EM_NONE;  // no walk: every image refused
#endif
constexpr unsigned char kHostData =
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;

// Section and program headers an image may have. libelf allocates for
// each section header at elf_begin, and extended numbering lets a sparse
// file claim 2^32 of them; linkers write a few dozen (a -ffunction-sections
// object's tens of thousands are not mapped).
constexpr uint64_t kMaxElfHeaders = 65536;

enum class HeaderCheck { kNotElf, kRefused, kHost };

// Reads the ELF header of `fd` before libelf does: kNotElf (not an ELF
// file), kRefused with `why`, or kHost.
HeaderCheck CheckHostElf(int fd, std::string* why) {
  Elf64_Ehdr eh{};
  if (pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return HeaderCheck::kNotElf;
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != kHostData ||
      eh.e_machine != kHostMachine) {
    *why = "not an ELF file of this host's machine (class " + std::to_string(eh.e_ident[EI_CLASS]) +
           ", data " + std::to_string(eh.e_ident[EI_DATA]) + ", machine " +
           std::to_string(eh.e_machine) + ")";
    return HeaderCheck::kRefused;
  }
  uint64_t shnum = eh.e_shnum, phnum = eh.e_phnum;
  if ((shnum == 0 && eh.e_shoff != 0) || phnum == PN_XNUM) {
    Elf64_Shdr first{};
    if (pread(fd, &first, sizeof first, static_cast<off_t>(eh.e_shoff)) == sizeof first) {
      if (shnum == 0) shnum = first.sh_size;
      if (phnum == PN_XNUM) phnum = first.sh_info;
    }
  }
  if (shnum > kMaxElfHeaders || phnum > kMaxElfHeaders) {
    *why = std::to_string(shnum) + " section and " + std::to_string(phnum) + " program headers";
    return HeaderCheck::kRefused;
  }
  return HeaderCheck::kHost;
}

void OpenDebugFrame(Elf* elf, ImageCfi* cfi, uint64_t max_bytes) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  uint64_t debug_bytes = 0;
  Elf_Scn* frame = nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name || (std::strncmp(name, ".debug", 6) && std::strncmp(name, ".zdebug", 7))) continue;
    if ((sh.sh_flags & SHF_COMPRESSED) || name[1] == 'z') return;
    if (sh.sh_type == SHT_NOBITS) continue;
    debug_bytes += sh.sh_size;
    if (debug_bytes > kMaxDebugBytes) return;
    // libdw reads .debug_frame through elf_getdata, which converts a
    // typed section's byte order: only untyped bytes are the ones
    // screened.
    if (!std::strcmp(name, ".debug_frame")) frame = sh.sh_type == SHT_PROGBITS ? scn : nullptr;
  }
  if (!frame) return;
  if (debug_bytes > max_bytes) {
    cfi->refused = "debug sections of " + std::to_string(debug_bytes) + " bytes";
    return;
  }
  Elf_Data* data = elf_rawdata(frame, nullptr);
  if (!data || !data->d_buf) return;
  const CfiScreen screen = ScreenDebugFrame(elf, data);
  cfi->bytes += debug_bytes + (screen.cies + screen.fdes) * kEntryBytes;
  if (!screen.why.empty()) {
    cfi->refused = screen.why;
    return;
  }
  if (!screen.present) return;
  // Only CFI is read from this Dwarf, which never reaches a dwz
  // supplementary file (libdw would open it where the image says; see
  // image/alt_dwarf.h): no AttachAltDwarf here.
  if (Dwarf* dw = dwarf_begin_elf(elf, DWARF_C_READ, nullptr)) {
    cfi->dwarf = dw;
    cfi->debug_frame = dwarf_getcfi(dw);
  }
}

}  // namespace

ImageCfi::~ImageCfi() { Release(); }

void ImageCfi::Release() {
  for (auto& table : frames) {
    for (auto& [addr, frame] : table) free(frame);
    table.clear();
  }
  if (eh_frame) dwarf_cfi_end(static_cast<Dwarf_CFI*>(eh_frame));
  if (dwarf) dwarf_end(static_cast<Dwarf*>(dwarf));
  if (elf) elf_end(static_cast<Elf*>(elf));
  if (fd >= 0) close(fd);
  eh_frame = dwarf = debug_frame = elf = nullptr;
  fd = -1;
  loads.clear();
  bytes = 0;
}

void ImageCfi::Refuse(std::string why) {
  Release();
  refused = std::move(why);
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
    // or device put there since is refused, never waited on. A recorded
    // path is opened as image_id opens it (OpenRecordedFile): a symbolic
    // link planted in any of its components by the user who owns the
    // directory would otherwise lead root's open to any file. The
    // /proc/PID/map_files path of a pending image is the mapped inode
    // itself (a magic link on procfs, which that rule refuses).
    const bool recorded = f == &path && identity.rfind(kMappedIdentity, 0) != 0;
    Expected<int> fd = recorded ? OpenRecordedFile(file) : OpenRegularFile(file);
    if (!fd) continue;
    cfi->fd = *fd;
    std::string why;
    const HeaderCheck header = CheckHostElf(cfi->fd, &why);
    if (header == HeaderCheck::kNotElf) continue;
    if (header == HeaderCheck::kRefused) {
      // A recorded path's file is this identity's only once its build-id
      // says so, which is not read here: it is let go and tried again
      // later, rather than refusing the identity for good.
      if (recorded) continue;
      cfi->Refuse(why);
      return cfi;
    }
    // ELF_C_READ, as every ELF reader here: a mapping of a file its owner
    // may truncate would end lcpid with SIGBUS at the next read of it.
    Elf* elf = elf_begin(cfi->fd, ELF_C_READ, nullptr);
    cfi->elf = elf;
    if (!elf || elf_kind(elf) != ELF_K_ELF) continue;
    if (f == &path && identity.rfind(kMappedIdentity, 0) != 0 && !BuildIdMatches(elf, identity))
      continue;
    size_t phnum = 0, shnum = 0;
    if (elf_getphdrnum(elf, &phnum) != 0) continue;
    if (elf_getshdrnum(elf, &shnum) == 0) cfi->bytes += shnum * sizeof(GElf_Shdr);
    cfi->bytes += phnum * sizeof(GElf_Phdr);
    for (size_t i = 0; i < phnum; i++) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
        cfi->loads.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
    }
    // libdw runs none of the CFI before cfi_screen has read all of it,
    // and cfi_screen reads none that would take the tables past
    // max_bytes_. A refused image holds nothing but why.
    const uint64_t room = cfi->bytes < max_bytes_ ? max_bytes_ - cfi->bytes : 0;
    const CfiScreen eh = ScreenEhFrame(elf, room);
    if (!eh.why.empty()) {
      cfi->Refuse(eh.why);
      return cfi;
    }
    if (eh.present) cfi->eh_frame = dwarf_getcfi_elf(elf);
    cfi->bytes += eh.bytes + (eh.cies + eh.fdes) * kEntryBytes;
    if (!eh.present) OpenDebugFrame(elf, cfi.get(), room);
    if (!cfi->refused.empty()) {
      cfi->Refuse(cfi->refused);
      return cfi;
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
      std::shared_ptr<ImageCfi> cfi = it->second.cfi;
      EvictOverBytes(identity);  // its frames may have grown since
      return cfi;
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
  // Tables over the whole cap alone are refused rather than kept by
  // letting every other image's go.
  if (cfi && cfi->refused.empty() && cfi->bytes.load() > max_bytes_)
    cfi->Refuse("tables of " + std::to_string(cfi->bytes.load()) + " bytes (at most " +
                std::to_string(max_bytes_) + ")");
  it->second.cfi = cfi;
  it->second.retry_at = now + kRetryAfter;
  if (cfi && !cfi->refused.empty())
    stats_.cfi_refused++;
  else
    (cfi ? stats_.opened : stats_.missing)++;
  while (entries_.size() > kMaxImages) {
    entries_.erase(lru_.back());
    lru_.pop_back();
    stats_.evicted++;
  }
  EvictOverBytes(identity);
  return cfi;
}

void UnwindTables::EvictOverBytes(const std::string& keep) {
  uint64_t total = 0;
  for (const auto& [id, e] : entries_)
    if (e.cfi) total += e.cfi->bytes.load(std::memory_order_relaxed);
  while (total > max_bytes_ && !lru_.empty() && lru_.back() != keep) {
    auto it = entries_.find(lru_.back());
    if (it->second.cfi) total -= it->second.cfi->bytes.load(std::memory_order_relaxed);
    entries_.erase(it);
    lru_.pop_back();
    stats_.evicted++;
  }
}

UnwindTableStats UnwindTables::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  UnwindTableStats s = stats_;
  s.held = entries_.size();
  for (const auto& [id, e] : entries_)
    if (e.cfi) s.bytes += e.cfi->bytes.load(std::memory_order_relaxed);
  return s;
}

}  // namespace lcpi
