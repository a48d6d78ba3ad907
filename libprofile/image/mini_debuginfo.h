// mini_debuginfo.h - MiniDebugInfo: the xz-compressed ELF file in a binary's
// .gnu_debugdata section that holds the .symtab strip removed (Debian and
// Fedora ship libc, gcc and others this way). perf reads it; so do we, so
// static functions of stripped system binaries get their names.
#ifndef LCPI_LIBPROFILE_IMAGE_MINI_DEBUGINFO_H
#define LCPI_LIBPROFILE_IMAGE_MINI_DEBUGINFO_H

#include <libelf.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace lcpi {

// The decompressed contents of elf's .gnu_debugdata, or nullopt if it has
// none or it does not decompress (bounded: a hostile file cannot make it
// allocate more than kMaxMiniDebugInfoBytes).
std::optional<std::vector<uint8_t>> ReadMiniDebugInfo(Elf* elf);

constexpr size_t kMaxMiniDebugInfoBytes = 64u << 20;

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_MINI_DEBUGINFO_H
