// demangle.cpp - libiberty's demanglers with an output bound: Rust names
// (legacy and v0) through rust_demangle_callback, C++ names through
// cplus_demangle_v3_callback, then the C++ top-level parameter list dropped.
//
// Why libiberty and not __cxa_demangle: __cxa_demangle returns the whole
// text or nothing, so a name that demangles to gigabytes costs gigabytes and
// minutes before any check can run, and nothing short of demangling tells
// how long the text will be. libiberty's callback interface (the same
// demangler libstdc++ embeds) allocates nothing on the heap and hands the
// text over in pieces of at most 256 bytes; when the pieces pass the bound,
// the callback leaves the demangler by longjmp. Nothing is leaked: its
// work space is on the stack, which longjmp unwinds, and no frame between
// the setjmp and the callback has a destructor (libiberty is C).
#include "libprofile/image/demangle.h"

#include <csetjmp>
#include <cstring>

// libiberty.h (included by demangle.h) declares basename unless told that
// <string.h> has, and glibc's C++ overloads would clash with it.
#define HAVE_DECL_BASENAME 1
#include <libiberty/demangle.h>

namespace lcpi {
namespace {

struct Bounded {
  char text[kMaxDemangledBytes];
  size_t size = 0;
  std::jmp_buf too_long;
};

void Append(const char* piece, size_t n, void* opaque) {
  auto* out = static_cast<Bounded*>(opaque);
  if (n > sizeof out->text - out->size) std::longjmp(out->too_long, 1);
  std::memcpy(out->text + out->size, piece, n);
  out->size += n;
}

// Demangles `name` into *out, false when it is not a mangled name or its
// text passes the bound. Only trivially destructible objects live here:
// longjmp may leave through this frame's callees.
bool DemangleInto(const char* name, Bounded* out) {
  if (setjmp(out->too_long) != 0) return false;
  // The options __cxa_demangle uses: parameters, qualifiers, types.
  return cplus_demangle_v3_callback(name, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES, Append, out) != 0;
}

// The same for a Rust name: v0 (_R...) or legacy (_ZN...17h<16 hex>E, which
// the C++ demangler reads as "...::h<hash>" with "$LT$" escapes left in).
// Without DMGL_VERBOSE libiberty leaves out the legacy hash and the v0 crate
// disambiguators, as rustfilt does. False for anything else: libiberty
// checks the legacy hash's shape, so a C++ name is not taken for Rust.
bool DemangleRustInto(const char* name, Bounded* out) {
  if (setjmp(out->too_long) != 0) return false;
  return rust_demangle_callback(name, DMGL_PARAMS | DMGL_ANSI, Append, out) != 0;
}

}  // namespace

bool MayBeMangled(const std::string& name) {
  return name.rfind("_Z", 0) == 0 || name.rfind("_R", 0) == 0;
}

std::string Demangle(const std::string& name) {
  if (!MayBeMangled(name) || name.size() > kMaxMangledBytes) return name;
  bool rust_v0 = name[1] == 'R';
  // Embedded NULs: libiberty reads a C string; such a name is not mangled.
  if (name.find('\0') != std::string::npos) return name;
  static thread_local Bounded out;  // 16 KiB: not on the demangler's stack
  out.size = 0;
  // A Rust name has no parameter list to drop; its parentheses are types.
  if (DemangleRustInto(name.c_str(), &out)) return std::string(out.text, out.size);
  out.size = 0;
  if (rust_v0 || !DemangleInto(name.c_str(), &out)) return name;
  std::string full(out.text, out.size);
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
