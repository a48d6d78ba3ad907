// image_kind.h - what sort of code an image is. Stored in the database by
// name ("user", "kernel", "module", "jit", "unknown": the schema's CHECK), used as
// an enum everywhere else, so a misspelt kind fails to compile instead of
// matching nothing.
#ifndef LCPI_LIBPROFILE_BASE_IMAGE_KIND_H
#define LCPI_LIBPROFILE_BASE_IMAGE_KIND_H

#include <optional>
#include <string_view>

namespace lcpi {

enum class ImageKind {
  kUser,     // an ELF file mapped by a process, or the vDSO
  kKernel,   // the kernel's own text
  kModule,   // a kernel module
  kUnknown,  // no image: anonymous memory no JIT map names, one per process name
  kJit,      // code a JIT runtime wrote into anonymous memory and named in
             // /tmp/perf-PID.map: one per process, offsets are its addresses
};

// The kind's name as stored and printed: "user", "kernel", "module", "jit", "unknown".
const char* ImageKindName(ImageKind kind);

// The kind named `name`; nullopt for any other text.
std::optional<ImageKind> ParseImageKind(std::string_view name);

// Kernel and module images: their symbols come from kallsyms, stored by lcpid.
inline bool IsKernelSide(ImageKind kind) {
  return kind == ImageKind::kKernel || kind == ImageKind::kModule;
}

// Images the tools name only from the symbols lcpid stored in the database:
// the kernel side (this boot's kallsyms) and JIT code (a map file gone with
// its process).
inline bool HasStoredSymbols(ImageKind kind) {
  return IsKernelSide(kind) || kind == ImageKind::kJit;
}

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_IMAGE_KIND_H
