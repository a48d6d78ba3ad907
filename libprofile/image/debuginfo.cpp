// debuginfo.cpp - finding separate debug files: build-id and .gnu_debuglink
// paths (libdwelf reads the notes), debuginfod (libdebuginfod).
#include "libprofile/image/debuginfo.h"

#include "libprofile/base/public_file.h"
#include "libprofile/base/regular_file.h"
#include "libprofile/image/image_id.h"

#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace lcpi {
namespace {

std::string BuildIdOf(Elf* elf) {
  const void* bits = nullptr;
  ssize_t len = dwelf_elf_gnu_build_id(elf, &bits);
  if (len <= 0 || bits == nullptr) return "";
  return HexBytes(bits, static_cast<size_t>(len));
}

// The CRC32 of the whole file, as .gnu_debuglink records it (zlib's crc32).
bool FileCrc(int fd, uint32_t* crc) {
  uLong c = crc32(0L, Z_NULL, 0);
  std::vector<unsigned char> buf(1 << 16);
  off_t at = 0;
  for (;;) {
    ssize_t n = pread(fd, buf.data(), buf.size(), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    c = crc32(c, buf.data(), static_cast<uInt>(n));
    at += n;
  }
  *crc = static_cast<uint32_t>(c);
  return true;
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

void Warn(const std::string& warning);

// Who chose a candidate's path, and so how it is opened:
//   kRoot: the debug root's tree; any regular file there.
//   kAuthor: the author of the file naming it (a debuglink), who chose its
//     build-id too: by the recorded-path rules (no symbolic link anywhere,
//     nothing on procfs), owned by root or by `owner` (the image file's
//     owner; unknown: root only), and always with the link's CRC32, so no
//     file root alone may read is taken for a debug file;
//   kAuthorNoCrc: the same author with no CRC to check (dwz's supplementary
//     file): only a file everyone may read (OpenPublicFile), which prints
//     nothing its author could not read, at most kMaxRecordedFileSize bytes.
enum class NamedBy { kRoot, kAuthor, kAuthorNoCrc };

// Opens `path` as the debug file of an image with `build_id` (or, without
// one, of the debuglink CRC `crc`) by the rules of `named_by`; nullptr if it
// is missing, refused or another build's.
std::unique_ptr<DebugFile> OpenCandidate(const std::string& path, const std::string& build_id,
                                         DebugOrigin origin, NamedBy named_by,
                                         const uid_t* owner = nullptr,
                                         const uint32_t* crc = nullptr) {
  uint64_t size = 0;
  struct stat st;
  Expected<int> fd = Error(Errc::kInvalidArgument, path);
  switch (named_by) {
    case NamedBy::kRoot:
      fd = OpenRegularFile(path, &size);
      break;
    case NamedBy::kAuthor:
      fd = OpenRecordedFile(path, &size, UINT64_MAX);
      if (fd &&
          (fstat(*fd, &st) != 0 || (st.st_uid != 0 && (owner == nullptr || st.st_uid != *owner)))) {
        close(*fd);
        return nullptr;
      }
      break;
    case NamedBy::kAuthorNoCrc:
      fd = OpenPublicFile(path, &st);
      if (fd && static_cast<uint64_t>(st.st_size) > kMaxRecordedFileSize) {
        close(*fd);
        return nullptr;
      }
      break;
  }
  if (!fd) return nullptr;
  if (crc != nullptr) {
    // The CRC reads the whole file, which the image's author may have made
    // a sparse petabyte: beyond the bound the file is not used.
    if (size > kMaxDebuglinkCrcBytes) {
      close(*fd);
      Warn("debuglink: " + path + ": " + std::to_string(size) + " bytes, over the bound of " +
           std::to_string(kMaxDebuglinkCrcBytes) + " for checking its CRC32; not used");
      return nullptr;
    }
    uint32_t actual = 0;
    if (!FileCrc(*fd, &actual) || actual != *crc) {
      close(*fd);
      return nullptr;
    }
  }
  std::unique_ptr<DebugFile> file = DebugFile::Adopt(*fd, path, origin);
  if (file && !build_id.empty() && BuildIdOf(file->elf()) != build_id) return nullptr;
  return file;
}

// The debug file of `build_id` at <root>/.build-id/ab/cdef....debug.
std::unique_ptr<DebugFile> OpenUnderDebugRoot(const std::string& debug_root,
                                              const std::string& build_id) {
  if (debug_root.empty() || build_id.size() <= 2) return nullptr;
  const std::string path =
      debug_root + "/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug";
  return OpenCandidate(path, build_id, DebugOrigin::kBuildIdPath, NamedBy::kRoot);
}

bool HasDwarf(Elf* elf) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return false;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name != nullptr &&
        (std::strcmp(name, ".debug_info") == 0 || std::strcmp(name, ".zdebug_info") == 0)) {
      return true;
    }
  }
  return false;
}

// The process-wide debuginfod state: the switch, one client, the memory of a
// server that failed, and the warnings it gave.
struct Debuginfod {
  std::mutex mu;
  bool enabled = false;
  bool failed = false;
  bool warned_bad_id = false;
  debuginfod_client* client = nullptr;
  std::vector<std::string> warnings;
};

Debuginfod& State() {
  static Debuginfod* state = new Debuginfod();  // never destroyed: no exit-order hazards
  return *state;
}

void Warn(const std::string& warning) {
  Debuginfod& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  s.warnings.push_back(warning);
}

// A build-id libdebuginfod takes: lower-case hex, whole bytes, 1 to 64 of
// them (it refuses longer ones with EINVAL, which is no news of the server).
bool QueryableBuildId(const std::string& id) {
  if (id.empty() || id.size() % 2 != 0 || id.size() > 2 * kMaxQueryBuildIdBytes) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The byte bound of one download: DEBUGINFOD_MAXSIZE (0 or unset: none).
uint64_t MaxDownloadBytes() {
  const char* v = std::getenv(DEBUGINFOD_MAXSIZE_ENV_VAR);
  long n = v != nullptr ? std::atol(v) : 0;
  return n > 0 ? static_cast<uint64_t>(n) : 0;
}

// libdebuginfod 0.188 checks DEBUGINFOD_MAXSIZE against Content-Length
// only, so a body without one (chunked, or a server that never stops) was
// written to the cache without end. This progress callback counts the bytes
// received and cancels past the bound; libdebuginfod then removes the
// partial file. The client's user data is the download's FetchBound.
struct FetchBound {
  uint64_t max_bytes = 0;
  bool exceeded = false;
};

int CancelPastBound(debuginfod_client* client, long received, long total) {
  auto* bound = static_cast<FetchBound*>(debuginfod_get_user_data(client));
  if (bound == nullptr || bound->max_bytes == 0) return 0;
  // Before a server is chosen `received` counts polls, never near a bound.
  if ((received > 0 && static_cast<uint64_t>(received) > bound->max_bytes) ||
      (total > 0 && static_cast<uint64_t>(total) > bound->max_bytes)) {
    bound->exceeded = true;
    return 1;
  }
  return 0;
}

// libdebuginfod 0.188 writes "using max size" to its verbose fd without
// checking that one is set (-1 unless DEBUGINFOD_VERBOSE is), and glibc's
// dprintf() on -1 loses the 8 KiB buffer it allocated: LeakSanitizer failed
// every sanitized tool run that asked a server once DEBUGINFOD_MAXSIZE had a
// default. Its verbose lines go to /dev/null instead, unless asked for.
void GiveVerboseFd(debuginfod_client* client) {
  if (std::getenv(DEBUGINFOD_VERBOSE_ENV_VAR) != nullptr) return;
  int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);  // kept for the client's life
  if (fd >= 0) debuginfod_set_verbose_fd(client, fd);
}

const char* Urls() {
  const char* urls = std::getenv(DEBUGINFOD_URLS_ENV_VAR);
  return urls != nullptr && urls[0] != '\0' ? urls : nullptr;
}

}  // namespace

const char* DebugOriginName(DebugOrigin origin) {
  switch (origin) {
    case DebugOrigin::kBuildIdPath:
      return "debug-file";
    case DebugOrigin::kDebuglink:
      return "debuglink";
    case DebugOrigin::kDebuginfod:
      return "debuginfod";
  }
  return "debug-file";
}

DebugFile::~DebugFile() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) close(fd_);
}

std::unique_ptr<DebugFile> DebugFile::Adopt(int fd, std::string path, DebugOrigin origin) {
  std::unique_ptr<DebugFile> file(new DebugFile());
  file->fd_ = fd;
  file->path_ = std::move(path);
  file->origin_ = origin;
  file->elf_ = elf_begin(fd, ELF_C_READ, nullptr);
  if (file->elf_ == nullptr || elf_kind(file->elf_) != ELF_K_ELF) return nullptr;
  file->has_dwarf_ = HasDwarf(file->elf_);
  return file;
}

std::unique_ptr<DebugFile> FindLocalDebugFile(Elf* elf, const std::string& image_path,
                                              const std::string& build_id,
                                              const std::string& debug_root) {
  if (auto file = OpenUnderDebugRoot(debug_root, build_id)) return file;
  GElf_Word crc = 0;
  const char* link = dwelf_elf_gnu_debuglink(elf, &crc);
  if (link == nullptr || link[0] == '\0' || std::strchr(link, '/') != nullptr) return nullptr;
  std::string dir = ".";
  size_t slash = image_path.rfind('/');
  if (slash != std::string::npos) dir = slash == 0 ? "" : image_path.substr(0, slash);
  std::vector<std::string> candidates = {dir + "/" + link, dir + "/.debug/" + link};
  // <root><dir>: only for absolute image paths (/usr/lib/debug/usr/bin/x.debug).
  if (!debug_root.empty() && !dir.empty() && dir[0] == '/') {
    candidates.push_back(debug_root + dir + "/" + link);
  }
  uint32_t want = crc;
  // Candidates must be root's or the image's owner's (unknown: root's only).
  struct stat image_st;
  const bool owner_known = stat(image_path.c_str(), &image_st) == 0;
  const uid_t* owner = owner_known ? &image_st.st_uid : nullptr;
  for (const std::string& path : candidates) {
    if (SameFile(path, image_path)) continue;  // a link naming the image itself
    if (auto file =
            OpenCandidate(path, build_id, DebugOrigin::kDebuglink, NamedBy::kAuthor, owner, &want))
      return file;
  }
  return nullptr;
}

std::unique_ptr<DebugFile> FindSupplementaryFile(const std::string& name,
                                                 const std::string& build_id,
                                                 const std::string& naming_file,
                                                 const std::string& debug_root) {
  if (build_id.empty()) return nullptr;
  if (auto file = OpenUnderDebugRoot(debug_root, build_id)) return file;
  if (name.empty()) return nullptr;
  std::string path = name;
  if (name[0] != '/') {  // beside the naming file, when that has an absolute path
    if (naming_file.empty() || naming_file[0] != '/') return nullptr;
    path = naming_file.substr(0, naming_file.rfind('/')) + "/" + name;
  }
  return OpenCandidate(path, build_id, DebugOrigin::kDebuglink, NamedBy::kAuthorNoCrc);
}

std::unique_ptr<DebugFile> FetchDebugFile(const std::string& build_id,
                                          const std::string& image_path) {
  if (build_id.empty()) return nullptr;
  Debuginfod& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  const char* urls = Urls();
  if (!s.enabled || s.failed || urls == nullptr) return nullptr;
  if (!QueryableBuildId(build_id)) {
    if (!s.warned_bad_id) {
      s.warned_bad_id = true;
      s.warnings.push_back(
          "debuginfod: " + image_path + ": a build-id of " + std::to_string(build_id.size()) +
          " characters is not looked up (hex, at most " + std::to_string(kMaxQueryBuildIdBytes) +
          " bytes); other images are, and so are the next such");
    }
    return nullptr;
  }
  if (s.client == nullptr) {
    s.client = debuginfod_begin();
    if (s.client != nullptr) {
      debuginfod_set_progressfn(s.client, CancelPastBound);
      GiveVerboseFd(s.client);
    }
  }
  if (s.client == nullptr) {
    s.failed = true;
    s.warnings.push_back("debuginfod: cannot start a client (procedures shown as offset ranges)");
    return nullptr;
  }
  FetchBound bound;
  bound.max_bytes = MaxDownloadBytes();
  debuginfod_set_user_data(s.client, &bound);
  char* path = nullptr;
  // Length 0: the build-id is given as a hex string.
  int fd = debuginfod_find_debuginfo(
      s.client, reinterpret_cast<const unsigned char*>(build_id.c_str()), 0, &path);
  debuginfod_set_user_data(s.client, nullptr);
  std::string cached = path != nullptr ? path : "";
  std::free(path);
  if (fd >= 0 && !bound.exceeded) {
    std::unique_ptr<DebugFile> file = DebugFile::Adopt(fd, cached, DebugOrigin::kDebuginfod);
    if (file && BuildIdOf(file->elf()) != build_id) return nullptr;
    return file;
  }
  if (fd >= 0) close(fd);
  // Too large: this file is not used; the server still answers others.
  if (bound.exceeded || fd == -EFBIG) {
    s.warnings.push_back("debuginfod: the debug file of " + image_path + " (build-id " + build_id +
                         ") is over DEBUGINFOD_MAXSIZE=" + std::to_string(bound.max_bytes) +
                         " bytes: download stopped and removed, not used");
    return nullptr;
  }
  // Not on any server (or no server to ask): an ordinary answer.
  if (fd == -ENOENT || fd == -ENOSYS) return nullptr;
  s.failed = true;
  const char* timeout = std::getenv(DEBUGINFOD_TIMEOUT_ENV_VAR);
  const char* maxtime = std::getenv(DEBUGINFOD_MAXTIME_ENV_VAR);
  s.warnings.push_back(
      "debuginfod: no answer from " + std::string(urls) + " for " + image_path + " (build-id " +
      build_id + "): " + std::strerror(-fd) + " (timeout " + (timeout != nullptr ? timeout : "90") +
      " s per attempt, DEBUGINFOD_MAXTIME " + (maxtime != nullptr ? maxtime : "unbounded") +
      " s per file); no more queries this run, procedures without symbols shown as "
      "offset ranges");
  return nullptr;
}

void SetDebuginfodEnabled(bool enabled) {
  Debuginfod& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  s.enabled = enabled;
}

bool DebuginfodActive() {
  Debuginfod& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.enabled && !s.failed && Urls() != nullptr;
}

void SetDebuginfodTimeoutDefault() {
  setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, kDefaultDebuginfodTimeout, /*overwrite=*/0);
  setenv(DEBUGINFOD_MAXTIME_ENV_VAR, kDefaultDebuginfodMaxTime, /*overwrite=*/0);
  setenv(DEBUGINFOD_MAXSIZE_ENV_VAR, kDefaultDebuginfodMaxSize, /*overwrite=*/0);
}

std::vector<std::string> DebuginfoWarnings() {
  Debuginfod& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.warnings;
}

}  // namespace lcpi
