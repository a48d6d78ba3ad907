// report_symbols.cpp - ImageSymbolizer: procedures of a profiled image in
// file offsets, from its ELF file or from the symbols lcpid stored.
#include "libprofile/report/report_symbols.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "libprofile/image/debuginfo.h"
#include "libprofile/image/demangle.h"
#include "libprofile/image/image_cache.h"
#include "libprofile/image/image_id.h"
#include "libprofile/image/symbol_end.h"

namespace lcpi::report {

namespace {

// The end of stored symbol i (ascending offsets). lcpid stores every kernel
// symbol with its SymbolEnd extent as its size; databases written before
// that have unsized ones, which the same rule extends to the next symbol.
uint64_t StoredEnd(const std::vector<SymbolInfo>& stored, size_t i) {
  std::optional<uint64_t> next;
  if (i + 1 < stored.size()) next = stored[i + 1].offset;
  return SymbolEnd(stored[i].offset, stored[i].size, next, std::numeric_limits<uint64_t>::max());
}

}  // namespace

ImageSymbolizer ImageSymbolizer::Load(ProfileDb& db, const ImageInfo& image,
                                      std::vector<std::string>* warnings) {
  ImageSymbolizer s;
  if (HasStoredSymbols(image.kind)) {
    auto stored = db.Symbols(image.id);
    if (stored) s.stored_ = std::move(*stored);
    if (s.stored_.empty() && warnings) {
      warnings->push_back("no symbols stored for " + image.path + " (" + image.identity + ")");
    }
    s.trusted_ = true;
    return s;
  }
  if (image.kind != ImageKind::kUser) return s;  // unknown: raw pcs, nothing to look up
  if (image.path.rfind("[", 0) == 0) {
    // No file on disk: lcpid stored the vDSO's names ([unreadable PATH] has none).
    auto stored = db.Symbols(image.id);
    if (stored) s.stored_ = std::move(*stored);
    s.trusted_ = true;
    return s;
  }
  // lcpid's copy first: it is the profiled file even when the path now holds
  // another, or nothing, or was only ever visible in a container.
  std::string cached = FindCachedImage(db.path(), image.identity);
  // The recorded path is some user's choice: opened by the daemon's rules.
  auto elf = ElfImage::OpenRecorded(cached.empty() ? image.path : cached);
  // A copy this reader may not open is said to be one, whatever the path
  // gives instead (nothing, or another file).
  const std::string denied = elf ? "" : CachedImageDenied(cached);
  // lcpid's copy is root's: a user's file's copy identifies without its owner.
  const bool from_cache = elf && !cached.empty();
  if (!elf && !cached.empty()) elf = ElfImage::OpenRecorded(image.path);
  // Symbols missing from the file may have been looked for on a debuginfod
  // server; why that failed is said once per report.
  if (warnings) {
    for (const std::string& w : DebuginfoWarnings()) {
      if (std::find(warnings->begin(), warnings->end(), w) == warnings->end())
        warnings->push_back(w);
    }
  }
  if (!elf) {
    if (warnings) {
      warnings->push_back("cannot read " + image.path + ": " +
                          (denied.empty() ? elf.error().message() : denied) +
                          " (samples shown as offset ranges)");
    }
    return s;
  }
  s.elf_ = std::move(*elf);
  if (warnings && !s.elf_->symbol_warning().empty()) {
    warnings->push_back(image.path + ": " + s.elf_->symbol_warning());
  }
  s.trusted_ = IdentityMatches(from_cache ? WithoutOwner(image.identity) : image.identity,
                               s.elf_->identity());
  if (!s.trusted_ && warnings) {
    // The found file's own identity is not printed: the path is a user's
    // choice, and its build-id would tell of a file only root may read.
    warnings->push_back(image.path + " on disk is not the profiled " + image.identity +
                        " (rebuilt or replaced)" + (denied.empty() ? "" : "; " + denied));
  }
  return s;
}

ImageSymbolizer ImageSymbolizer::FromShipped(std::vector<SymbolInfo> symbols, bool elf_extents) {
  ImageSymbolizer s;
  s.stored_ = std::move(symbols);
  s.elf_extents_ = elf_extents;
  s.trusted_ = true;
  return s;
}

std::optional<Procedure> ImageSymbolizer::Find(uint64_t offset, bool untrusted) const {
  if (elf_) {
    if (!trusted_ && !untrusted) return std::nullopt;
    auto hit = elf_->LookupFileOffset(offset);
    if (!hit) return std::nullopt;
    auto lo = elf_->VaddrToFileOffset(hit->symbol->addr);
    if (!lo) lo = offset - hit->offset;
    return Procedure{Shown(hit->symbol->name), *lo, *lo + (hit->symbol->end - hit->symbol->addr)};
  }
  auto it = std::upper_bound(stored_.begin(), stored_.end(), offset,
                             [](uint64_t o, const SymbolInfo& si) { return o < si.offset; });
  if (it == stored_.begin()) return std::nullopt;
  if (elf_extents_) {
    // As ElfImage::Lookup: a large function may enclose a smaller symbol
    // that starts inside it; the nearest start is not always the container.
    for (int steps = 0; it != stored_.begin() && steps < 16; ++steps) {
      --it;
      if (offset >= it->offset && offset - it->offset < it->size)
        return Procedure{Shown(it->name), it->offset, it->offset + it->size};
    }
    return std::nullopt;
  }
  auto sym = std::prev(it);
  uint64_t end = StoredEnd(stored_, static_cast<size_t>(sym - stored_.begin()));
  if (offset >= end) return std::nullopt;
  return Procedure{Shown(sym->name), sym->offset, end};
}

std::vector<SymbolInfo> ImageSymbolizer::Procedures() const {
  if (!elf_) return stored_;
  std::vector<SymbolInfo> out;
  if (!trusted_) return out;
  for (const ElfSymbol& sym : elf_->symbols()) {
    auto lo = elf_->VaddrToFileOffset(sym.addr);
    if (lo) out.push_back({*lo, sym.end - sym.addr, sym.name});
  }
  return out;
}

const std::string& ImageSymbolizer::Shown(const std::string& name) const {
  if (!MayBeMangled(name)) return name;  // not mangled: nothing to keep
  auto it = demangled_.find(name);
  if (it == demangled_.end()) it = demangled_.emplace(name, Demangle(name)).first;
  return it->second;
}

std::vector<Procedure> ImageSymbolizer::FindByName(const std::string& name, bool untrusted) const {
  std::vector<Procedure> out;
  if (elf_) {
    if (!trusted_ && !untrusted) return out;
    // The mangled name, or the demangled one reports show.
    for (const ElfSymbol& sym : elf_->symbols()) {
      if (sym.name != name && Shown(sym.name) != name) continue;
      auto lo = elf_->VaddrToFileOffset(sym.addr);
      if (lo) out.push_back({Shown(sym.name), *lo, *lo + (sym.end - sym.addr)});
    }
    return out;
  }
  for (size_t i = 0; i < stored_.size(); ++i) {
    if (stored_[i].name != name && Shown(stored_[i].name) != name) continue;
    out.push_back({Shown(stored_[i].name), stored_[i].offset, StoredEnd(stored_, i)});
  }
  return out;
}

std::string RangeName(const std::string& image_path, uint64_t first, uint64_t last) {
  std::string base = image_path;
  size_t slash = base.rfind('/');
  if (slash != std::string::npos && slash + 1 < base.size()) base = base.substr(slash + 1);
  char buf[64];
  if (first == last) {
    std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(first));
  } else {
    std::snprintf(buf, sizeof buf, "+0x%llx-0x%llx", static_cast<unsigned long long>(first),
                  static_cast<unsigned long long>(last));
  }
  return base + buf;
}

}  // namespace lcpi::report
