// cfi_screen.cpp - decoding CFA opcodes and the few encodings needed to
// find them; entries are found with libdw's dwarf_next_cfi.
#include "libprofile/unwind/cfi_screen.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

namespace lcpi {
namespace {

// A ULEB128 (or SLEB128: the same bytes) within [*p, end); false when it
// runs past end or over 10 bytes.
bool Leb(const uint8_t** p, const uint8_t* end, uint64_t* value = nullptr) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*p >= end) return false;
    const uint8_t b = *(*p)++;
    if (shift < 64) v |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) {
      if (value) *value = v;
      return true;
    }
  }
  return false;
}

bool Skip(const uint8_t** p, const uint8_t* end, size_t n) {
  if (static_cast<size_t>(end - *p) < n) return false;
  *p += n;
  return true;
}

// The bytes of a pointer in `encoding` (DW_EH_PE_*) of a 64-bit image: 0
// for (S/U)LEB128, -1 for what libdw would not read or reads
// position-dependently (omit, aligned) or not at all (application bits
// past aligned).
int EncodedSize(uint8_t encoding) {
  if (encoding == DW_EH_PE_omit || (encoding & 0x70) >= DW_EH_PE_aligned) return -1;
  switch (encoding & 0x0f) {
    case DW_EH_PE_absptr:
      return 8;
    case DW_EH_PE_uleb128:
    case DW_EH_PE_sleb128:
      return 0;
    case DW_EH_PE_udata2:
    case DW_EH_PE_sdata2:
      return 2;
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4:
      return 4;
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8:
      return 8;
    default:
      return -1;
  }
}

bool SkipEncoded(const uint8_t** p, const uint8_t* end, int size) {
  return size == 0 ? Leb(p, end) : Skip(p, end, static_cast<size_t>(size));
}

// What libdw keeps of a CIE (cie.c's intern_new_cie): how its FDEs are
// laid out.
struct Cie {
  std::string why;
  int fde_pointer_size = 8;
  bool sized_augmentation = false;
};

// True for an encoding libdw sizes as a (U/S)LEB128: its
// encoded_value_size looks at the low 3 bits only, and sizes a ULEB128 by
// the first byte that has the continuation bit (not the last that has
// none), so it skips other bytes than the value's.
bool LebEncoding(uint8_t encoding) {
  return encoding != DW_EH_PE_omit && (encoding & 0x07) == DW_EH_PE_uleb128;
}

// The augmentation is read only where libdw's two readers of it
// (dwarf_next_cfi, which sizes it, and intern_new_cie, which keeps the FDE
// encoding) and this one cannot differ: "" or 'z' followed by letters from
// L, P, R and S, each letter's bytes within the augmentation data's stated
// length, and no (U/S)LEB128 pointer for P or L. intern_new_cie reads a
// letter's byte without looking at that length (an unknown letter after
// 'z', which dwarf_next_cfi stops at, leaves R to be read from the
// instructions), and sizes a LEB128 wrongly: either way the FDEs' pointers
// would be another size to libdw than here, and it would run bytes of
// theirs that were never checked as instructions.
Cie CheckCie(const Dwarf_CIE& c) {
  Cie out;
  if (c.return_address_register > kMaxCfiRegister) {
    out.why = "return address register " + std::to_string(c.return_address_register);
    return out;
  }
  uint8_t fde_encoding = DW_EH_PE_absptr;
  const uint8_t* data = c.augmentation_data;
  const uint8_t* data_end = c.augmentation_data + c.augmentation_data_size;
  const char* ap = c.augmentation;
  if (*ap) {
    if (*ap != 'z') {
      out.why = "CIE augmentation without 'z'";
      return out;
    }
    out.sized_augmentation = true;
    ++ap;
  }
  for (; *ap; ++ap) {
    if (*ap == 'S') continue;
    if (*ap != 'L' && *ap != 'P' && *ap != 'R') {
      out.why = "CIE augmentation letter " + std::to_string(static_cast<unsigned char>(*ap));
      return out;
    }
    if (data >= data_end) {
      out.why = "CIE augmentation data cut short";
      return out;
    }
    const uint8_t encoding = *data++;
    if (*ap == 'R') {
      fde_encoding = encoding;
    } else if (LebEncoding(encoding)) {
      out.why = std::string(*ap == 'P' ? "personality" : "LSDA") + " pointer encoding " +
                std::to_string(encoding);
      return out;
    } else if (*ap == 'P') {
      // libdw skips the pointer by the size in its low 3 bits: the same
      // as EncodedSize's for every encoding that has one.
      const int n = EncodedSize(encoding);
      if (n <= 0) {
        out.why = "personality pointer encoding " + std::to_string(encoding);
        return out;
      }
      if (!Skip(&data, data_end, static_cast<size_t>(n))) {
        out.why = "CIE augmentation data cut short";
        return out;
      }
    }
  }
  out.fde_pointer_size = EncodedSize(fde_encoding);
  if (out.fde_pointer_size < 0) {
    out.why = "FDE pointer encoding " + std::to_string(fde_encoding);
    return out;
  }
  const size_t n = static_cast<size_t>(c.initial_instructions_end - c.initial_instructions);
  if (n > kMaxCfiProgram) {
    out.why = "CIE program of " + std::to_string(n) + " bytes";
    return out;
  }
  out.why = CheckCfaProgram(c.initial_instructions, c.initial_instructions_end,
                            static_cast<size_t>(out.fde_pointer_size));
  return out;
}

// An FDE whose pointers or augmentation do not fit in it is refused: libdw
// reads its pointers up to the section's end, not the FDE's.
std::string CheckFde(const Dwarf_FDE& f, const Cie& cie) {
  const uint8_t* p = f.start;
  const uint8_t* end = f.end;
  // initial_location and address_range, then the augmentation data.
  if (!SkipEncoded(&p, end, cie.fde_pointer_size) || !SkipEncoded(&p, end, cie.fde_pointer_size))
    return "FDE cut short";
  if (cie.sized_augmentation) {
    uint64_t len = 0;
    if (!Leb(&p, end, &len) || len > static_cast<uint64_t>(end - p)) return "FDE cut short";
    p += len;
  }
  const size_t n = static_cast<size_t>(end - p);
  if (n > kMaxCfiProgram) return "FDE program of " + std::to_string(n) + " bytes";
  return CheckCfaProgram(p, end, static_cast<size_t>(cie.fde_pointer_size));
}

// libdw's view of one section's entries, checked once each.
struct Screener {
  const unsigned char* ident;
  Elf_Data* data;
  bool eh;  // .eh_frame (else .debug_frame)
  std::map<uint64_t, Cie> cies;
  std::vector<uint64_t> fde_offsets;  // in order: sorted
  CfiScreen out;

  const Cie* CieAt(uint64_t offset) {
    auto it = cies.find(offset);
    if (it != cies.end()) return &it->second;
    Dwarf_Off next = 0;
    Dwarf_CFI_Entry e;
    Cie c;
    if (dwarf_next_cfi(ident, data, eh, offset, &next, &e) != 0 || e.cie.CIE_id != DW_CIE_ID_64)
      c.why = "-";  // libdw finds no CIE there either: the FDE is never run
    else
      c = CheckCie(e.cie);
    return &cies.emplace(offset, std::move(c)).first->second;
  }

  // Every entry as libdw's linear search reads them (fde.c).
  void Walk() {
    Dwarf_Off off = 0;
    while (out.why.empty()) {
      Dwarf_Off next = off;
      Dwarf_CFI_Entry e;
      const int r = dwarf_next_cfi(ident, data, eh, off, &next, &e);
      if (r > 0) break;
      if (r < 0) {
        if (next == off || next == static_cast<Dwarf_Off>(-1)) break;
        off = next;
        continue;
      }
      if (!dwarf_cfi_cie_p(&e)) {
        fde_offsets.push_back(off);
        const Cie* cie = CieAt(e.fde.CIE_pointer);
        if (cie->why.empty()) {
          out.why = CheckFde(e.fde, *cie);
        } else if (cie->why != "-") {
          out.why = cie->why;
        }
      }
      if (next <= off) break;
      off = next;
    }
  }
};

// The .eh_frame_hdr search table libdw would use (dwarf_getcfi_elf.c's
// parse_eh_frame_hdr): "" when every FDE it names is one Walk checked.
// Only the layout every linker writes is accepted (eh_frame_ptr pcrel
// sdata4, count udata4, table datarel sdata4).
std::string CheckHdr(Elf_Data* hdr, uint64_t hdr_vaddr, uint64_t eh_frame_vaddr,
                     const std::vector<uint64_t>& fde_offsets) {
  const auto* h = static_cast<const uint8_t*>(hdr->d_buf);
  const size_t size = hdr->d_size;
  if (size < 4 || h[0] != 1 || h[1] == DW_EH_PE_omit) return "";  // libdw: no CFI or no table
  if (h[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4)) return ".eh_frame_hdr pointer encoding";
  if (h[2] == DW_EH_PE_omit) return "";
  if (size < 12) return "";
  int32_t ptr = 0;
  uint32_t count = 0;
  std::memcpy(&ptr, h + 4, 4);
  std::memcpy(&count, h + 8, 4);
  if (h[2] != DW_EH_PE_udata4) return ".eh_frame_hdr count encoding";
  if (count == 0 || h[3] == DW_EH_PE_omit || (h[3] & ~DW_EH_PE_signed) == DW_EH_PE_uleb128)
    return "";
  if (h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) return ".eh_frame_hdr table encoding";
  if (hdr_vaddr + 4 + static_cast<int64_t>(ptr) != eh_frame_vaddr) return "";  // libdw: no table
  if (count > (size - 12) / 8) return "";                                      // libdw: no CFI
  for (uint32_t i = 0; i < count; i++) {
    int32_t fde = 0;
    std::memcpy(&fde, h + 12 + 8 * size_t{i} + 4, 4);
    const uint64_t offset = hdr_vaddr + static_cast<int64_t>(fde) - eh_frame_vaddr;
    if (!std::binary_search(fde_offsets.begin(), fde_offsets.end(), offset))
      return ".eh_frame_hdr names an FDE outside .eh_frame's entries";
  }
  return "";
}

}  // namespace

std::string CheckCfaProgram(const uint8_t* p, const uint8_t* end, size_t set_loc_size) {
  int depth = 0;
  auto reg = [&](std::string* why) {
    uint64_t r = 0;
    if (!Leb(&p, end, &r)) return false;
    if (r > kMaxCfiRegister) {
      *why = "register " + std::to_string(r);
      return false;
    }
    return true;
  };
  std::string why;
  while (p < end) {
    const uint8_t op = *p++;
    bool ok = true;
    switch (op >> 6) {
      case 1:  // DW_CFA_advance_loc
        continue;
      case 2:  // DW_CFA_offset: register in the opcode (< 64)
        ok = Leb(&p, end);
        break;
      case 3:  // DW_CFA_restore
        continue;
      default:
        switch (op) {
          case DW_CFA_nop:
          case DW_CFA_GNU_window_save:
            break;
          case DW_CFA_set_loc:
            ok = SkipEncoded(&p, end, static_cast<int>(set_loc_size));
            break;
          case DW_CFA_advance_loc1:
            ok = Skip(&p, end, 1);
            break;
          case DW_CFA_advance_loc2:
            ok = Skip(&p, end, 2);
            break;
          case DW_CFA_advance_loc4:
            ok = Skip(&p, end, 4);
            break;
          case DW_CFA_MIPS_advance_loc8:
            ok = Skip(&p, end, 8);
            break;
          case DW_CFA_offset_extended:
          case DW_CFA_offset_extended_sf:
          case DW_CFA_val_offset:
          case DW_CFA_val_offset_sf:
          case DW_CFA_GNU_negative_offset_extended:
          case DW_CFA_def_cfa:
          case DW_CFA_def_cfa_sf:
            ok = reg(&why) && Leb(&p, end);
            break;
          case DW_CFA_register:
            ok = reg(&why) && reg(&why);
            break;
          case DW_CFA_restore_extended:
          case DW_CFA_undefined:
          case DW_CFA_same_value:
          case DW_CFA_def_cfa_register:
            ok = reg(&why);
            break;
          case DW_CFA_def_cfa_offset:
          case DW_CFA_def_cfa_offset_sf:
          case DW_CFA_GNU_args_size:
            ok = Leb(&p, end);
            break;
          case DW_CFA_expression:
          case DW_CFA_val_expression:
            if (!reg(&why)) {
              ok = false;
              break;
            }
            [[fallthrough]];
          case DW_CFA_def_cfa_expression: {
            uint64_t len = 0;
            ok = Leb(&p, end, &len) && Skip(&p, end, len);
            break;
          }
          case DW_CFA_remember_state:
            if (++depth > kMaxRememberDepth)
              return "remembered states " + std::to_string(depth) + " deep";
            break;
          case DW_CFA_restore_state:
            depth = std::max(0, depth - 1);
            break;
          default:
            return "unknown CFA opcode " + std::to_string(op);
        }
    }
    if (!why.empty()) return why;
    if (!ok) return "CFA program cut short";
  }
  return "";
}

std::string SectionTooLarge(const char* name, uint64_t size, uint64_t max_bytes) {
  if (size <= kMaxCfiSectionBytes && size <= max_bytes) return "";
  return std::string(name) + " of " + std::to_string(size) + " bytes (at most " +
         std::to_string(std::min(kMaxCfiSectionBytes, max_bytes)) + ")";
}

CfiScreen ScreenEhFrame(void* elf_handle, uint64_t max_bytes) {
  Elf* elf = static_cast<Elf*>(elf_handle);
  CfiScreen none;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0 || shstrndx == 0) return none;
  const unsigned char* ident = reinterpret_cast<unsigned char*>(elf_getident(elf, nullptr));
  if (!ident || ident[EI_CLASS] != ELFCLASS64) return none;  // the walk is x86-64's
  // As dwarf_getcfi_elf: the first .eh_frame, and an .eh_frame_hdr only
  // if it comes before it.
  Elf_Scn* hdr_scn = nullptr;
  uint64_t hdr_vaddr = 0, hdr_size = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name) continue;
    if (!std::strcmp(name, ".eh_frame_hdr")) {
      hdr_scn = scn;
      hdr_vaddr = sh.sh_addr;
      hdr_size = sh.sh_type == SHT_NOBITS ? 0 : sh.sh_size;
    } else if (!std::strcmp(name, ".eh_frame")) {
      if (sh.sh_type == SHT_NOBITS) return none;
      // Counted and bounded before anything is read: elf_rawdata reads
      // the whole section into the heap, and a sparse file's section
      // header may claim any size.
      CfiScreen sized;
      sized.present = true;
      sized.bytes = sh.sh_size + hdr_size;
      sized.why = SectionTooLarge(".eh_frame", sh.sh_size, max_bytes);
      if (sized.why.empty()) sized.why = SectionTooLarge(".eh_frame_hdr", hdr_size, max_bytes);
      if (sized.why.empty() && sized.bytes > max_bytes)
        sized.why = ".eh_frame and its header of " + std::to_string(sized.bytes) + " bytes";
      if (!sized.why.empty()) return sized;
      Elf_Data* data = elf_rawdata(scn, nullptr);
      if (!data || !data->d_buf) return none;
      Screener s{ident, data, true, {}, {}, {}};
      s.out.present = true;
      s.Walk();
      if (s.out.why.empty() && hdr_scn)
        if (Elf_Data* hdr = elf_rawdata(hdr_scn, nullptr); hdr && hdr->d_buf)
          s.out.why = CheckHdr(hdr, hdr_vaddr, sh.sh_addr, s.fde_offsets);
      s.out.cies = s.cies.size();
      s.out.fdes = s.fde_offsets.size();
      s.out.bytes = sized.bytes;
      return s.out;
    }
  }
  return none;
}

CfiScreen ScreenDebugFrame(void* elf_handle, void* data) {
  const unsigned char* ident =
      reinterpret_cast<unsigned char*>(elf_getident(static_cast<Elf*>(elf_handle), nullptr));
  Screener s{ident, static_cast<Elf_Data*>(data), false, {}, {}, {}};
  if (!ident || ident[EI_CLASS] != ELFCLASS64) return s.out;  // not present: not to be opened
  s.out.present = true;
  s.Walk();
  s.out.cies = s.cies.size();
  s.out.fdes = s.fde_offsets.size();
  return s.out;
}

}  // namespace lcpi
