// demangle.h - C++ symbol names as people read them. Reports show
// "push_to_top_level" for "_Z17push_to_top_levelv", as perf report does:
// demangled, without the parameter list.
//
// Names come from files and JIT maps other users wrote, and a short mangled
// name can demangle to gigabytes (nested substitutions double the text per
// level: 289 bytes made 0.87 GB). So demangling is bounded both ways: a
// mangled name longer than kMaxMangledBytes, or one whose demangled text
// would pass kMaxDemangledBytes, is shown as it is, mangled. The printer
// stops at the bound; it never produces the rest.
#ifndef LCPI_LIBPROFILE_IMAGE_DEMANGLE_H
#define LCPI_LIBPROFILE_IMAGE_DEMANGLE_H

#include <cstddef>
#include <string>

namespace lcpi {

// The demangler's work space is on the stack, a few dozen bytes per byte of
// input: 8 KiB of name is about 400 KiB.
inline constexpr size_t kMaxMangledBytes = 8 * 1024;
inline constexpr size_t kMaxDemangledBytes = 16 * 1024;

// The demangled name without its parameter list, or name itself if it is
// not a mangled C++ name or is beyond a bound above.
std::string Demangle(const std::string& name);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_DEMANGLE_H
