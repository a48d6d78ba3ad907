// kernel_symbols.h - kernel and module addresses to (image, offset, symbol),
// from /proc/kallsyms and /proc/modules.
//
// Kernel samples are stored like user ones, as an offset into an image: for
// the kernel itself the offset from _text (so a KASLR slide does not change
// it), for a module the offset from the module's base. The symbol name is
// resolved here, at sampling time, because the tools cannot read kallsyms of
// a boot that is over.
#ifndef LCPI_LIBPROFILE_IMAGE_KERNEL_SYMBOLS_H
#define LCPI_LIBPROFILE_IMAGE_KERNEL_SYMBOLS_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

enum class KernelImageKind { kKernel, kModule };

struct KernelModule {
  std::string name;
  uint64_t base = 0;
  uint64_t size = 0;
  // False when the module was seen only in kallsyms ("[name]" tags, e.g.
  // bpf or __builtin__ftrace, or no /proc/modules in a container): then base
  // is its lowest symbol and size reaches one page past its highest.
  bool from_proc_modules = true;
};

// A text symbol: its address and where its name lies in the table's name
// pool (KernelSymbols::Name). lcpid keeps every kernel text symbol for as
// long as it runs (about 120,000): as a std::string each they took 14 MB of
// its RSS, in one pool 5 MB.
struct KernelSymbol {
  uint64_t addr = 0;
  uint32_t name_offset = 0;
  uint32_t name_size = 0;
};

// Where a kernel address lies: the image and the offset in it, what a sample
// is filed under. The view points into the KernelSymbols that located it.
struct KernelLocation {
  KernelImageKind kind = KernelImageKind::kKernel;
  std::string_view module;  // empty for the kernel
  uint64_t offset = 0;      // addr - _text, or addr - module base
};

// The nearest text symbol at or before an address, in the same image.
struct KernelSymbolHit {
  std::string_view name;
  uint64_t offset = 0;  // addr - the symbol's address
};

class KernelSymbols {
 public:
  // Reads text symbols (types t, T, w, W) and modules. A missing modules
  // file means no /proc/modules (containers): modules then come from the
  // "[name]" tags in kallsyms. Errors: kPermission when the addresses read as
  // zero (kptr_restrict, not root), kNotFound/kIo for the files, kCorrupt when
  // kallsyms has no _text or _stext.
  static Expected<KernelSymbols> Load(const std::string& kallsyms_path = "/proc/kallsyms",
                                      const std::string& modules_path = "/proc/modules");

  // The kernel's _text (or _stext) address: the base of kernel offsets.
  uint64_t text_base() const { return text_base_; }
  // One past the kernel's last text symbol, rounded up a page (the kernel's
  // text has no end symbol in kallsyms that covers init text too).
  uint64_t text_end() const { return text_end_; }
  const std::vector<KernelModule>& modules() const { return modules_; }

  // Which image holds `addr` and the offset in it (no symbol lookup: the
  // daemon files samples by offset and stores the symbols once). nullopt
  // outside the kernel and every module.
  std::optional<KernelLocation> Locate(uint64_t addr) const;

  // The nearest text symbol at or before `addr` in the image that holds it.
  // nullopt outside every image, or before the image's first symbol.
  std::optional<KernelSymbolHit> SymbolAt(uint64_t addr) const;

  // The address of a named text symbol (kernel first, then modules).
  std::optional<uint64_t> Address(const std::string& name) const;

  // Symbols of the kernel ("") or a module, sorted by address.
  const std::vector<KernelSymbol>* SymbolsOf(std::string_view module) const;

  std::string_view Name(const KernelSymbol& s) const {
    return std::string_view(names_).substr(s.name_offset, s.name_size);
  }

 private:
  uint64_t text_base_ = 0;
  uint64_t text_end_ = 0;
  std::vector<KernelModule> modules_;  // sorted by base
  // module name ("" = kernel) -> its symbols, sorted, one per address
  std::map<std::string, std::vector<KernelSymbol>, std::less<>> symbols_;
  std::string names_;  // every symbol's name, back to back
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_KERNEL_SYMBOLS_H
