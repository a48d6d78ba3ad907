// demangle.cpp - __cxa_demangle, then the top-level parameter list dropped.
#include "libprofile/image/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace lcpi {

std::string Demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !out) return name;
  std::string full = out.get();
  // Cut at the '(' that opens the last top-level parameter list, scanning
  // back over nested parentheses (function-pointer parameters) and any
  // trailing qualifiers (" const", " &&").
  size_t end = full.rfind(')');
  if (end == std::string::npos) return full;
  int depth = 0;
  for (size_t i = end + 1; i-- > 0;) {
    if (full[i] == ')') depth++;
    if (full[i] == '(' && --depth == 0) return i > 0 ? full.substr(0, i) : full;
  }
  return full;
}

}  // namespace lcpi
