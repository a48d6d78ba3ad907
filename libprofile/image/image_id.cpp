// image_id.cpp - image identity: ELF build-ids and header hashes through
// libelf, and the kernel's own raw note blobs from /sys.
//
// ELF files are only ever read through libelf, which checks the headers it
// hands out against the file size. The /sys note blobs are not ELF files
// (just a sequence of notes), so they are parsed here, in exactly one
// function, with every length checked against the end of the blob.
#include "libprofile/image/image_id.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "libprofile/base/regular_file.h"

namespace lcpi {
namespace {

// NT_GNU_BUILD_ID notes carry the owner name "GNU" with its NUL.
constexpr char kGnuOwner[] = "GNU";
constexpr uint32_t kGnuOwnerSize = sizeof(kGnuOwner);

// FNV-1a, 64 bit: simple, stable across releases and hosts, and good enough
// to tell apart files that differ (this is a fallback identity for files
// without a build-id, not a defence against an adversary).
class Fnv1a64 {
 public:
  void Add(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
      hash_ ^= p[i];
      hash_ *= 0x100000001b3ULL;
    }
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// 16 lower-case hex digits, most significant first.
std::string Hex64(uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, h);
  return text;
}

Error BadElf(const std::string& what) { return Error(Errc::kBadElf, what + ": " + elf_errmsg(-1)); }

// Scans the notes in one libelf data buffer (gelf_getnote checks each note
// against d_size). Returns the build-id hex, or empty.
std::string BuildIdFromNoteData(Elf_Data* data) {
  if (data == nullptr || data->d_buf == nullptr) return "";
  size_t offset = 0;
  GElf_Nhdr nhdr;
  size_t name_offset = 0;
  size_t desc_offset = 0;
  while (offset < data->d_size) {
    size_t next = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset);
    if (next == 0 || next <= offset) break;  // malformed or the end: stop, never loop
    // gelf_getnote validated these, but this is the cheap place to be sure.
    if (name_offset + nhdr.n_namesz <= data->d_size &&
        desc_offset + nhdr.n_descsz <= data->d_size && nhdr.n_type == NT_GNU_BUILD_ID &&
        nhdr.n_namesz == kGnuOwnerSize && nhdr.n_descsz > 0 && nhdr.n_descsz <= kMaxBuildIdBytes &&
        std::memcmp(static_cast<const char*>(data->d_buf) + name_offset, kGnuOwner,
                    kGnuOwnerSize) == 0) {
      return HexBytes(static_cast<const char*>(data->d_buf) + desc_offset, nhdr.n_descsz);
    }
    offset = next;
  }
  return "";
}

// Reads a whole small file (a /sys blob) into memory, at most `limit` bytes.
Expected<std::string> ReadSmallFile(const std::string& path, size_t limit) {
  Expected<int> opened = OpenRegularFile(path);
  if (!opened) return opened.error();
  int fd = *opened;
  std::string out;
  char buf[4096];
  while (out.size() < limit) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return ErrnoError(path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

}  // namespace

std::string HexBytes(const void* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[p[i] >> 4]);
    out.push_back(kDigits[p[i] & 0xf]);
  }
  return out;
}

std::string BuildIdOfIdentity(const std::string& identity) {
  constexpr std::string_view kPrefix = "build-id:";
  if (identity.rfind(kPrefix, 0) != 0) return "";
  const size_t end = identity.find(':', kPrefix.size());
  return identity.substr(kPrefix.size(), end == std::string::npos ? end : end - kPrefix.size());
}

bool IdentityMatches(const std::string& recorded, const ImageIdentity& found) {
  if (recorded == found.identity) return true;
  // Recorded before identities had a layout: the build-id alone, as then
  // (only root's files were trusted that way; a user's has ":u<uid>").
  return !found.build_id.empty() && found.identity.find(":u") == std::string::npos &&
         recorded == "build-id:" + found.build_id;
}

std::string WithoutOwner(const std::string& identity) {
  const size_t at = identity.rfind(":u");
  if (at == std::string::npos || at + 2 == identity.size()) return identity;
  for (size_t i = at + 2; i < identity.size(); i++)
    if (identity[i] < '0' || identity[i] > '9') return identity;
  return identity.substr(0, at);
}

std::string WithOwner(const std::string& identity, uid_t owner) {
  return owner == 0 ? identity : identity + ":u" + std::to_string(owner);
}

bool InitLibelf() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] { ok = elf_version(EV_CURRENT) != EV_NONE; });
  return ok;
}

std::optional<std::string> FindGnuBuildIdInNoteBlob(std::string_view blob) {
  // Each note: uint32 namesz, descsz, type (host byte order, as the kernel
  // wrote them), then the name and the descriptor, each padded to 4 bytes.
  // All arithmetic in uint64_t so a huge length cannot wrap past the checks.
  constexpr uint64_t kHeader = 12;
  auto align4 = [](uint64_t v) { return (v + 3) & ~uint64_t{3}; };
  const uint64_t end = blob.size();
  uint64_t pos = 0;
  while (pos + kHeader <= end) {
    uint32_t namesz = 0;
    uint32_t descsz = 0;
    uint32_t type = 0;
    std::memcpy(&namesz, blob.data() + pos, 4);
    std::memcpy(&descsz, blob.data() + pos + 4, 4);
    std::memcpy(&type, blob.data() + pos + 8, 4);
    const uint64_t name_pos = pos + kHeader;
    const uint64_t desc_pos = name_pos + align4(namesz);
    const uint64_t next = desc_pos + align4(descsz);
    // The descriptor itself must fit; the padding after the last note may be
    // missing, so it is checked only when another note follows.
    if (desc_pos > end || descsz > end - desc_pos) return std::nullopt;
    if (type == NT_GNU_BUILD_ID && namesz == kGnuOwnerSize && descsz > 0 &&
        descsz <= kMaxBuildIdBytes &&
        std::memcmp(blob.data() + name_pos, kGnuOwner, kGnuOwnerSize) == 0) {
      return HexBytes(blob.data() + desc_pos, descsz);
    }
    if (next <= pos) return std::nullopt;  // cannot happen (header > 0); never loop
    pos = next;
  }
  return std::nullopt;
}

namespace {

// What looking for the build-id note may read: a real image has one to a
// few small notes near its start, while a hostile file may have thousands
// of note headers, each claiming the whole (sparse, huge) file, which libelf
// would allocate, read and keep until elf_end.
constexpr size_t kMaxNotesLooked = 16;
constexpr uint64_t kMaxNoteBytes = 64 * 1024;

// One note area, at most kMaxNoteBytes of it (a build-id note is a few dozen
// bytes; one cut in the middle is not found), if it lies in the file and the
// budget allows.
std::string BuildIdFromNoteArea(Elf* elf, uint64_t offset, uint64_t size, uint64_t align,
                                NoteBudget* budget) {
  if (budget->looked >= kMaxNotesLooked || std::chrono::steady_clock::now() > budget->deadline) {
    budget->exhausted = true;
    return "";
  }
  ++budget->looked;
  if (offset > budget->file_size || size == 0) return "";
  const uint64_t take = std::min({size, kMaxNoteBytes, budget->file_size - offset});
  if (take > budget->max_bytes - std::min(budget->bytes_read, budget->max_bytes)) {
    budget->exhausted = true;
    return "";
  }
  budget->bytes_read += take;
  // Notes in 8-aligned areas use 8-byte padding (ELF_T_NHDR8).
  Elf_Type type = align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
  return BuildIdFromNoteData(
      elf_getdata_rawchunk(elf, static_cast<int64_t>(offset), static_cast<size_t>(take), type));
}

}  // namespace

std::string ElfBuildIdHex(Elf* elf, NoteBudget* budget) {
  if (elf == nullptr) return "";
  size_t shnum = 0;
  size_t phnum = 0;
  // Sections first: the usual case, and the only place in relocatable files.
  if (elf_getshdrnum(elf, &shnum) == 0 && shnum <= kMaxNoteHeaders) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr && !budget->exhausted) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) continue;
      if (shdr.sh_type != SHT_NOTE) continue;
      std::string hex =
          BuildIdFromNoteArea(elf, shdr.sh_offset, shdr.sh_size, shdr.sh_addralign, budget);
      if (!hex.empty()) return hex;
    }
  }
  // Then PT_NOTE segments: section headers may have been stripped away.
  if (elf_getphdrnum(elf, &phnum) != 0 || phnum > kMaxNoteHeaders) return "";
  for (size_t i = 0; i < phnum && !budget->exhausted; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) continue;
    if (phdr.p_type != PT_NOTE) continue;
    std::string hex = BuildIdFromNoteArea(elf, phdr.p_offset, phdr.p_filesz, phdr.p_align, budget);
    if (!hex.empty()) return hex;
  }
  return "";
}

std::string ElfBuildIdHex(Elf* elf) {
  NoteBudget budget;
  budget.deadline = std::chrono::steady_clock::now() + HashLimits{}.max_time;
  budget.max_bytes = HashLimits{}.max_bytes;
  budget.file_size = std::numeric_limits<uint64_t>::max();  // libelf checks the end
  return ElfBuildIdHex(elf, &budget);
}

namespace {

using Clock = std::chrono::steady_clock;

// Adds `size` bytes of the file at `offset` to the hash, read in chunks
// with pread (a file that shrank under us is an error, not a SIGBUS).
// False, with nothing more read, once `deadline` has passed.
Expected<bool> HashFileRange(int fd, uint64_t offset, uint64_t size, Clock::time_point deadline,
                             Fnv1a64* hash, uint64_t* hashed) {
  std::vector<unsigned char> chunk(std::min<uint64_t>(size, 1 << 16));
  while (size > 0) {
    if (Clock::now() > deadline) return false;
    size_t want = static_cast<size_t>(std::min<uint64_t>(size, chunk.size()));
    ssize_t got = pread(fd, chunk.data(), want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoError("read", errno);
    if (got == 0) return Error(Errc::kBadElf, "file shorter than its loadable segments");
    hash->Add(chunk.data(), static_cast<size_t>(got));
    offset += static_cast<uint64_t>(got);
    size -= static_cast<uint64_t>(got);
    *hashed += static_cast<uint64_t>(got);
  }
  return true;
}

// The distinct byte ranges [first, second) of the loadable segments, in
// file order, overlapping and adjacent ones merged: each byte is read once,
// however many headers name it.
std::vector<std::pair<uint64_t, uint64_t>> DistinctRanges(const std::vector<GElf_Phdr>& loads) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const GElf_Phdr& p : loads) {
    if (p.p_filesz > 0) ranges.emplace_back(p.p_offset, p.p_offset + p.p_filesz);
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

// The identity of a file whose content was not hashed (over a budget):
// what fstat says of it, and the ELF headers' hash. Marked "file-stat:" so
// that reports can say the image was not identified by its content.
Expected<std::string> FileStatIdentity(int fd, uint64_t headers_hash) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoError("fstat", errno);
  char text[160];
  std::snprintf(text, sizeof text,
                "file-stat:%" PRIx64 ":%" PRIu64 ":%" PRIu64 ":%lld.%09ld:%lld.%09ld:%016" PRIx64,
                static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                static_cast<uint64_t>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
                st.st_mtim.tv_nsec, static_cast<long long>(st.st_ctim.tv_sec), st.st_ctim.tv_nsec,
                headers_hash);
  return std::string(text);
}

// ":u<uid>" for a file not owned by root, "" for root's. The layout hash
// does not cover the code, so a user's copy of libc with 4 KiB patched
// would otherwise be libc; with its owner in the identity it never merges
// with root's image, whatever its bytes, while root's system images keep
// one identity across hosts.
std::string OwnerSuffix(int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return "";
  return WithOwner("", st.st_uid);
}

}  // namespace

Expected<ImageIdentity> IdentifyElf(Elf* elf, int fd, uint64_t file_size,
                                    const HashLimits& limits) {
  const Clock::time_point deadline = Clock::now() + limits.max_time;
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    return Error(Errc::kBadElf, "not an ELF file");
  }
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) return BadElf("ELF header");
  // The header tables must lie inside the file: a truncated copy is not the
  // image it claims to be, and must not get that image's identity.
  if (ehdr.e_shoff != 0 && (ehdr.e_shoff > file_size ||
                            uint64_t{ehdr.e_shnum} * ehdr.e_shentsize > file_size - ehdr.e_shoff)) {
    return Error(Errc::kBadElf, "section headers lie beyond the end of the file");
  }
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return BadElf("program header count");

  ImageIdentity id;
  id.file_size = file_size;
  std::vector<GElf_Phdr> loads;
  Fnv1a64 hash;
  hash.Add(&ehdr, sizeof(ehdr));
  // The layout: what the loader maps and where it starts, none of which
  // strip changes (it changes the section headers and the size).
  Fnv1a64 layout;
  layout.Add(&ehdr.e_ident, sizeof(ehdr.e_ident));
  layout.Add(&ehdr.e_type, sizeof(ehdr.e_type));
  layout.Add(&ehdr.e_machine, sizeof(ehdr.e_machine));
  layout.Add(&ehdr.e_entry, sizeof(ehdr.e_entry));
  layout.Add(&phnum, sizeof(phnum));
  // Real images have a dozen program headers; past the bound only the
  // first are looked at, and the content is not hashed (weak identity).
  const size_t considered = std::min(phnum, limits.max_program_headers);
  for (size_t i = 0; i < considered; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) {
      return BadElf("program header " + std::to_string(i));
    }
    if (phdr.p_type == PT_LOAD &&
        (phdr.p_offset > file_size || phdr.p_filesz > file_size - phdr.p_offset)) {
      return Error(Errc::kBadElf,
                   "loadable segment " + std::to_string(i) + " lies beyond the end of the file");
    }
    if (phdr.p_type == PT_LOAD) loads.push_back(phdr);
    hash.Add(&phdr, sizeof(phdr));
    layout.Add(&phdr, sizeof(phdr));
  }
  hash.Add(&file_size, sizeof(file_size));
  id.headers_hash = hash.value();
  id.layout_hash = layout.value();

  // The note search and the hashing below share one deadline and byte budget.
  NoteBudget notes;
  notes.deadline = deadline;
  notes.max_bytes = limits.max_bytes;
  notes.file_size = file_size;
  id.build_id = ElfBuildIdHex(elf, &notes);
  if (!id.build_id.empty()) {
    // Whoever links a file chooses its build-id: the identity is the claim
    // and the layout this file has, so a second file claiming a known
    // build-id with another layout is another image (a build-id conflict).
    id.identity = "build-id:" + id.build_id + ":" + Hex64(id.layout_hash) + OwnerSuffix(fd);
    return id;
  }
  // No build-id: the identity is the content that runs, every distinct byte
  // of the loadable segments (code and data), so a rebuilt file of the same
  // layout and size is a new image; within the budgets only.
  const std::vector<std::pair<uint64_t, uint64_t>> ranges = DistinctRanges(loads);
  uint64_t total = 0;
  for (const auto& r : ranges) total += r.second - r.first;
  bool hashed = phnum <= limits.max_program_headers &&
                total <= limits.max_bytes - std::min(notes.bytes_read, limits.max_bytes) &&
                Clock::now() <= deadline;
  for (size_t i = 0; hashed && i < ranges.size(); ++i) {
    Expected<bool> done = HashFileRange(fd, ranges[i].first, ranges[i].second - ranges[i].first,
                                        deadline, &hash, &id.bytes_hashed);
    if (!done) return done.error();
    hashed = *done;
  }
  if (!hashed) {
    Expected<std::string> weak = FileStatIdentity(fd, id.headers_hash);
    if (!weak) return weak.error();
    id.identity = std::move(*weak);
    id.content_hashed = false;
    return id;
  }
  id.identity = "content-hash:" + Hex64(hash.value()) + OwnerSuffix(fd);
  return id;
}

Expected<ImageIdentity> IdentifyElfFile(const std::string& path, const HashLimits& limits) {
  uint64_t size = 0;
  Expected<int> opened = OpenRegularFile(path, &size);
  if (!opened) return opened.error();
  Expected<ImageIdentity> id = IdentifyElfFd(*opened, size, path, limits);
  close(*opened);
  return id;
}

Expected<ImageIdentity> IdentifyElfFd(int fd, uint64_t file_size, const std::string& name,
                                      const HashLimits& limits) {
  if (!InitLibelf()) return Error(Errc::kUnsupported, "libelf: unsupported ELF version");
  // ELF_C_READ reads lazily with pread, so a file truncated under us gives an
  // error, not the SIGBUS an mmap would.
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf == nullptr) return BadElf(name);
  Expected<ImageIdentity> id = IdentifyElf(elf, fd, file_size, limits);
  elf_end(elf);
  if (!id) return Error(id.error().code(), name + ": " + id.error().message());
  return id;
}

Expected<ImageIdentity> IdentifySelf(const std::string& exe) {
  // A kernel link to the open file: followed on purpose, nothing is looked up.
  const int opened = open(exe.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (opened < 0) return ErrnoError(exe, errno);
  struct stat st;
  Expected<int> fd = KeepRegularFile(opened, exe, &st);
  if (!fd) return fd.error();
  Expected<ImageIdentity> id = IdentifyElfFd(*fd, static_cast<uint64_t>(st.st_size), exe);
  close(*fd);
  return id;
}

Expected<ImageIdentity> IdentifyRunningKernel(const std::string& notes_path) {
  ImageIdentity id;
  // Notes are a few hundred bytes; 1 MiB is a generous bound on a bad file.
  Expected<std::string> blob = ReadSmallFile(notes_path, 1 << 20);
  if (blob) {
    if (std::optional<std::string> hex = FindGnuBuildIdInNoteBlob(*blob)) {
      id.build_id = *hex;
      id.identity = "kernel:" + id.build_id;
      return id;
    }
  }
  // No notes (old kernel, no sysfs in a container): the release string is the
  // best identity left; a rebuilt kernel with the same release will collide.
  struct utsname u;
  if (uname(&u) != 0) return ErrnoError("uname", errno);
  id.identity = std::string("kernel:") + u.release;
  return id;
}

Expected<ImageIdentity> IdentifyKernelModule(const std::string& name,
                                             const std::string& sys_module_dir) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return Error(Errc::kInvalidArgument, "bad module name '" + name + "'");
  }
  const std::string dir = sys_module_dir + "/" + name;
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return ErrnoError(dir, errno);
  ImageIdentity id;
  Expected<std::string> blob = ReadSmallFile(dir + "/notes/.note.gnu.build-id", 1 << 20);
  if (blob) {
    if (std::optional<std::string> hex = FindGnuBuildIdInNoteBlob(*blob)) {
      id.build_id = *hex;
      id.identity = "module:" + name + ":" + id.build_id;
      return id;
    }
  }
  // Built-in "modules" and modules built without build-ids have no note.
  id.identity = "module:" + name;
  return id;
}

}  // namespace lcpi
