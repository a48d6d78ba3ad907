// vdso_symbols.cpp - the vDSO's symbols, through ElfImage on a copy in a
// memfd (so libelf reads it like any file, and the one symbol-end rule and
// alias folding apply).
#include "libprofile/image/vdso_symbols.h"

#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "libprofile/image/elf_symbols.h"

namespace lcpi {

Expected<std::vector<VdsoSymbol>> ReadOwnVdsoSymbols() {
  auto base = reinterpret_cast<const unsigned char*>(getauxval(AT_SYSINFO_EHDR));
  if (!base) return Error(Errc::kNotFound, "this process has no vDSO");
  Elf64_Ehdr eh;
  std::memcpy(&eh, base, sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return Error(Errc::kBadElf, "the vDSO is not a 64-bit ELF image");
  // The kernel maps the whole image, section headers included: its size is
  // the furthest of the section header table and the loadable segments.
  uint64_t size = eh.e_shoff + uint64_t{eh.e_shnum} * eh.e_shentsize;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    std::memcpy(&ph, base + eh.e_phoff + i * uint64_t{eh.e_phentsize}, sizeof ph);
    if (ph.p_type == PT_LOAD) size = std::max<uint64_t>(size, ph.p_offset + ph.p_filesz);
  }
  if (size > (1u << 20)) return Error(Errc::kBadElf, "the vDSO claims to be over 1 MB");
  int fd = memfd_create("lcpi-vdso", MFD_CLOEXEC);
  if (fd < 0) return ErrnoError("memfd_create", errno);
  bool written = write(fd, base, size) == static_cast<ssize_t>(size);
  int err = errno;
  Expected<std::unique_ptr<ElfImage>> elf =
      written ? ElfImage::Open("/proc/self/fd/" + std::to_string(fd), "")
              : Expected<std::unique_ptr<ElfImage>>(ErrnoError("writing the vDSO copy", err));
  close(fd);
  if (!elf) return elf.error();
  std::vector<VdsoSymbol> out;
  for (const ElfSymbol& s : (*elf)->symbols()) {
    std::optional<uint64_t> offset = (*elf)->VaddrToFileOffset(s.addr);
    if (!offset || s.end <= s.addr) continue;
    out.push_back({*offset, s.end - s.addr, s.name});
  }
  return out;
}

}  // namespace lcpi
