// debuginfo.h - separate debug files: where the symbols and the DWARF that
// strip removed from an image went, and how ElfImage finds them.
//
// The order, cheapest and most local first (gdb, perf and libdwfl agree on
// the local part):
//   1. by build-id under the debug root: <root>/.build-id/ab/cdef....debug
//   2. by .gnu_debuglink: <dir>/<name>, <dir>/.debug/<name>, <root><dir>/<name>,
//      where <dir> is the image's directory; a candidate must carry the
//      image's build-id, or (an image without one) match the link's CRC32
//   3. from a debuginfod server by build-id (libdebuginfod), when the process
//      allows it (SetDebuginfodEnabled) and DEBUGINFOD_URLS names a server.
//      The files land in the cache libdebuginfod chooses
//      ($DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
//      ~/.cache/debuginfod_client); nothing here needs privileges.
//
// libdwfl's dwfl_standard_find_debuginfo walks the same local paths, but in
// elfutils 0.188 it then queries debuginfod on its own whenever
// DEBUGINFOD_URLS is set, with the library's 90 s default timeout and three
// attempts, ignoring the tools' --no-debuginfod, and without saying why a
// query failed; so the two local steps are done here with libdwelf (the
// debuglink and build-id readers) and libdebuginfod is called directly.
//
// A server that cannot be reached is queried once per process: the failure
// becomes one warning (DebuginfoWarnings) and later images skip the
// network, so a report costs at most one timeout.
#ifndef LCPI_LIBPROFILE_IMAGE_DEBUGINFO_H
#define LCPI_LIBPROFILE_IMAGE_DEBUGINFO_H

#include <libelf.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lcpi {

// Where a debug file came from, as ElfImage::symbol_table() names it.
enum class DebugOrigin { kBuildIdPath, kDebuglink, kDebuginfod };
const char* DebugOriginName(DebugOrigin origin);  // "debug-file", "debuglink", "debuginfod"

// An open separate debug file (an ELF file whose sections other than the
// debug ones are NOBITS: same addresses as the image).
class DebugFile {
 public:
  ~DebugFile();
  DebugFile(const DebugFile&) = delete;
  DebugFile& operator=(const DebugFile&) = delete;

  const std::string& path() const { return path_; }
  DebugOrigin origin() const { return origin_; }
  Elf* elf() const { return elf_; }
  // Whether it holds DWARF (.debug_info), i.e. can give source lines.
  bool has_dwarf() const { return has_dwarf_; }

  // Takes ownership of fd; nullptr if it is not an ELF file.
  static std::unique_ptr<DebugFile> Adopt(int fd, std::string path, DebugOrigin origin);

 private:
  DebugFile() = default;
  std::string path_;
  DebugOrigin origin_ = DebugOrigin::kBuildIdPath;
  int fd_ = -1;
  Elf* elf_ = nullptr;
  bool has_dwarf_ = false;
};

// Steps 1 and 2 above for the image `elf` at `image_path`, whose build-id is
// `build_id` (lower-case hex, may be empty). An empty debug_root skips the
// paths under it (the debuglink beside the image is still followed).
std::unique_ptr<DebugFile> FindLocalDebugFile(Elf* elf, const std::string& image_path,
                                              const std::string& build_id,
                                              const std::string& debug_root);

// The supplementary file (dwz's multifile) that the DWARF of `naming_file`
// names in its .gnu_debugaltlink: `name` (absolute, or relative to the
// directory of an absolute naming_file) and `build_id` (hex). By build-id
// under the debug root first; else the named path, only if everyone may
// read it (there is no CRC to check, and the author chose the path and the
// build-id: root-only files would lend their strings to the report) and it
// is at most kMaxRecordedFileSize bytes. Either must carry `build_id`.
// nullptr if none.
std::unique_ptr<DebugFile> FindSupplementaryFile(const std::string& name,
                                                 const std::string& build_id,
                                                 const std::string& naming_file,
                                                 const std::string& debug_root);

// Step 3: the debug file of `build_id` from debuginfod, or nullptr (disabled,
// no DEBUGINFOD_URLS, no build-id, not on the server, or the server failed;
// the last gives a warning). `image_path` only names the image in warnings.
std::unique_ptr<DebugFile> FetchDebugFile(const std::string& build_id,
                                          const std::string& image_path);

// Process-wide: may images be looked up on debuginfod servers? Off by
// default (lcpid and the libraries never touch the network); the analysis
// tools turn it on unless --no-debuginfod. Effective only while
// DEBUGINFOD_URLS is set and not empty.
void SetDebuginfodEnabled(bool enabled);
bool DebuginfodActive();

// The bounds of the tools' lookups. libdebuginfod 0.188 bounds only each
// attempt's connection and stalls (DEBUGINFOD_TIMEOUT: no progress for that
// long); the whole download is bounded by DEBUGINFOD_MAXTIME (seconds, which
// 0.188 honours) and DEBUGINFOD_MAXSIZE (bytes: 0.188 checks it against the
// announced length only, so FetchDebugFile also counts the bytes received
// and cancels past it). Whichever ends a download, libdebuginfod removes the
// partial file. A file over the size bound is not used and the server is
// still asked for others; a server over the time bound is asked no more that
// run. Build-ids that are not 1 to 64 bytes of hex are never sent (libdebuginfod
// refuses them, which said nothing about the server).
constexpr size_t kMaxQueryBuildIdBytes = 64;
// A debuglink candidate for an image without a build-id is checked by the
// CRC32 of the whole file; a larger file is not read, nor used (a warning).
constexpr uint64_t kMaxDebuglinkCrcBytes = 2ull << 30;
// The timeout used when DEBUGINFOD_TIMEOUT is unset (libdebuginfod's own
// default is 90 s per attempt).
constexpr const char* kDefaultDebuginfodTimeout = "10";
// The bounds of one download when DEBUGINFOD_MAXTIME / DEBUGINFOD_MAXSIZE
// are unset (libdebuginfod's own: none).
constexpr const char* kDefaultDebuginfodMaxTime = "30";          // seconds
constexpr const char* kDefaultDebuginfodMaxSize = "1073741824";  // bytes (1 GiB)
// Sets DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME and DEBUGINFOD_MAXSIZE to the
// defaults above, each unless the user set it. libdebuginfod reads them from
// the environment only, so this writes the environment: call it from main()
// before any thread starts.
void SetDebuginfodTimeoutDefault();

// The warnings the lookups of this process gave (e.g. a server that could
// not be reached), oldest first. Few: a failed server is not asked again.
std::vector<std::string> DebuginfoWarnings();

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_DEBUGINFO_H
