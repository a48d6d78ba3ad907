// alt_dwarf.cpp - AttachAltDwarf: the supplementary file by lcpi's rules,
// or an empty stand-in built once with libelf.
#include "libprofile/image/alt_dwarf.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mutex>

#include "libprofile/image/image_id.h"

namespace lcpi {
namespace {

// A memfd holding an ELF file whose only DWARF is a one-byte .debug_line:
// enough for dwarf_begin_elf, with no units and no strings, so every
// reference into it fails cleanly. Written once with libelf; -1 on failure.
int EmptyDwarfFile() {
  static int fd = -1;
  static std::once_flag once;
  std::call_once(once, [] {
    if (!InitLibelf()) return;
    int memfd = memfd_create("lcpi-empty-dwarf", MFD_CLOEXEC);
    if (memfd < 0) return;
    static char names[] = "\0.shstrtab\0.debug_line";
    static char line[1] = {0};
    bool ok = false;
    if (Elf* elf = elf_begin(memfd, ELF_C_WRITE, nullptr)) {
      GElf_Ehdr ehdr;
      Elf_Scn* strings = nullptr;
      Elf_Scn* debug_line = nullptr;
      ok = gelf_newehdr(elf, ELFCLASS64) != 0 && gelf_getehdr(elf, &ehdr) != nullptr &&
           (strings = elf_newscn(elf)) != nullptr && (debug_line = elf_newscn(elf)) != nullptr;
      if (ok) {
        ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
        ehdr.e_type = ET_REL;
        ehdr.e_version = EV_CURRENT;
        ehdr.e_shstrndx = static_cast<uint16_t>(elf_ndxscn(strings));
        ok = gelf_update_ehdr(elf, &ehdr) != 0;
      }
      // Section names: .shstrtab at offset 1, .debug_line at 11.
      const struct {
        Elf_Scn* scn;
        char* bytes;
        size_t size;
        Elf64_Word name, type;
      } sections[] = {{strings, names, sizeof names, 1, SHT_STRTAB},
                      {debug_line, line, sizeof line, 11, SHT_PROGBITS}};
      for (const auto& s : sections) {
        if (!ok) break;
        Elf_Data* data = elf_newdata(s.scn);
        GElf_Shdr shdr;
        ok = data != nullptr && gelf_getshdr(s.scn, &shdr) != nullptr;
        if (!ok) break;
        data->d_buf = s.bytes;
        data->d_size = s.size;
        data->d_type = ELF_T_BYTE;
        data->d_align = 1;
        shdr.sh_name = s.name;
        shdr.sh_type = s.type;
        ok = gelf_update_shdr(s.scn, &shdr) != 0;
      }
      ok = ok && elf_update(elf, ELF_C_WRITE) >= 0;
      elf_end(elf);
    }
    if (ok) {
      fd = memfd;  // kept for the process's life: each stand-in reads it
    } else {
      close(memfd);
    }
  });
  return fd;
}

}  // namespace

AltDwarf::~AltDwarf() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
  if (empty_dwarf_ != nullptr) dwarf_end(empty_dwarf_);
  if (empty_elf_ != nullptr) elf_end(empty_elf_);
}

bool AttachAltDwarf(Dwarf* main, const std::string& naming_file, const std::string& debug_root,
                    std::unique_ptr<AltDwarf>* kept) {
  kept->reset();
  const char* name = nullptr;
  const void* id = nullptr;
  const ssize_t id_size = dwelf_dwarf_gnu_debugaltlink(main, &name, &id);
  if (id_size <= 0) return true;  // no link (or a broken one): libdw looks for nothing
  std::unique_ptr<AltDwarf> alt(new AltDwarf());
  // The stand-in comes first: the file found below gets it as its own
  // supplementary file, so nothing reached through it is looked up by libdw.
  const int empty_fd = EmptyDwarfFile();
  if (empty_fd >= 0 && (alt->empty_elf_ = elf_begin(empty_fd, ELF_C_READ, nullptr)) != nullptr) {
    alt->empty_dwarf_ = dwarf_begin_elf(alt->empty_elf_, DWARF_C_READ, nullptr);
  }
  if (alt->empty_dwarf_ == nullptr) return false;
  alt->file_ =
      FindSupplementaryFile(name != nullptr ? name : "", HexBytes(id, static_cast<size_t>(id_size)),
                            naming_file, debug_root);
  if (alt->file_) alt->dwarf_ = dwarf_begin_elf(alt->file_->elf(), DWARF_C_READ, nullptr);
  if (alt->dwarf_ != nullptr) {
    dwarf_setalt(alt->dwarf_, alt->empty_dwarf_);
    dwarf_setalt(main, alt->dwarf_);
  } else {
    alt->file_.reset();
    dwarf_setalt(main, alt->empty_dwarf_);
  }
  *kept = std::move(alt);
  return true;
}

}  // namespace lcpi
