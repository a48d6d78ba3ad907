// elf_symbols.cpp - ElfImage: function symbols from .symtab or .dynsym,
// segment-based offset <-> address mapping, source lines from libdw, and code
// bytes for the disassembler. Every pointer libelf or libdw returns is checked;
// a malformed image yields an error or an empty answer.
#include "libprofile/image/elf_symbols.h"

#include "libprofile/base/regular_file.h"
#include "libprofile/image/alt_dwarf.h"
#include "libprofile/image/debuginfo.h"
#include "libprofile/image/dwarf_strings.h"
#include "libprofile/image/mini_debuginfo.h"
#include "libprofile/image/symbol_end.h"

#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

namespace lcpi {
namespace {

// A symbol while the table is built: the binding decides which name an
// address keeps when several symbols share it.
struct RawSymbol {
  ElfSymbol sym;
  int rank = 0;  // lower is preferred
};

// Global names are the ones people search for (memcpy over __memcpy_avx_unaligned
// aliases are the exception, and good enough); symbols with a size carry more
// information than those without.
int Rank(const GElf_Sym& s) {
  int bind = GELF_ST_BIND(s.st_info);
  int rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
  return rank * 2 + (s.st_size == 0 ? 1 : 0);
}

// What one image may keep of its symbol tables, whatever they claim: a
// .symtab of 20,000 entries naming one 1 MiB string would otherwise be
// copied into 20 GB of names. Counts what was cut so the report can say so.
struct SymbolBudget {
  uint64_t file_size = 0;  // of the ELF being read (sections must lie in it)
  size_t symbols = 0;
  size_t name_bytes = 0;
  size_t names_cut = 0;
  bool count_hit = false;
  bool bytes_hit = false;
  bool section_outside = false;
};

// Whether a section's bytes lie in the file (NOBITS have none to read);
// libelf would otherwise allocate sh_size bytes and read what it can.
bool SectionInFile(const GElf_Shdr& shdr, uint64_t file_size) {
  if (shdr.sh_type == SHT_NOBITS) return true;
  return shdr.sh_offset <= file_size && shdr.sh_size <= file_size - shdr.sh_offset;
}

// Reads the function symbols of one symbol table section, within `budget`.
std::vector<RawSymbol> ReadFunctionSymbols(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr,
                                           SymbolBudget* budget) {
  std::vector<RawSymbol> out;
  if (budget->count_hit || budget->bytes_hit) return out;
  GElf_Shdr strings;
  Elf_Scn* strscn = elf_getscn(elf, shdr.sh_link);
  if (!SectionInFile(shdr, budget->file_size) || strscn == nullptr ||
      gelf_getshdr(strscn, &strings) == nullptr || !SectionInFile(strings, budget->file_size)) {
    budget->section_outside = true;
    return out;
  }
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) return out;
  size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (entsize == 0) return out;
  size_t count = data->d_size / entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
    int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    // Imports (undefined) have no code here; value 0 is an unresolved weak.
    if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
    const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (name == nullptr || name[0] == '\0') continue;
    if (budget->symbols >= kMaxImageSymbols) {
      budget->count_hit = true;
      break;
    }
    // strnlen: never walk more of a hostile name than is kept.
    size_t len = strnlen(name, kMaxSymbolNameBytes + 1);
    bool cut = len > kMaxSymbolNameBytes;
    if (cut) len = kMaxSymbolNameBytes;
    if (len + kSymbolCutMarker.size() > kMaxImageNameBytes - budget->name_bytes) {
      budget->bytes_hit = true;
      break;
    }
    RawSymbol raw;
    raw.sym.name.assign(name, len);
    if (cut) {
      raw.sym.name += kSymbolCutMarker;
      ++budget->names_cut;
    }
    budget->name_bytes += raw.sym.name.size();
    ++budget->symbols;
    raw.sym.addr = sym.st_value;
    raw.sym.size = sym.st_size;
    raw.rank = Rank(sym);
    out.push_back(std::move(raw));
  }
  return out;
}

// The function symbols of elf's .symtab (none if it has none).
std::vector<RawSymbol> ReadSymtab(Elf* elf, SymbolBudget* budget) {
  std::vector<RawSymbol> out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_SYMTAB) continue;
    std::vector<RawSymbol> found = ReadFunctionSymbols(elf, scn, shdr, budget);
    out.insert(out.end(), std::make_move_iterator(found.begin()),
               std::make_move_iterator(found.end()));
  }
  return out;
}

// The warning for the caps `budget` hit, "" when none was.
std::string BudgetWarning(const SymbolBudget& budget) {
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (budget.names_cut > 0) {
    add(std::to_string(budget.names_cut) + " symbol names longer than " +
        std::to_string(kMaxSymbolNameBytes) + " bytes cut");
  }
  if (budget.count_hit) {
    add("more than " + std::to_string(kMaxImageSymbols) + " symbols, the rest not read");
  }
  if (budget.bytes_hit) {
    add("symbol name bytes past " + std::to_string(kMaxImageNameBytes >> 20) +
        " MiB, the rest not read");
  }
  if (budget.section_outside) add("a symbol table section lies outside the file, not read");
  return out;
}

}  // namespace

ElfImage::~ElfImage() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
  alt_dwarf_.reset();  // after the Dwarf that reads it
  debug_.reset();      // after the Dwarf that may read it
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) close(fd_);
}

Expected<std::unique_ptr<ElfImage>> ElfImage::Open(const std::string& path,
                                                   const std::string& debug_root) {
  return OpenWith(path, debug_root, false);
}

Expected<std::unique_ptr<ElfImage>> ElfImage::OpenRecorded(const std::string& path,
                                                           const std::string& debug_root) {
  return OpenWith(path, debug_root, true);
}

Expected<std::unique_ptr<ElfImage>> ElfImage::OpenWith(const std::string& path,
                                                       const std::string& debug_root,
                                                       bool recorded) {
  if (!InitLibelf()) return Error(Errc::kUnsupported, "libelf: unsupported ELF version");
  // The destructor releases whatever was set up if a step below fails.
  std::unique_ptr<ElfImage> image(new ElfImage());
  image->path_ = path;
  image->debug_root_ = debug_root;
  Expected<int> fd = recorded ? OpenRecordedFile(path, &image->file_size_)
                              : OpenRegularFile(path, &image->file_size_);
  if (!fd) return fd.error();
  image->fd_ = *fd;
  // ELF_C_READ: lazy pread, no SIGBUS if the file shrinks while open.
  image->elf_ = elf_begin(image->fd_, ELF_C_READ, nullptr);
  if (image->elf_ == nullptr) {
    return Error(Errc::kBadElf, path + ": " + elf_errmsg(-1));
  }
  Expected<void> ok = image->Index();
  if (!ok) return Error(ok.error().code(), path + ": " + ok.error().message());
  return image;
}

Expected<void> ElfImage::Index() {
  Expected<ImageIdentity> id = IdentifyElf(elf_, fd_, file_size_);
  if (!id) return id.error();
  identity_ = *id;

  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf_, &ehdr) == nullptr) {
    return Error(Errc::kBadElf, std::string("ELF header: ") + elf_errmsg(-1));
  }
  elf_type_ = ehdr.e_type;
  if (elf_type_ != ET_EXEC && elf_type_ != ET_DYN) {
    return Error(Errc::kBadElf,
                 "not an executable or shared library (e_type " + std::to_string(elf_type_) + ")");
  }

  size_t phnum = 0;
  if (elf_getphdrnum(elf_, &phnum) != 0) {
    return Error(Errc::kBadElf, std::string("program headers: ") + elf_errmsg(-1));
  }
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr) {
      return Error(Errc::kBadElf, std::string("program header: ") + elf_errmsg(-1));
    }
    if (phdr.p_type != PT_LOAD) continue;
    // IdentifyElf checked the file bytes lie in the file; a wrapping address
    // range would break every lookup below, so refuse it here.
    if (phdr.p_vaddr + phdr.p_memsz < phdr.p_vaddr || phdr.p_filesz > phdr.p_memsz) {
      return Error(Errc::kBadElf, "loadable segment " + std::to_string(i) + " is malformed");
    }
    segments_.push_back(
        LoadSegment{phdr.p_vaddr, phdr.p_memsz, phdr.p_offset, phdr.p_filesz, phdr.p_flags});
  }
  LoadSymbols();
  return {};
}

void ElfImage::LoadSymbols() {
  // .symtab has every function; .dynsym (kept by strip) only the exported
  // ones. Use the richer table when it has any functions.
  std::vector<RawSymbol> raw;
  SymbolBudget budget;
  budget.file_size = file_size_;
  for (Elf64_Word wanted : {SHT_SYMTAB, SHT_DYNSYM}) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf_, scn)) != nullptr) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != wanted) continue;
      std::vector<RawSymbol> found = ReadFunctionSymbols(elf_, scn, shdr, &budget);
      raw.insert(raw.end(), std::make_move_iterator(found.begin()),
                 std::make_move_iterator(found.end()));
    }
    if (!raw.empty()) {
      symbol_table_ = wanted == SHT_SYMTAB ? "symtab" : "dynsym";
      break;
    }
  }
  // Stripped: the local functions may still be in MiniDebugInfo
  // (.gnu_debugdata), or in a separate debug file (debuginfo.h: by build-id
  // under the debug root, by .gnu_debuglink, then from debuginfod).
  if (symbol_table_ != "symtab") {
    std::vector<RawSymbol> extra;
    std::string from = "minidebuginfo";
    if (std::optional<std::vector<uint8_t>> mini = ReadMiniDebugInfo(elf_)) {
      if (Elf* inner = elf_memory(reinterpret_cast<char*>(mini->data()), mini->size())) {
        uint64_t saved = budget.file_size;
        budget.file_size = mini->size();
        extra = ReadSymtab(inner, &budget);
        budget.file_size = saved;
        elf_end(inner);
      }
    }
    for (auto find : {&ElfImage::LocalDebugFile, &ElfImage::FetchedDebugFile}) {
      if (!extra.empty()) break;
      if (DebugFile* debug = (this->*find)()) {
        std::error_code ec;
        uint64_t size = std::filesystem::file_size(debug->path(), ec);
        budget.file_size = ec ? 0 : size;
        extra = ReadSymtab(debug->elf(), &budget);
        from = DebugOriginName(debug->origin());
      }
    }
    if (!extra.empty()) {
      symbol_table_ = raw.empty() ? from : "dynsym+" + from;
      raw.insert(raw.end(), std::make_move_iterator(extra.begin()),
                 std::make_move_iterator(extra.end()));
    }
  }

  symbol_warning_ = BudgetWarning(budget);

  // Sorted by address, best name first, then one symbol per address.
  std::stable_sort(raw.begin(), raw.end(), [](const RawSymbol& a, const RawSymbol& b) {
    if (a.sym.addr != b.sym.addr) return a.sym.addr < b.sym.addr;
    return a.rank < b.rank;
  });
  symbols_.clear();
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (RawSymbol& r : raw) {
    if (!symbols_.empty() && symbols_.back().addr == r.sym.addr) continue;
    if (r.sym.addr == kMax) continue;  // no exclusive end > addr fits (a corrupt file)
    symbols_.push_back(std::move(r.sym));
  }

  // The extent of each symbol (SymbolEnd): a size-0 symbol runs to the next
  // symbol, but not past the end of its segment.
  for (size_t i = 0; i < symbols_.size(); ++i) {
    ElfSymbol& s = symbols_[i];
    uint64_t limit = s.addr + 1;
    for (const LoadSegment& seg : segments_) {
      if (s.addr >= seg.vaddr && s.addr - seg.vaddr < seg.memsz)
        limit = seg.memsz > kMax - seg.vaddr ? kMax : seg.vaddr + seg.memsz;
    }
    std::optional<uint64_t> next;
    if (i + 1 < symbols_.size()) next = symbols_[i + 1].addr;
    s.end = SymbolEnd(s.addr, s.size, next, limit);
  }
}

std::optional<SymbolHit> ElfImage::Lookup(uint64_t vaddr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t a, const ElfSymbol& s) { return a < s.addr; });
  // Walk back a little: a large function may enclose a smaller symbol that
  // starts inside it (nested or cold-split code); the nearest start is not
  // always the container. The bound keeps a lookup cheap.
  for (int steps = 0; it != symbols_.begin() && steps < 16; ++steps) {
    --it;
    if (vaddr >= it->addr && vaddr < it->end) return SymbolHit{&*it, vaddr - it->addr};
  }
  return std::nullopt;
}

std::optional<SymbolHit> ElfImage::LookupFileOffset(uint64_t offset) const {
  std::optional<uint64_t> vaddr = FileOffsetToVaddr(offset);
  if (!vaddr) return std::nullopt;
  return Lookup(*vaddr);
}

std::optional<uint64_t> ElfImage::FileOffsetToVaddr(uint64_t offset) const {
  // Executable segments first: where older layouts let two segments share a
  // file page, samples come from the code.
  for (bool want_exec : {true, false}) {
    for (const LoadSegment& seg : segments_) {
      if (((seg.flags & PF_X) != 0) != want_exec) continue;
      if (offset >= seg.offset && offset - seg.offset < seg.filesz) {
        return seg.vaddr + (offset - seg.offset);
      }
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ElfImage::VaddrToFileOffset(uint64_t vaddr) const {
  for (const LoadSegment& seg : segments_) {
    if (vaddr >= seg.vaddr && vaddr - seg.vaddr < seg.filesz) {
      return seg.offset + (vaddr - seg.vaddr);
    }
  }
  return std::nullopt;
}

DebugFile* ElfImage::LocalDebugFile() const {
  if (!local_debug_tried_) {
    local_debug_tried_ = true;
    debug_ = FindLocalDebugFile(elf_, path_, identity_.build_id, debug_root_);
  }
  return debug_.get();
}

DebugFile* ElfImage::FetchedDebugFile() const {
  // One query per image. The fetched file may replace a local one that
  // lacked what was wanted; no Dwarf reads that one yet (GetDwarf fetches
  // only while it has none).
  if (fetch_tried_ || !DebuginfodActive()) return nullptr;
  fetch_tried_ = true;
  std::unique_ptr<DebugFile> fetched = FetchDebugFile(identity_.build_id, path_);
  if (!fetched) return nullptr;
  debug_ = std::move(fetched);
  return debug_.get();
}

std::string ElfImage::debug_file() const { return debug_ ? debug_->path() : ""; }

Dwarf* ElfImage::GetDwarf() const {
  if (!dwarf_tried_) {
    dwarf_tried_ = true;
    // nullptr without debug info (stripped, or built without -g).
    dwarf_ = dwarf_begin_elf(elf_, DWARF_C_READ, nullptr);
    std::string dwarf_path = path_;
    // Else the separate debug file's: on disk, then from debuginfod.
    for (auto find : {&ElfImage::LocalDebugFile, &ElfImage::FetchedDebugFile}) {
      if (dwarf_ != nullptr) break;
      DebugFile* debug = (this->*find)();
      if (debug != nullptr && debug->has_dwarf()) {
        dwarf_ = dwarf_begin_elf(debug->elf(), DWARF_C_READ, nullptr);
        dwarf_path = debug->path();
      }
    }
    // Its dwz file by lcpi's rules (alt_dwarf.h), and where the strings it
    // hands out may lie (dwarf_strings.h); without either, no DWARF.
    if (dwarf_ != nullptr &&
        (!AttachAltDwarf(dwarf_, dwarf_path, debug_root_, &alt_dwarf_) ||
         !dwarf_strings_.Add(dwarf_getelf(dwarf_)) ||
         (alt_dwarf_ && alt_dwarf_->file() && !dwarf_strings_.Add(alt_dwarf_->file()->elf())))) {
      dwarf_end(dwarf_);
      dwarf_ = nullptr;
    }
  }
  return dwarf_;
}

std::optional<SourceLocation> ElfImage::SourceLine(uint64_t vaddr) const {
  Dwarf* dw = GetDwarf();
  if (dw == nullptr) return std::nullopt;
  Dwarf_Die cudie;
  if (dwarf_addrdie(dw, vaddr, &cudie) == nullptr) return std::nullopt;
  Dwarf_Line* line = dwarf_getsrc_die(&cudie, vaddr);
  if (line == nullptr) return std::nullopt;
  int lineno = 0;
  if (dwarf_lineno(line, &lineno) != 0) return std::nullopt;
  const char* file = dwarf_linesrc(line, nullptr, nullptr);
  if (file == nullptr || !dwarf_strings_.Ends(file)) return std::nullopt;
  return SourceLocation{file, lineno};
}

Expected<ElfSymbol> ElfImage::Symbol(const std::string& name) const {
  // symbols_ keeps the preferred name per address, so a linear scan finds
  // the function under the name the listing shows. Called once per command.
  for (const ElfSymbol& s : symbols_) {
    if (s.name == name) return s;
  }
  return Error(Errc::kNotFound, path_ + ": no function named '" + name + "'");
}

Expected<std::vector<uint8_t>> ElfImage::ReadBytes(uint64_t vaddr, size_t len) const {
  for (const LoadSegment& seg : segments_) {
    if (vaddr < seg.vaddr || vaddr - seg.vaddr >= seg.filesz) continue;
    uint64_t in_segment = vaddr - seg.vaddr;
    if (len > seg.filesz - in_segment) {
      return Error(Errc::kInvalidArgument, path_ + ": byte range runs past its segment");
    }
    // The segment's bytes lie in the file (checked at Open); read them there.
    std::vector<uint8_t> out(len);
    size_t done = 0;
    while (done < len) {
      ssize_t n = pread(fd_, out.data() + done, len - done,
                        static_cast<off_t>(seg.offset + in_segment + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoError(path_ + ": read", errno);
      if (n == 0) return Error(Errc::kIo, path_ + ": file shrank while open");
      done += static_cast<size_t>(n);
    }
    return out;
  }
  return Error(Errc::kInvalidArgument, path_ + ": address is not in the file's loaded bytes");
}

}  // namespace lcpi
