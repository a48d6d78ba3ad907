// dwarf_unwinder_test.cpp - the DWARF unwinder on this process's own stack:
// three procedures built without frame pointers, the innermost copying its
// registers and the top of its stack as perf would (PERF_SAMPLE_REGS_USER,
// PERF_SAMPLE_STACK_USER), unwound through this binary's real .eh_frame
// with its mappings from /proc/self/maps. And each reason a walk ends.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "libprofile/unwind/dwarf_unwinder.h"
#include "sanitizer.h"

using namespace lcpi;

#if defined(__x86_64__)
namespace {

struct Capture {
  UserRegs regs;
  std::vector<uint8_t> stack;
  uint64_t returns[2] = {};  // into level2 (from level3), into level1 (from level2)
};

// This process's executable file mappings, each its own image by path
// (kMappedIdentity: the file itself, no build-id check).
void MapSelf(UnwindSpace* r) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode >> path;
    if (perms.find('x') == std::string::npos) continue;
    UnwindMapping m;
    m.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    m.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    m.pgoff = std::stoull(offset, nullptr, 16);
    if (!path.empty() && path[0] == '/') {
      m.image = static_cast<int32_t>(r->images.size());
      r->images.push_back({std::string(kMappedIdentity) + path, path});
    }
    r->maps.push_back(m);
  }
}

// gcc builds these without a frame pointer; clang (the sanitizer tree) has
// no per-function optimize attribute, and the walk is given no frame
// pointer register either way, so only the unwind tables can lead.
#if defined(__clang__)
#define NO_FP __attribute__((noinline))
#else
#define NO_FP __attribute__((noinline, optimize("O2", "omit-frame-pointer")))
#endif

// The end of the stack that holds sp: a copy must stop there.
// Copies the raw stack as perf does, through whatever lies there: ASan's
// redzones included, which it must not check here.
__attribute__((no_sanitize("address"))) void CopyRawStack(void* to, const void* from, size_t n) {
  auto* d = static_cast<volatile unsigned char*>(to);
  auto* s = static_cast<const volatile unsigned char*>(from);
  for (size_t i = 0; i < n; i++) d[i] = s[i];
}

uint64_t StackEnd(uint64_t sp) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uint64_t start = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    uint64_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (sp >= start && sp < end) return end;
  }
  return sp;
}

NO_FP void level3(Capture* c) {
  c->returns[0] = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  uint64_t rip, rsp, rbx, r12, r13, r14, r15;
  asm volatile(
      "lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbx, %2\n\tmov %%r12, %3\n\t"
      "mov %%r13, %4\n\tmov %%r14, %5\n\tmov %%r15, %6"
      : "=r"(rip), "=r"(rsp), "=r"(rbx), "=r"(r12), "=r"(r13), "=r"(r14), "=r"(r15));
  // Not rbp: no frame pointer may lead the walk.
  c->regs.Set(16, rip);
  c->regs.Set(7, rsp);
  c->regs.Set(3, rbx);
  c->regs.Set(12, r12);
  c->regs.Set(13, r13);
  c->regs.Set(14, r14);
  c->regs.Set(15, r15);
  c->stack.resize(std::min<uint64_t>(8192, StackEnd(rsp) - rsp));
  CopyRawStack(c->stack.data(), reinterpret_cast<const void*>(rsp), c->stack.size());
}
NO_FP void level2(Capture* c) {
  c->returns[1] = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  level3(c);
  asm volatile("" ::: "memory");  // not a tail call
}
NO_FP void level1(Capture* c) {
  level2(c);
  asm volatile("" ::: "memory");
}

// The request perf's sample would make of level3's stack; `c`, when
// given, keeps the capture (its return addresses).
UnwindRequest Captured(Capture* c = nullptr) {
  Capture local;
  Capture& k = c ? *c : local;
  level1(&k);
  UnwindRequest r;
  r.regs = k.regs;
  r.stack = k.stack;
  auto space = std::make_shared<UnwindSpace>();
  MapSelf(space.get());
  r.space = std::move(space);
  return r;
}

// r's mappings, r's own to change (a copy of the shared snapshot).
UnwindSpace& Own(UnwindRequest& r) {
  auto own = std::make_shared<UnwindSpace>(*r.space);
  UnwindSpace& space = *own;
  r.space = std::move(own);
  return space;
}

Capture Returns() {
  Capture c;
  level1(&c);
  return c;
}

}  // namespace

TEST_CASE("a stack without frame pointers unwinds through the binary's .eh_frame") {
  // Under ASan this binary's own frames are not what its CFI describes to a
  // walk from a raw copy (instrumented frames, redzones): the walk itself
  // runs sanitized in lcpid's tests (stacks-known-answer).
  if (lcpi::testing::kAddressSanitizer) {
    WARN("skipped under AddressSanitizer");
    return;
  }
  Capture c;
  UnwindRequest r = Captured(&c);
  UnwindTables tables("");
  UnwindResult u = UnwindUserStack(r, tables);
  INFO("frames " << u.pcs.size() << ", end " << StackEndName(static_cast<uint8_t>(u.end)));
  REQUIRE(u.pcs.size() >= 4);
  CHECK(u.pcs[1] == c.returns[0]);  // level3's caller: level2
  CHECK(u.pcs[2] == c.returns[1]);  // level2's caller: level1
  CHECK(u.dwarf_frames >= 3);
  CHECK(u.fp_frames == 0);
  CHECK(tables.stats().held >= 1);
}

TEST_CASE("a walk that stops short says why") {
  // Under ASan this binary's own frames are not what its CFI describes to a
  // walk from a raw copy (instrumented frames, redzones): the walk itself
  // runs sanitized in lcpid's tests (stacks-known-answer).
  if (lcpi::testing::kAddressSanitizer) {
    WARN("skipped under AddressSanitizer");
    return;
  }
  UnwindTables tables("");
  SECTION("the copy ends before the caller's return address") {
    UnwindRequest r = Captured();
    r.stack.resize(8);
    CHECK(UnwindUserStack(r, tables).end == StackEnd::kStackCopyShort);
  }
  SECTION("an image without a file has no table, and no frame pointer leads on") {
    UnwindRequest r = Captured();
    for (UnwindImage& i : Own(r).images) i = {};
    UnwindResult u = UnwindUserStack(r, tables);
    CHECK(u.end == StackEnd::kNoUnwindTable);
    CHECK(u.pcs.size() == 1);
  }
  SECTION("anonymous executable memory is JIT code without frame information") {
    UnwindRequest r = Captured();
    for (UnwindMapping& m : Own(r).maps) m.image = -1;
    CHECK(UnwindUserStack(r, tables).end == StackEnd::kJitCode);
  }
  SECTION("a frame pointer leads on where there is no table") {
    // A frame of two words (saved fp, return address) at the copy's start.
    UnwindRequest r = Captured();
    for (UnwindImage& i : Own(r).images) i = {};
    const uint64_t sp = r.regs.value[kDwarfSp];
    const uint64_t ret = Returns().returns[1];
    const uint64_t saved_fp = 0;
    std::memcpy(r.stack.data(), &saved_fp, 8);
    std::memcpy(r.stack.data() + 8, &ret, 8);
    r.regs.Set(kDwarfFp, sp);
    UnwindResult u = UnwindUserStack(r, tables);
    REQUIRE(u.pcs.size() >= 2);
    CHECK(u.pcs[1] == ret);
    CHECK(u.fp_frames >= 1);
  }
  SECTION("a walk past its time budget ends there, with the frames found so far") {
    UnwindRequest r = Captured();
    r.deadline = std::chrono::steady_clock::now();  // spent before the first step
    UnwindResult u = UnwindUserStack(r, tables);
    CHECK(u.end == StackEnd::kBudget);
    CHECK(u.pcs.size() == 1);  // the sampled pc
    CHECK(StackEndName(static_cast<uint8_t>(u.end)) == "unwind budget");
  }
  SECTION("without a pc or sp there is no walk") {
    UnwindRequest r;
    CHECK(UnwindUserStack(r, tables).end == StackEnd::kUnwindFailed);
  }
}
#endif
