// vdso_symbols.h - the functions of the kernel's vDSO, the small ELF image
// the kernel maps into every process ("[vdso]": clock_gettime,
// gettimeofday, getcpu...). It has no file on disk, so lcpid reads it from
// memory and stores its names, as perf does from the process's memory.
// lcpid reads its OWN vDSO: every 64-bit process of one kernel maps the
// same one (the image's identity is "vdso:<kernel release>"), and reading
// another process's memory would need more than reading its own.
#ifndef LCPI_LIBPROFILE_IMAGE_VDSO_SYMBOLS_H
#define LCPI_LIBPROFILE_IMAGE_VDSO_SYMBOLS_H

#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

struct VdsoSymbol {
  uint64_t offset = 0;  // in the vDSO image, the unit samples are stored in
  uint64_t size = 0;
  std::string name;
};

// The function symbols of this process's vDSO, by offset. kNotFound when
// the kernel maps none (vdso=0); kBadElf when libelf rejects it.
Expected<std::vector<VdsoSymbol>> ReadOwnVdsoSymbols();

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_VDSO_SYMBOLS_H
