// listing_code.cpp - lcpilist's instructions: the target's range
// disassembled by Capstone from the image on disk. When there is no code to
// read (a missing file, the kernel, a module, an unknown image) it says so
// and lists what it can: one "(no code)" line per sampled offset.
#include <capstone/capstone.h>

#include <cstdio>

#include "libprofile/report/listing_steps.h"

namespace lcpi::report {

namespace {

// Disassembles `bytes` at `vaddr`: one Instruction per decoded instruction;
// an undecodable byte becomes ".byte 0x..", and decoding resumes after it.
std::vector<Instruction> Disassemble(const std::vector<uint8_t>& bytes, uint64_t vaddr,
                                     uint64_t file_offset) {
  std::vector<Instruction> out;
  csh handle;
#if defined(__aarch64__)
  if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &handle) != CS_ERR_OK) return out;
#else
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) return out;
#endif
  cs_insn* insn = cs_malloc(handle);
  const uint8_t* code = bytes.data();
  size_t size = bytes.size();
  uint64_t address = vaddr;
  while (size > 0) {
    Instruction i;
    i.address = address;
    i.offset = file_offset + (address - vaddr);
    if (cs_disasm_iter(handle, &code, &size, &address, insn)) {
      i.size = insn->size;
      i.text = insn->mnemonic;
      if (insn->op_str[0]) i.text += std::string(" ") + insn->op_str;
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, ".byte 0x%02x", *code);
      i.size = 1;
      i.text = buf;
      ++code;
      --size;
      ++address;
    }
    out.push_back(std::move(i));
  }
  cs_free(insn, 1);
  cs_close(&handle);
  return out;
}

// At most this much code is read and disassembled for one listing: a
// symbol's size is whatever its file says (3 GiB made lcpilist allocate it
// whole and abort), and no real procedure is near it.
constexpr uint64_t kMaxListedCode = uint64_t{1} << 20;

}  // namespace

void ListCode(const ListingTarget& target, const CountsByOffset& counts, Listing* l) {
  const ImageInfo& image = target.image;
  const ElfImage* elf = target.symbols.elf();
  std::optional<uint64_t> vlo = elf ? elf->FileOffsetToVaddr(target.lo) : std::nullopt;
  if (elf && vlo) {
    l->lo = *vlo;
    l->hi = *vlo + (target.hi - target.lo);
    uint64_t len = target.hi - target.lo;
    if (len > kMaxListedCode) {
      l->warnings.push_back("the code listed is cut to its first " +
                            std::to_string(kMaxListedCode >> 20) + " MiB of " +
                            std::to_string(len) + " bytes (" + image.path +
                            "): samples past it are listed by offset only");
      len = kMaxListedCode;
    }
    auto bytes = elf->ReadBytes(*vlo, len);
    if (bytes) {
      l->instructions = Disassemble(*bytes, *vlo, target.lo);
      // Past the cut: each sampled offset, with no code.
      for (auto it = counts.lower_bound(target.lo + len); it != counts.end(); ++it) {
        if (it->first >= target.hi || l->instructions.empty()) break;
        Instruction i;
        i.address = l->lo + (it->first - target.lo);
        i.offset = it->first;
        i.size = 1;
        i.text = kNoCode;
        l->instructions.push_back(std::move(i));
      }
    } else {
      l->warnings.push_back("cannot read the code of " + image.path + ": " +
                            bytes.error().message());
    }
  } else {
    l->lo = target.lo;
    l->hi = target.hi;
    if (image.kind != ImageKind::kUser) {
      l->warnings.push_back("no code for " + image.path + " (" + ImageKindName(image.kind) +
                            " image): counts per offset only");
    }
  }
  if (!l->instructions.empty()) return;
  // What can be printed without the code: each sampled offset.
  for (const auto& [offset, c] : counts) {
    Instruction i;
    i.address = l->lo + (offset - target.lo);
    i.offset = offset;
    i.size = 1;
    i.text = kNoCode;
    l->instructions.push_back(std::move(i));
  }
}

}  // namespace lcpi::report
