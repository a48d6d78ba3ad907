// dwarf_strings.h - where libdw's strings may lie, so that one is copied
// without reading past its section.
//
// libdw 0.188 hands out the names of a line table (dwarf_linesrc) as
// pointers into .debug_line_str or .debug_str (DW_FORM_line_strp, strp,
// strx, strp_sup) after checking only that the offset lies in the section
// (strx: up to one past its end), not that a NUL comes before the end. A
// hostile file's last name then runs off the section's heap block, and
// strlen on it reads past (the fuzzer found it: a 17-byte .debug_line_str).
// Which section of a name libdw uses depends on its rules (plain, .zdebug_,
// .dwo and .gnu.debuglto_ variants, the first usable of duplicates), so
// DwarfStrings keeps every section of every such name: a superset. A file
// with one that does not end in a NUL is refused whole (libdw's own strlen
// would run off it too); what is left is a name one past a section's end.
#ifndef LCPI_LIBPROFILE_IMAGE_DWARF_STRINGS_H
#define LCPI_LIBPROFILE_IMAGE_DWARF_STRINGS_H

#include <libelf.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace lcpi {

// More string sections than this in one file (a real one has two) and its
// DWARF is not used: each is read whole, as libdw reads the one it uses.
constexpr size_t kMaxDwarfStringSections = 8;

class DwarfStrings {
 public:
  // Adds the string sections of `elf` (whose Dwarf was begun: their data is
  // the data libdw holds). False, with nothing added, past
  // kMaxDwarfStringSections in all, or if one does not end in a NUL: libdw
  // runs strlen on line-table names itself (dwarf_getsrclines.c), so only
  // such a section bounds its reads as well as lcpi's.
  bool Add(Elf* elf);

  // Whether the string at `s` ends inside a section it lies in (one: they
  // may overlap). A string in none of them is one libdw built (a directory
  // joined to a name), and ends.
  bool Ends(const char* s) const;

 private:
  std::vector<std::pair<uintptr_t, uintptr_t>> sections_;  // [begin, end)
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_DWARF_STRINGS_H
