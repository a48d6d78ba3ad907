// alt_dwarf.cpp - AttachAltDwarf: the supplementary file by lcpi's rules,
// or an empty stand-in, an ELF file written once with libelf and read from
// memory (elf_memory) by each image that needs it.
#include "libprofile/image/alt_dwarf.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>
#include <vector>

#include "libprofile/image/image_id.h"

namespace lcpi {
namespace {

// Writes to `fd` an ELF file whose only DWARF is a one-byte .debug_line:
// enough for dwarf_begin_elf, with no units and no strings, so every
// reference into it fails cleanly.
bool WriteEmptyDwarf(int fd) {
  static char names[] = "\0.shstrtab\0.debug_line";
  static char line[1] = {0};
  Elf* elf = elf_begin(fd, ELF_C_WRITE, nullptr);
  if (elf == nullptr) return false;
  GElf_Ehdr ehdr;
  Elf_Scn* strings = nullptr;
  Elf_Scn* debug_line = nullptr;
  bool ok = gelf_newehdr(elf, ELFCLASS64) != 0 && gelf_getehdr(elf, &ehdr) != nullptr &&
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
  return ok;
}

// The stand-in's bytes, written once through libelf (into a memfd, read
// back); empty if that failed, which the next call tries again.
std::vector<char> EmptyDwarfBytes() {
  static std::mutex mu;
  static std::vector<char> bytes;
  std::lock_guard<std::mutex> lock(mu);
  if (bytes.empty() && InitLibelf()) {
    const int fd = memfd_create("lcpi-empty-dwarf", MFD_CLOEXEC);
    struct stat st;
    if (fd >= 0 && WriteEmptyDwarf(fd) && fstat(fd, &st) == 0 && st.st_size > 0) {
      std::vector<char> written(static_cast<size_t>(st.st_size));
      if (pread(fd, written.data(), written.size(), 0) == static_cast<ssize_t>(written.size())) {
        bytes = std::move(written);
      }
    }
    if (fd >= 0) close(fd);
  }
  return bytes;
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
  alt->empty_bytes_ = EmptyDwarfBytes();
  if (!alt->empty_bytes_.empty() &&
      (alt->empty_elf_ = elf_memory(alt->empty_bytes_.data(), alt->empty_bytes_.size())) !=
          nullptr) {
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
