// cfi_screen.h - an image's .eh_frame checked before libdw runs any of it.
//
// libdw's CFI interpreter sizes a frame for every register up to the
// highest one a rule names (8 bytes each, up to 268 M registers: 2 GiB for
// a 7-byte DW_CFA_offset_extended), copies the whole state at each
// DW_CFA_remember_state, and runs an FDE's program from its start on every
// lookup. A user's own shared object chooses all three. So every CIE and
// FDE libdw could reach (each entry in order, the CIE each FDE points to,
// and each FDE the .eh_frame_hdr search table names) is decoded here first,
// opcodes and their LEB128 operands only, and the image's tables are
// refused if any names a register above kMaxCfiRegister, nests remembered
// states deeper than kMaxRememberDepth, or has a program longer than
// kMaxCfiProgram. Compilers never come near these bounds; a file that does
// is hostile or broken, and its stacks end "unwind failed".
#ifndef LCPI_LIBPROFILE_UNWIND_CFI_SCREEN_H
#define LCPI_LIBPROFILE_UNWIND_CFI_SCREEN_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace lcpi {

// DWARF register numbers in use: x86-64 0..16 (16 the return address
// column), its vector registers 17..32 (xmm) and 67..82 (upper zmm), k0-k7
// at 118..125; arm64 x0..x30, sp 31, pc 32, VG 46, P0-P15 48..63, V0-V31
// 64..95 and SVE's Z0-Z31 96..127. 127 covers them all; libdw's frame is
// then at most 128 rules (1 KiB).
inline constexpr uint64_t kMaxCfiRegister = 127;
// Remembered states nest one or two deep in compiled code (shrink-wrapped
// epilogues); each level is a copy of the frame.
inline constexpr int kMaxRememberDepth = 8;
// The longest FDE program on this Debian (cc1plus, 20,064 bytes; libc's
// longest is 192 and LLVM's 2,388): libdw runs it up to the pc on every
// frame it computes, so its length bounds one lookup's work.
inline constexpr size_t kMaxCfiProgram = 64 * 1024;

// The largest .eh_frame, .eh_frame_hdr or .debug_frame read: each is
// read whole into lcpid's heap. LLVM 14's .eh_frame is 5.0 MiB (its
// header 0.7 MiB), the largest on this Debian; 64 MiB leaves room for a
// larger program and none for a sparse file whose section header claims
// gigabytes.
inline constexpr uint64_t kMaxCfiSectionBytes = uint64_t{64} << 20;

// What ScreenEhFrame found; `why` is empty when the tables may be used.
struct CfiScreen {
  bool present = false;  // there is an .eh_frame section for libdw to read
  std::string why;
  size_t cies = 0, fdes = 0;  // distinct entries checked
  uint64_t bytes = 0;         // of the sections read (.eh_frame and its header)
                              // or refused for their size
};

// Checks the CFA program [p, end): each opcode and operand decoded, none
// run. set_loc_size: the bytes of a DW_CFA_set_loc operand (the FDE
// pointer encoding's; 0 for ULEB128). Returns "" or what is wrong.
std::string CheckCfaProgram(const uint8_t* p, const uint8_t* end, size_t set_loc_size);

// Screens the CFI libdw's dwarf_getcfi_elf would read from `elf` (Elf*):
// the .eh_frame section and the .eh_frame_hdr before it, as it finds them.
// Without an .eh_frame section header, nothing is present: libdw would
// then read from the PT_GNU_EH_FRAME segment to the end of the file, as
// large as the user makes it, so such an image has no table here.
// Sections over kMaxCfiSectionBytes, or together over max_bytes, are
// refused before they are read.
CfiScreen ScreenEhFrame(void* elf, uint64_t max_bytes);

// The same for a .debug_frame section's bytes (Elf_Data*) of `elf`; not
// present (not to be opened) unless `elf` is 64-bit.
CfiScreen ScreenDebugFrame(void* elf, void* data);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_UNWIND_CFI_SCREEN_H
