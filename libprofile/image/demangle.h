// demangle.h - C++ symbol names as people read them. Reports show
// "push_to_top_level" for "_Z17push_to_top_levelv", as perf report does:
// demangled, without the parameter list. Rust names, legacy
// (_ZN...17h<hash>E) and v0 (_R...), read as rustfilt shows them:
// "hot::engine::Grid<T>::sum_rows", without hash or crate disambiguator.
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

// Whether name has a mangled prefix (_Z for C++ and legacy Rust, _R for
// Rust v0): callers that cache demangled names skip the rest.
bool MayBeMangled(const std::string& name);

// The demangled name without its parameter list, or name itself if it is
// not a mangled C++ or Rust name or is beyond a bound above.
std::string Demangle(const std::string& name);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_DEMANGLE_H
