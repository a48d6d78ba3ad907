// mini_debuginfo.cpp - finding .gnu_debugdata and decompressing it with liblzma.
#include "libprofile/image/mini_debuginfo.h"

#include <gelf.h>
#include <lzma.h>

#include <cstring>

namespace lcpi {

std::optional<std::vector<uint8_t>> ReadMiniDebugInfo(Elf* elf) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return std::nullopt;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_PROGBITS) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == nullptr || std::strcmp(name, ".gnu_debugdata") != 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr || data->d_size == 0) return std::nullopt;
    std::vector<uint8_t> out(std::min<size_t>(data->d_size * 8, kMaxMiniDebugInfoBytes));
    for (;;) {
      uint64_t memlimit = kMaxMiniDebugInfoBytes;
      size_t in_pos = 0, out_pos = 0;
      lzma_ret rc =
          lzma_stream_buffer_decode(&memlimit, 0, nullptr, static_cast<const uint8_t*>(data->d_buf),
                                    &in_pos, data->d_size, out.data(), &out_pos, out.size());
      if (rc == LZMA_OK) {
        out.resize(out_pos);
        return out;
      }
      // Too small an output buffer: grow, within the bound.
      if (rc != LZMA_BUF_ERROR || out.size() >= kMaxMiniDebugInfoBytes) return std::nullopt;
      out.resize(std::min(out.size() * 4, kMaxMiniDebugInfoBytes));
    }
  }
  return std::nullopt;
}

}  // namespace lcpi
