// elf_symbols.h - the symbolizer for one ELF image: function symbols, the
// file offset <-> virtual address mapping, source lines and raw code bytes.
//
// The daemon stores samples as FILE OFFSETS into an image, because that is
// what a mapping tells it without reading the ELF:
//     offset = pc - map_start + map_pgoff          (from /proc/pid/maps or MMAP2)
// The tools open the image with ElfImage, turn the offset back into the
// link-time virtual address through the PT_LOAD program headers
// (FileOffsetToVaddr), and symbolize that address. The same works for PIE,
// non-PIE executables and shared libraries, as no load bias is involved.
//
// Everything is read through libelf and libdw; a malformed file gives an
// Error from Open or an empty answer from a lookup, never a crash.
//
// Symbols and DWARF missing from the file (stripped) are looked for in a
// separate debug file (debuginfo.h has the order: build-id path,
// .gnu_debuglink, debuginfod): for symbols at Open when the file has no
// .symtab and no MiniDebugInfo, for DWARF on the first SourceLine call.
//
// One ElfImage is not safe to share between threads: SourceLine opens libdw
// lazily, and one libelf handle serves every lookup.
#ifndef LCPI_LIBPROFILE_IMAGE_ELF_SYMBOLS_H
#define LCPI_LIBPROFILE_IMAGE_ELF_SYMBOLS_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/image/demangle.h"
#include "libprofile/image/dwarf_strings.h"
#include "libprofile/image/image_id.h"

struct Dwarf;

namespace lcpi {

class AltDwarf;
class DebugFile;

// What one image keeps of its symbol tables (a hostile .symtab could name a
// 1 MiB string from every entry): at most kMaxImageSymbols function symbols
// and kMaxImageNameBytes bytes of names; a name longer than
// kMaxSymbolNameBytes (the demangler's own limit) is cut and ends in
// kSymbolCutMarker. Symbols past a cap are not read (their samples show as
// offset ranges) and symbol_warning() says which cap was hit.
inline constexpr size_t kMaxImageSymbols = 1'000'000;
inline constexpr size_t kMaxImageNameBytes = size_t{64} << 20;
inline constexpr size_t kMaxSymbolNameBytes = kMaxMangledBytes;
inline constexpr std::string_view kSymbolCutMarker = "...[cut]";

// A function symbol. [addr, end) is the range the symbolizer attributes to
// it: addr + st_size, or up to the next symbol when st_size is 0.
struct ElfSymbol {
  std::string name;
  uint64_t addr = 0;  // link-time virtual address (st_value)
  uint64_t size = 0;  // st_size as written; may be 0
  uint64_t end = 0;   // exclusive; always > addr
};

// The answer to "which function holds this address".
struct SymbolHit {
  const ElfSymbol* symbol = nullptr;  // owned by the ElfImage
  uint64_t offset = 0;                // address - symbol->addr
};

struct SourceLocation {
  std::string file;  // as the compiler recorded it (usually absolute)
  int line = 0;
};

// One PT_LOAD program header.
struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t offset = 0;  // in the file
  uint64_t filesz = 0;
  uint32_t flags = 0;  // PF_R | PF_W | PF_X
};

class ElfImage {
 public:
  // Opens and indexes the image. Errors: kNotFound, kPermission, kIo,
  // kBadElf (not ELF, or headers libelf rejects).
  // debug_root: where separate debug files live (<root>/.build-id/xx/yyyy.debug,
  // <root><dir>/<debuglink>); their .symtab names the functions of a stripped
  // file. "" skips the paths under it (a debuglink beside the file is still
  // followed, and debuginfod asked when the process allows it).
  static Expected<std::unique_ptr<ElfImage>> Open(const std::string& path,
                                                  const std::string& debug_root = "/usr/lib/debug");
  // The same for a path recorded in a profile (chosen by some user), as the
  // tools open it: OpenRecordedFile's rules (no final symbolic link, nothing
  // on procfs or sysfs, at most kMaxRecordedFileSize bytes).
  static Expected<std::unique_ptr<ElfImage>> OpenRecorded(
      const std::string& path, const std::string& debug_root = "/usr/lib/debug");
  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  const std::string& path() const { return path_; }
  // Content identity, as IdentifyElfFile would give it.
  const ImageIdentity& identity() const { return identity_; }
  const std::string& build_id() const { return identity_.build_id; }
  // ET_EXEC (non-PIE executable) or ET_DYN (PIE executable, shared library).
  uint16_t elf_type() const { return elf_type_; }
  // Where the function symbols came from: "symtab", "dynsym", "minidebuginfo"
  // (.gnu_debugdata), "debug-file" (by build-id under the debug root),
  // "debuglink" (.gnu_debuglink), "debuginfod", "dynsym+" one of the last four,
  // or "none".
  const std::string& symbol_table() const { return symbol_table_; }
  // Why fewer symbols or shorter names were kept than the file has (a cap
  // below was hit), "" when none was: the report says it once per image.
  const std::string& symbol_warning() const { return symbol_warning_; }
  // Function symbols (STT_FUNC, STT_GNU_IFUNC), sorted by address, one per
  // address (aliases folded, global names preferred).
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }
  const std::vector<LoadSegment>& segments() const { return segments_; }
  // The separate debug file found so far ("" if none was needed or found).
  std::string debug_file() const;

  // The function containing the link-time address `vaddr`.
  std::optional<SymbolHit> Lookup(uint64_t vaddr) const;
  // The same for a file offset as the daemon stores it.
  std::optional<SymbolHit> LookupFileOffset(uint64_t offset) const;

  // Through the PT_LOAD headers; nullopt outside every segment's file bytes
  // (e.g. .bss, or headers not loaded).
  std::optional<uint64_t> FileOffsetToVaddr(uint64_t offset) const;
  std::optional<uint64_t> VaddrToFileOffset(uint64_t vaddr) const;

  // The source line of an address, from DWARF in this file or, when it has
  // none, in its separate debug file. nullopt without line information.
  std::optional<SourceLocation> SourceLine(uint64_t vaddr) const;

  // The range of the named function (first match, global names preferred).
  // kNotFound when no function has that name.
  Expected<ElfSymbol> Symbol(const std::string& name) const;

  // `len` bytes of the file image at link-time address `vaddr` (for the
  // disassembler). The range must lie within one segment's file bytes, else
  // kInvalidArgument; a read failure is kIo.
  Expected<std::vector<uint8_t>> ReadBytes(uint64_t vaddr, size_t len) const;

 private:
  ElfImage() = default;
  static Expected<std::unique_ptr<ElfImage>> OpenWith(const std::string& path,
                                                      const std::string& debug_root, bool recorded);
  Expected<void> Index();
  void LoadSymbols();
  Dwarf* GetDwarf() const;
  // The separate debug file: found on disk (first call), or fetched from
  // debuginfod (first call while none with what is wanted is at hand).
  DebugFile* LocalDebugFile() const;
  DebugFile* FetchedDebugFile() const;

  std::string path_;
  int fd_ = -1;
  std::string debug_root_;
  ::Elf* elf_ = nullptr;
  uint64_t file_size_ = 0;
  uint16_t elf_type_ = 0;
  ImageIdentity identity_;
  std::string symbol_table_ = "none";
  std::string symbol_warning_;
  std::vector<ElfSymbol> symbols_;
  std::vector<LoadSegment> segments_;
  // libdw is opened on the first SourceLine call: most uses never need it.
  mutable Dwarf* dwarf_ = nullptr;
  mutable bool dwarf_tried_ = false;
  mutable std::unique_ptr<AltDwarf> alt_dwarf_;  // dwarf_'s supplementary file (dwz)
  mutable DwarfStrings dwarf_strings_;           // where its strings may lie
  mutable std::unique_ptr<DebugFile> debug_;
  mutable bool local_debug_tried_ = false;
  mutable bool fetch_tried_ = false;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_ELF_SYMBOLS_H
