// crafted_elf.h - builds small hostile ELF files byte by byte for the image
// tests: a symbol table whose entries share one huge name, thousands of note
// headers, a function symbol gigabytes long. Only the fields the readers look
// at are filled in.
#ifndef LCPI_TESTS_UNIT_IMAGE_CRAFTED_ELF_H
#define LCPI_TESTS_UNIT_IMAGE_CRAFTED_ELF_H

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace lcpi::testing {

template <typename T>
void Put(std::string* out, size_t at, const T& value) {
  if (out->size() < at + sizeof(T)) out->resize(at + sizeof(T));
  std::memcpy(out->data() + at, &value, sizeof(T));
}

// An x86-64 ELF64 little-endian header of `type` with the sizes of its
// header and entries set; the caller sets the tables' places and counts.
inline Elf64_Ehdr Header(Elf64_Half type) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = type;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  return eh;
}

// An ET_DYN image with one PT_LOAD over the whole file and a .symtab of
// `count` function symbols at distinct addresses, every one named by the same
// `name_bytes`-byte string.
inline std::string SymbolBombElf(size_t count, size_t name_bytes) {
  const std::string shstr = std::string("\0.text\0.symtab\0.strtab\0.shstrtab\0", 33);
  std::string out;
  const size_t shstr_off = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
  out.resize(shstr_off);
  out += shstr;
  const size_t text_off = out.size();
  out.append(64, '\xc3');
  const size_t strtab_off = out.size();
  out += '\0';
  out.append(name_bytes, 'n');
  out += '\0';
  out.resize((out.size() + 7) & ~size_t{7});
  const size_t symtab_off = out.size();
  const size_t symtab_size = (count + 1) * sizeof(Elf64_Sym);
  out.resize(symtab_off + symtab_size);
  for (size_t i = 0; i < count; ++i) {
    Elf64_Sym s{};
    s.st_name = 1;
    s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    s.st_shndx = 1;
    s.st_value = 0x1000 + 16 * i;
    s.st_size = 16;
    Put(&out, symtab_off + (i + 1) * sizeof(Elf64_Sym), s);
  }
  const size_t shdr_off = out.size();
  Elf64_Shdr sh[5]{};
  sh[1] = {1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, text_off, 64, 0, 0, 16, 0};
  sh[2] = {7, SHT_SYMTAB, 0, 0, symtab_off, symtab_size, 3, 1, 8, sizeof(Elf64_Sym)};
  sh[3] = {15, SHT_STRTAB, 0, 0, strtab_off, name_bytes + 2, 0, 0, 1, 0};
  sh[4] = {23, SHT_STRTAB, 0, 0, shstr_off, shstr.size(), 0, 0, 1, 0};
  for (int i = 0; i < 5; ++i) Put(&out, shdr_off + i * sizeof(Elf64_Shdr), sh[i]);

  Elf64_Ehdr eh = Header(ET_DYN);
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_shoff = shdr_off;
  eh.e_phnum = 1;
  eh.e_shnum = 5;
  eh.e_shstrndx = 4;
  Put(&out, 0, eh);
  Elf64_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_flags = PF_R | PF_X;
  ph.p_offset = 0;
  ph.p_vaddr = 0;
  ph.p_filesz = out.size();
  ph.p_memsz = 0x1000 + 16 * count + out.size();
  ph.p_align = 0x1000;
  Put(&out, sizeof(Elf64_Ehdr), ph);
  return out;
}

// The headers of an ET_DYN image with one small PT_LOAD and `notes` PT_NOTE
// headers, each covering nearly the whole of a `file_size`-byte file (the caller
// makes the file that long, sparse: truncate after writing these bytes).
inline std::string NoteBombElf(size_t notes, uint64_t file_size) {
  std::string out;
  Elf64_Ehdr eh = Header(ET_DYN);
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_phnum = static_cast<Elf64_Half>(notes + 1);
  Put(&out, 0, eh);
  Elf64_Phdr load{};
  load.p_type = PT_LOAD;
  load.p_flags = PF_R | PF_X;
  load.p_filesz = 4096;
  load.p_memsz = 4096;
  load.p_align = 4096;
  Put(&out, sizeof(Elf64_Ehdr), load);
  for (size_t i = 0; i < notes; ++i) {
    Elf64_Phdr note{};
    note.p_type = PT_NOTE;
    note.p_flags = PF_R;
    // Distinct offsets: libelf would hand back one cached chunk for equal ones.
    note.p_offset = 8 * i;
    note.p_filesz = file_size - 8 * i;
    note.p_memsz = file_size - 8 * i;
    note.p_align = 4;
    Put(&out, sizeof(Elf64_Ehdr) + (i + 1) * sizeof(Elf64_Phdr), note);
  }
  return out;
}

// The head of an ET_DYN image with one function symbol, `name`, claiming
// `code_size` bytes of .text at 0x1000, all inside one PT_LOAD over the whole
// file. The caller makes the file 0x1000 + code_size bytes long, sparse
// (truncate after writing these bytes), so that every byte the symbol claims
// is there to read: only a bound of the reader's own stops it.
inline std::string HugeFunctionElf(const std::string& name, uint64_t code_size) {
  constexpr uint64_t kText = 0x1000;
  const std::string shstr = std::string("\0.text\0.symtab\0.strtab\0.shstrtab\0", 33);
  std::string out;
  const size_t shstr_off = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
  out.resize(shstr_off);
  out += shstr;
  const size_t strtab_off = out.size();
  out += '\0';
  out += name;
  out += '\0';
  const size_t strtab_size = out.size() - strtab_off;
  out.resize((out.size() + 7) & ~size_t{7});
  const size_t symtab_off = out.size();
  Elf64_Sym sym{};
  sym.st_name = 1;
  sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
  sym.st_shndx = 1;
  sym.st_value = kText;
  sym.st_size = code_size;
  Put(&out, symtab_off + sizeof(Elf64_Sym), sym);
  const size_t shdr_off = out.size();
  Elf64_Shdr sh[5]{};
  sh[1] = {1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, kText, kText, code_size, 0, 0, 16, 0};
  sh[2] = {7, SHT_SYMTAB, 0, 0, symtab_off, 2 * sizeof(Elf64_Sym), 3, 1, 8, sizeof(Elf64_Sym)};
  sh[3] = {15, SHT_STRTAB, 0, 0, strtab_off, strtab_size, 0, 0, 1, 0};
  sh[4] = {23, SHT_STRTAB, 0, 0, shstr_off, shstr.size(), 0, 0, 1, 0};
  for (int i = 0; i < 5; ++i) Put(&out, shdr_off + i * sizeof(Elf64_Shdr), sh[i]);

  Elf64_Ehdr eh = Header(ET_DYN);
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_shoff = shdr_off;
  eh.e_phnum = 1;
  eh.e_shnum = 5;
  eh.e_shstrndx = 4;
  Put(&out, 0, eh);
  Elf64_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_flags = PF_R | PF_X;
  ph.p_offset = 0;
  ph.p_vaddr = 0;
  ph.p_filesz = kText + code_size;
  ph.p_memsz = kText + code_size;
  ph.p_align = 0x1000;
  Put(&out, sizeof(Elf64_Ehdr), ph);
  return out;
}

// `elf` (an ELF64 little-endian file's bytes, 56-byte program headers) with
// `extra` more program headers, each a PT_LOAD (R+X) covering the whole
// file: the new table is appended at the end and e_phoff/e_phnum point at
// it. The headers cover `sparse_size` bytes when that is more (the caller
// then extends the file to it: a hole, no disk). Empty when `elf` has not
// 56-byte headers or the count would reach PN_XNUM. Identifying such a file
// by content once read the whole file for each header (image_id_test,
// hostile_test).
inline std::string WithWholeFileLoads(std::string elf, uint32_t extra, uint64_t sparse_size = 0) {
  if (elf.size() < sizeof(Elf64_Ehdr)) return {};
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof eh);
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum + uint64_t{extra} >= PN_XNUM ||
      eh.e_phoff + uint64_t{eh.e_phentsize} * eh.e_phnum > elf.size())
    return {};
  const std::string old_table = elf.substr(eh.e_phoff, uint64_t{eh.e_phentsize} * eh.e_phnum);
  while (elf.size() % 8 != 0) elf.push_back('\0');
  const uint64_t new_phoff = elf.size();
  const uint64_t written = new_phoff + old_table.size() + sizeof(Elf64_Phdr) * uint64_t{extra};
  const uint64_t total = written > sparse_size ? written : sparse_size;
  elf += old_table;
  Elf64_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_flags = PF_R | PF_X;
  ph.p_filesz = ph.p_memsz = total;  // offset 0, address 0: the whole file
  ph.p_align = 0x1000;
  for (uint32_t i = 0; i < extra; ++i) elf.append(reinterpret_cast<const char*>(&ph), sizeof ph);
  eh.e_phoff = new_phoff;
  eh.e_phnum = static_cast<Elf64_Half>(eh.e_phnum + extra);
  Put(&elf, 0, eh);
  return elf;
}

// One section of SectionsElf: its name, type and bytes.
struct CraftedSection {
  std::string name;
  std::string bytes;
  uint32_t type = SHT_PROGBITS;
};

// An ET_REL file of `sections` (in that order, after the null section) and
// its .shstrtab, last: no program headers, no symbols.
inline std::string SectionsElf(const std::vector<CraftedSection>& sections) {
  std::string shstr(1, '\0');
  std::vector<uint32_t> names;
  for (const CraftedSection& s : sections) {
    names.push_back(static_cast<uint32_t>(shstr.size()));
    shstr += s.name;
    shstr += '\0';
  }
  const uint32_t shstr_name = static_cast<uint32_t>(shstr.size());
  shstr += std::string(".shstrtab\0", 10);
  std::string out(sizeof(Elf64_Ehdr), '\0');
  std::vector<size_t> offsets;
  for (const CraftedSection& s : sections) {
    offsets.push_back(out.size());
    out += s.bytes;
  }
  const size_t shstr_off = out.size();
  out += shstr;
  out.resize((out.size() + 7) & ~size_t{7});
  const size_t shdr_off = out.size();
  const size_t count = sections.size() + 2;
  for (size_t i = 0; i < sections.size(); ++i) {
    const uint64_t size = sections[i].bytes.size();
    Elf64_Shdr sh{names[i], sections[i].type, 0, 0, offsets[i], size, 0, 0, 1, 0};
    Put(&out, shdr_off + (i + 1) * sizeof(Elf64_Shdr), sh);
  }
  Elf64_Shdr strtab{shstr_name, SHT_STRTAB, 0, 0, shstr_off, shstr.size(), 0, 0, 1, 0};
  Put(&out, shdr_off + (count - 1) * sizeof(Elf64_Shdr), strtab);

  Elf64_Ehdr eh = Header(ET_REL);
  eh.e_shoff = shdr_off;
  eh.e_shnum = static_cast<Elf64_Half>(count);
  eh.e_shstrndx = static_cast<Elf64_Half>(count - 1);
  Put(&out, 0, eh);
  return out;
}

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_IMAGE_CRAFTED_ELF_H
