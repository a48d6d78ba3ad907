// report_symbols.h - procedures of one profiled image for the reports: from
// the ELF file at the image's path (user images) or from the symbols lcpid
// stored (kernel, modules, JIT code, the vDSO), always in FILE OFFSETS, the unit of the counts.
// Internal to the report code, and lcpi-ship's source of each image's symbols.
#ifndef LCPI_LIBPROFILE_REPORT_REPORT_SYMBOLS_H
#define LCPI_LIBPROFILE_REPORT_REPORT_SYMBOLS_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "libprofile/image/elf_symbols.h"
#include "libprofile/store/profile_db.h"

namespace lcpi::report {

// A procedure as a range of offsets [lo, hi) of its image.
struct Procedure {
  std::string name;
  uint64_t lo = 0, hi = 0;
};

class ImageSymbolizer {
 public:
  // Loads the symbols of `image`. Never fails: an image whose file is missing
  // or unreadable simply has no symbols, and a warning says why. When the
  // file on disk is not the profiled build (other identity), `elf()` is still
  // available but `trusted()` is false.
  static ImageSymbolizer Load(ProfileDb& db, const ImageInfo& image,
                              std::vector<std::string>* warnings);

  // The procedures shipped for an image (lcpiprof --fleet: the fleet's
  // symbols table, ascending offsets), found as Load's would be: an ELF
  // file's (`elf_extents`: each [offset, offset + size), the container
  // looked for among the few before, as ElfImage::Lookup does) or the
  // symbols lcpid stored (sizes 0 reach the next symbol).
  static ImageSymbolizer FromShipped(std::vector<SymbolInfo> symbols, bool elf_extents);

  // The procedure holding `offset`; with `untrusted`, an ELF file whose
  // identity differs from the profiled one is used too.
  std::optional<Procedure> Find(uint64_t offset, bool untrusted = false) const;
  // Procedures named `name` (normally one).
  std::vector<Procedure> FindByName(const std::string& name, bool untrusted = false) const;

  const ElfImage* elf() const { return elf_.get(); }
  bool trusted() const { return trusted_; }
  bool stored() const { return !stored_.empty(); }

  // Every procedure of the image, by file offset, names as recorded (not
  // demangled): the stored symbols as they are, or the ELF file's function
  // symbols that lie in its loaded bytes, when the file is the profiled
  // build (trusted). What lcpi-ship sends once per image identity.
  std::vector<SymbolInfo> Procedures() const;

 private:
  std::shared_ptr<ElfImage> elf_;
  bool trusted_ = false;
  std::vector<SymbolInfo> stored_;  // kernel, modules, JIT code, vDSO: ascending offsets
  bool elf_extents_ = false;        // FromShipped of an ELF file's symbols
  // Each mangled name demangled once, not once per sampled offset: a name
  // costs up to kMaxDemangledBytes of work (image/demangle.h). Keyed by the
  // mangled name; not shared between threads.
  const std::string& Shown(const std::string& name) const;
  mutable std::unordered_map<std::string, std::string> demangled_;
};

// Samples no symbol covers are grouped into one range row while they lie
// this close together (lcpiprof -p, and pprof's functions).
inline constexpr uint64_t kRangeGap = 256;

// "prog+0x10" or "prog+0x10-0x2f" for the samples no symbol covers, with the
// base name of the image path.
std::string RangeName(const std::string& image_path, uint64_t first, uint64_t last);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_REPORT_SYMBOLS_H
