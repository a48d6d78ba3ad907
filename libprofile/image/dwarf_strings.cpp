// dwarf_strings.cpp - DwarfStrings: the sections that may hold the strings
// libdw hands out, found by name, and the bound check on one string.
#include "libprofile/image/dwarf_strings.h"

#include <gelf.h>

#include <cstring>
#include <string_view>

namespace lcpi {
namespace {

// .debug_str and .debug_line_str, as libdw may name them: .zdebug_ (GNU
// compressed), .dwo (split DWARF) and .gnu.debuglto_ (LTO) forms included.
bool IsStringSection(std::string_view name) {
  constexpr std::string_view kLto = ".gnu.debuglto_";
  if (name.substr(0, kLto.size()) == kLto) name.remove_prefix(kLto.size());
  for (std::string_view prefix : {".debug_", ".zdebug_"}) {
    if (name.substr(0, prefix.size()) != prefix) continue;
    name.remove_prefix(prefix.size());
    constexpr std::string_view kDwo = ".dwo";
    if (name.size() > kDwo.size() && name.substr(name.size() - kDwo.size()) == kDwo) {
      name.remove_suffix(kDwo.size());
    }
    return name == "str" || name == "line_str";
  }
  return false;
}

}  // namespace

bool DwarfStrings::Add(Elf* elf) {
  size_t shstrndx = 0;
  if (elf == nullptr || elf_getshdrstrndx(elf, &shstrndx) != 0) return true;
  std::vector<std::pair<uintptr_t, uintptr_t>> found;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == nullptr || !IsStringSection(name)) continue;
    if (sections_.size() + found.size() >= kMaxDwarfStringSections) return false;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) continue;
    // libdw itself runs strlen on the names it reads (read_srclines), before
    // lcpi sees any: a section whose last byte is not a NUL lets that read
    // run past its block, so its DWARF is not used at all.
    const auto* bytes = static_cast<const char*>(data->d_buf);
    if (data->d_size > 0 && bytes[data->d_size - 1] != '\0') return false;
    const auto begin = reinterpret_cast<uintptr_t>(data->d_buf);
    found.emplace_back(begin, begin + data->d_size);
  }
  sections_.insert(sections_.end(), found.begin(), found.end());
  return true;
}

bool DwarfStrings::Ends(const char* s) const {
  const auto at = reinterpret_cast<uintptr_t>(s);
  bool in_a_section = false;
  for (const auto& [begin, end] : sections_) {
    // Sections may lie back to back in memory (a file read with elf_memory,
    // as the fuzz target's and the dwz stand-in are): the first byte of one
    // is one past the end of another, so a string that ends inside any
    // section it lies in is taken.
    if (at >= begin && at < end && std::memchr(s, '\0', end - at) != nullptr) return true;
    // One past the end too: libdw's strx check lets an offset equal the size.
    if (at >= begin && at <= end) in_a_section = true;
  }
  return !in_a_section;
}

}  // namespace lcpi
