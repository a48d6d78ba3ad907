// demangle.h - C++ symbol names as people read them. Reports show
// "push_to_top_level" for "_Z17push_to_top_levelv", as perf report does:
// demangled, without the parameter list.
#ifndef LCPI_LIBPROFILE_IMAGE_DEMANGLE_H
#define LCPI_LIBPROFILE_IMAGE_DEMANGLE_H

#include <string>

namespace lcpi {

// The demangled name without its parameter list, or name itself if it is
// not a mangled C++ name.
std::string Demangle(const std::string& name);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_DEMANGLE_H
