// dwarf_unwinder.cpp - the walk: a CFI step where the image has a table
// for the pc, a frame-pointer step elsewhere.
#include "libprofile/unwind/dwarf_unwinder.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace lcpi {
namespace {

// The registers the walk carries from frame to frame (DWARF numbers,
// x86-64): those the sample holds. The others are call-clobbered: no
// caller's CFA or saved register is computed from them.
constexpr int kTracked[] = {3, 6, 7, 12, 13, 14, 15, 16};

enum class Status { kOk, kShort, kFailed };

struct Walk {
  const UnwindRequest& request;
  const UnwindSpace& space;
  uint64_t sp0 = 0;  // the copy's first byte's address

  // 8 bytes of the copied stack at addr.
  Status Read(uint64_t addr, uint64_t* value) const {
    if (addr < sp0) return Status::kFailed;  // below the sampled sp: not a frame's
    if (addr - sp0 > request.stack.size() || request.stack.size() - (addr - sp0) < 8)
      return Status::kShort;
    std::memcpy(value, request.stack.data() + (addr - sp0), 8);
    return Status::kOk;
  }

  const UnwindMapping* Find(uint64_t pc) const {
    const auto& maps = space.maps;
    auto it = std::upper_bound(maps.begin(), maps.end(), pc,
                               [](uint64_t v, const UnwindMapping& m) { return v < m.start; });
    if (it == maps.begin()) return nullptr;
    --it;
    return pc < it->end ? &*it : nullptr;
  }
};

// Evaluates the DWARF expression libdw decoded from a CFI rule (the CFA's
// "register + offset", a saved register's "CFA + offset", the PLT's
// arithmetic on the pc) with the frame's registers: a small stack machine
// over libdw's ops, not a reader of the tables. An op it does not know
// fails the step.
Status Eval(const Walk& walk, const Dwarf_Op* ops, size_t nops, const UserRegs& regs,
            std::optional<uint64_t> cfa, uint64_t* out) {
  uint64_t stack[16];
  size_t depth = 0;
  auto push = [&](uint64_t v) {
    if (depth == std::size(stack)) return false;
    stack[depth++] = v;
    return true;
  };
  auto reg = [&](uint64_t n, uint64_t* v) {
    if (n >= static_cast<uint64_t>(kUnwindRegs) || !regs.Has(static_cast<int>(n))) return false;
    *v = regs.value[n];
    return true;
  };
  for (size_t i = 0; i < nops; i++) {
    const Dwarf_Op& op = ops[i];
    const uint8_t a = op.atom;
    uint64_t v = 0;
    if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
      if (!reg(a - DW_OP_breg0, &v) || !push(v + op.number)) return Status::kFailed;
    } else if (a == DW_OP_bregx) {
      if (!reg(op.number, &v) || !push(v + op.number2)) return Status::kFailed;
    } else if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
      if (!reg(a - DW_OP_reg0, &v) || !push(v)) return Status::kFailed;
    } else if (a == DW_OP_regx) {
      if (!reg(op.number, &v) || !push(v)) return Status::kFailed;
    } else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
      if (!push(a - DW_OP_lit0)) return Status::kFailed;
    } else if (a == DW_OP_call_frame_cfa) {
      if (!cfa || !push(*cfa)) return Status::kFailed;
    } else if (a == DW_OP_const1u || a == DW_OP_const1s || a == DW_OP_const2u ||
               a == DW_OP_const2s || a == DW_OP_const4u || a == DW_OP_const4s ||
               a == DW_OP_const8u || a == DW_OP_const8s || a == DW_OP_constu || a == DW_OP_consts) {
      if (!push(op.number)) return Status::kFailed;
    } else if (a == DW_OP_plus_uconst) {
      if (depth < 1) return Status::kFailed;
      stack[depth - 1] += op.number;
    } else if (a == DW_OP_deref) {
      if (depth < 1) return Status::kFailed;
      if (Status s = walk.Read(stack[depth - 1], &stack[depth - 1]); s != Status::kOk) return s;
    } else if (a == DW_OP_plus || a == DW_OP_minus || a == DW_OP_and || a == DW_OP_or ||
               a == DW_OP_shl || a == DW_OP_shr || a == DW_OP_ge || a == DW_OP_gt ||
               a == DW_OP_le || a == DW_OP_lt || a == DW_OP_eq || a == DW_OP_ne) {
      if (depth < 2) return Status::kFailed;
      const uint64_t y = stack[--depth], x = stack[depth - 1];
      const auto sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
      uint64_t& r = stack[depth - 1];
      switch (a) {
        case DW_OP_plus:
          r = x + y;
          break;
        case DW_OP_minus:
          r = x - y;
          break;
        case DW_OP_and:
          r = x & y;
          break;
        case DW_OP_or:
          r = x | y;
          break;
        case DW_OP_shl:
          r = y < 64 ? x << y : 0;
          break;
        case DW_OP_shr:
          r = y < 64 ? x >> y : 0;
          break;
        case DW_OP_ge:
          r = sx >= sy;
          break;
        case DW_OP_gt:
          r = sx > sy;
          break;
        case DW_OP_le:
          r = sx <= sy;
          break;
        case DW_OP_lt:
          r = sx < sy;
          break;
        case DW_OP_eq:
          r = x == y;
          break;
        default:
          r = x != y;
          break;
      }
    } else {
      return Status::kFailed;
    }
  }
  if (depth < 1) return Status::kFailed;
  *out = stack[depth - 1];
  return Status::kOk;
}

// One step through the CFI frame of the pc: the caller's registers in
// `next`. kShort: a saved register lies beyond the copy.
Status CfiStep(const Walk& walk, Dwarf_Frame* frame, const UserRegs& regs, UserRegs* next,
               bool* outermost) {
  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0) return Status::kFailed;
  uint64_t cfa = 0;
  if (Status s = Eval(walk, ops, nops, regs, std::nullopt, &cfa); s != Status::kOk) return s;
  const int ra = dwarf_frame_info(frame, nullptr, nullptr, nullptr);
  *next = {};
  for (int r : kTracked) {
    const int regno = r == kDwarfPc ? ra : r;
    if (regno < 0) continue;
    Dwarf_Op mem[3];
    if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0) continue;
    if (nops == 0) {
      if (ops == nullptr) {  // same value
        if (regs.Has(r)) next->Set(r, regs.value[r]);
      } else if (r == kDwarfSp) {  // the stack pointer's caller value is the CFA
        next->Set(r, cfa);
      }
      continue;
    }
    const bool value = ops[nops - 1].atom == DW_OP_stack_value;
    uint64_t v = 0;
    Status s = Eval(walk, ops, value ? nops - 1 : nops, regs, cfa, &v);
    if (s == Status::kOk && !value) s = walk.Read(v, &v);
    if (s == Status::kShort && r == kDwarfPc) return s;
    if (s == Status::kOk) next->Set(r, v);
  }
  if (!next->Has(kDwarfSp)) next->Set(kDwarfSp, cfa);
  *outermost = !next->Has(kDwarfPc);
  return Status::kOk;
}

// One step through a frame pointer: the caller's fp and return address
// saved at fp, its sp above them.
Status FpStep(const Walk& walk, const UserRegs& regs, UserRegs* next) {
  if (!regs.Has(kDwarfFp) || !regs.Has(kDwarfSp)) return Status::kFailed;
  const uint64_t fp = regs.value[kDwarfFp];
  if (fp < regs.value[kDwarfSp] || fp % 8) return Status::kFailed;
  uint64_t saved_fp = 0, ret = 0;
  if (Status s = walk.Read(fp, &saved_fp); s != Status::kOk) return s;
  if (Status s = walk.Read(fp + 8, &ret); s != Status::kOk) return s;
  *next = {};
  next->Set(kDwarfFp, saved_fp);
  next->Set(kDwarfSp, fp + 16);
  next->Set(kDwarfPc, ret);
  return Status::kOk;
}

}  // namespace

UnwindResult UnwindUserStack(const UnwindRequest& request, UnwindTables& tables) {
  UnwindResult out;
  UserRegs regs = request.regs;
  if (!regs.Has(kDwarfPc) || !regs.Has(kDwarfSp)) {
    out.end = StackEnd::kUnwindFailed;
    return out;
  }
  static const UnwindSpace kNoSpace;
  Walk walk{request, request.space ? *request.space : kNoSpace, regs.value[kDwarfSp]};
  out.pcs.push_back(regs.value[kDwarfPc]);
  const uint32_t max_frames = std::min<uint32_t>(request.max_frames, kMaxStackDepth);
  // Consecutive frames are mostly in one image: its tables are looked up
  // once for them.
  int32_t image_of_cfi = -1;
  std::shared_ptr<ImageCfi> cfi;
  for (;;) {
    if (out.pcs.size() >= max_frames) {
      out.end = StackEnd::kDepthCap;
      break;
    }
    if (std::chrono::steady_clock::now() >= request.deadline) {
      out.end = StackEnd::kBudget;
      break;
    }
    const uint64_t pc = regs.value[kDwarfPc];
    // A return address: its call is the instruction before it.
    const uint64_t at = out.pcs.size() == 1 ? pc : pc - 1;
    const UnwindMapping* m = walk.Find(at);
    if (!m) {
      out.end = StackEnd::kWalkEnded;
      break;
    }
    UserRegs next;
    bool outermost = false;
    std::optional<Status> step;  // unset: no table for the pc
    if (m->image >= 0 && static_cast<size_t>(m->image) < walk.space.images.size()) {
      const UnwindImage& image = walk.space.images[m->image];
      if (m->image != image_of_cfi) {
        cfi = image.identity.empty() ? nullptr : tables.Get(image.identity, image.path);
        image_of_cfi = m->image;
      }
      if (cfi && !cfi->refused.empty()) {
        out.end = StackEnd::kUnwindFailed;
        break;
      }
      if (cfi)
        if (std::optional<uint64_t> vaddr = cfi->VaddrOf(at - m->start + m->pgoff)) {
          std::lock_guard<std::mutex> lock(cfi->mutex);
          void* tables_of[2] = {cfi->eh_frame, cfi->debug_frame};
          for (int t = 0; t < 2 && !step; t++) {
            if (!tables_of[t]) continue;
            auto& cache = cfi->frames[t];
            auto hit = cache.find(*vaddr);
            if (hit == cache.end()) {
              Dwarf_Frame* frame = nullptr;
              if (dwarf_cfi_addrframe(static_cast<Dwarf_CFI*>(tables_of[t]), *vaddr, &frame) != 0)
                frame = nullptr;
              if (cache.size() >= ImageCfi::kMaxFrames) {
                for (auto& [addr, f] : cache) free(f);
                cfi->bytes -= cache.size() * ImageCfi::kFrameBytes;
                cache.clear();
              }
              hit = cache.emplace(*vaddr, frame).first;
              cfi->bytes += ImageCfi::kFrameBytes;
            }
            if (hit->second)
              step = CfiStep(walk, static_cast<Dwarf_Frame*>(hit->second), regs, &next, &outermost);
          }
        }
    }
    if (step) {
      if (*step == Status::kOk) out.dwarf_frames++;
    } else {
      step = FpStep(walk, regs, &next);
      if (*step == Status::kOk) {
        out.fp_frames++;
      } else if (*step == Status::kFailed) {
        out.end = m->image >= 0 ? StackEnd::kNoUnwindTable : StackEnd::kJitCode;
        break;
      }
    }
    if (*step == Status::kShort) {
      out.end = StackEnd::kStackCopyShort;
      break;
    }
    if (*step == Status::kFailed) {
      out.end = StackEnd::kUnwindFailed;
      break;
    }
    if (outermost || next.value[kDwarfPc] == 0) {
      out.end = StackEnd::kWalkEnded;
      break;
    }
    // Each caller's frame lies above its callee's: a step that does not
    // move up the stack would loop.
    if (next.value[kDwarfSp] <= regs.value[kDwarfSp]) {
      out.end = StackEnd::kUnwindFailed;
      break;
    }
    regs = next;
    // A return address outside every mapping ends the walk unrecorded: it
    // is any 8 bytes of the sampled stack (a stale slot, a local that a
    // frame pointer led to), which the database's readers must not see.
    if (!walk.Find(regs.value[kDwarfPc] - 1)) {
      out.end = StackEnd::kWalkEnded;
      break;
    }
    out.pcs.push_back(regs.value[kDwarfPc]);
  }
  return out;
}

}  // namespace lcpi
