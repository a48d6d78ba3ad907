// unwind_tables.h - the unwind tables of each image, by identity: its
// .eh_frame (and .debug_frame where it has one) as libdw's CFI, opened
// once per identity and kept for every later stack through it, with the
// file's loadable segments (a pc's file offset -> the address its CFI
// speaks of). Used by the DWARF unwinder on the lookups' threads.
//
// The file is the image cache's copy (images/<identity>, the same bytes
// the tools read), or, while there is none yet, the path it was mapped
// from when its build-id matches the identity's (a content-hash identity
// waits for the cache). An image without a readable file or any table is
// remembered as such for kRetryAfter, then tried again (its copy may have
// come since).
//
// An image whose identity is not known yet goes by kMappedIdentity and
// the path of the mapping in /proc/PID/map_files, the file itself.
//
// Bounded: at most kMaxImages identities are kept (each an open file, an
// ELF view of it and libdw's tables of the FDEs looked up so far), holding
// at most max_bytes together; the least recently used goes first.
#ifndef LCPI_LIBPROFILE_UNWIND_UNWIND_TABLES_H
#define LCPI_LIBPROFILE_UNWIND_UNWIND_TABLES_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lcpi {

inline constexpr std::string_view kMappedIdentity = "mapped:";

// One image's tables. libdw's CFI caches the FDEs it decodes without a
// lock: callers hold `mutex` while they use cfi.
struct ImageCfi {
  struct Load {
    uint64_t offset = 0, vaddr = 0, filesz = 0;
  };
  ImageCfi() = default;
  ~ImageCfi();
  ImageCfi(const ImageCfi&) = delete;
  ImageCfi& operator=(const ImageCfi&) = delete;

  // Lets go of the file, libdw's tables and the frames: bytes is 0 after.
  void Release();
  // Release, and keep only why the tables were refused.
  void Refuse(std::string why);

  // The address the CFI gives for a file offset, or nullopt when no
  // loadable segment holds it.
  std::optional<uint64_t> VaddrOf(uint64_t offset) const;

  std::mutex mutex;
  int fd = -1;
  void* elf = nullptr;          // Elf*
  void* dwarf = nullptr;        // Dwarf* (for .debug_frame), or null
  void* eh_frame = nullptr;     // Dwarf_CFI* of .eh_frame, or null
  void* debug_frame = nullptr;  // Dwarf_CFI* of .debug_frame (owned by dwarf), or null
  std::vector<Load> loads;
  // Not empty: why the image's CFI was refused (cfi_screen: a register, a
  // nesting, a program or a section past its bounds; not an ELF of this
  // host's machine; tables over the cache's bytes alone); nothing else is
  // held, and a walk reaching the image ends "unwind failed".
  std::string refused;
  // The frames libdw computed (Dwarf_Frame*, by CFI table and address):
  // a return address recurs in stack after stack, and computing its frame
  // runs the FDE's instructions up to it. At most kMaxFrames, then let go.
  static constexpr size_t kMaxFrames = 4096;
  // What one cached frame holds at most: libdw's Dwarf_Frame of up to
  // kMaxCfiRegister + 1 rules of 8 bytes (cfi_screen refuses more), its
  // header and the map's node.
  static constexpr uint64_t kFrameBytes = 128 * 8 + 128;
  // Bytes held: the sections read (.eh_frame, its header, .debug_frame),
  // the ELF headers, an estimate of libdw's index of the entries screened
  // and the frames cached. Frames change it under `mutex`.
  std::atomic<uint64_t> bytes{0};
  std::unordered_map<uint64_t, void*> frames[2];  // [0] .eh_frame, [1] .debug_frame; null: none
};

struct UnwindTableStats {
  uint64_t opened = 0;       // identities whose tables were opened
  uint64_t missing = 0;      // identities without a readable file or table
  uint64_t evicted = 0;      // let go for kMaxImages
  uint64_t cfi_refused = 0;  // images whose CFI was refused before libdw ran it
  size_t held = 0;           // now
  uint64_t bytes = 0;        // held by them now (ImageCfi::bytes)
};

class UnwindTables {
 public:
  static constexpr size_t kMaxImages = 256;
  static constexpr std::chrono::seconds kRetryAfter{10};

  // What the open tables may hold together before the least recently used
  // are let go: a large image's .eh_frame is a few MiB (LLVM 14's 5.0 MiB
  // with 95,000 FDEs), so 256 MiB keeps the images of a busy host open
  // while a user's many large ones cannot grow lcpid without bound.
  static constexpr uint64_t kMaxBytes = uint64_t{256} << 20;

  // db_path: the database whose image cache (image_cache.h) holds the
  // copies ("" when there is none).
  explicit UnwindTables(std::string db_path, uint64_t max_bytes = kMaxBytes)
      : db_path_(std::move(db_path)), max_bytes_(max_bytes) {}

  // The tables of `identity` (mapped from `path`), opened on first use;
  // null when it has none. Any thread.
  std::shared_ptr<ImageCfi> Get(const std::string& identity, const std::string& path);
  UnwindTableStats stats() const;

 private:
  struct Entry {
    std::shared_ptr<ImageCfi> cfi;  // null: none, until retry_at
    std::chrono::steady_clock::time_point retry_at;
    std::list<std::string>::iterator lru;
  };
  std::shared_ptr<ImageCfi> Open(const std::string& identity, const std::string& path) const;

  // Lets go of the least recently used entries, never `keep`, while
  // their bytes are over max_bytes_. Under mutex_.
  void EvictOverBytes(const std::string& keep);

  const std::string db_path_;
  const uint64_t max_bytes_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::list<std::string> lru_;  // most recent first
  UnwindTableStats stats_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_UNWIND_UNWIND_TABLES_H
