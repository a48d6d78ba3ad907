// hostile_cfi_test.cpp - the DWARF unwinder against a user's own unwind
// tables and files (review of 2026-11-27): CFI naming a huge register or
// nesting remembered states (a shared object built here with gcc, its FDE
// carrying the rule through .cfi_escape), an image path through a planted
// symbolic link, and a walk's last value that lies outside every mapping.
#include <dlfcn.h>
#include <elf.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "libprofile/image/image_id.h"
#include "libprofile/unwind/dwarf_unwinder.h"
#include "test_files.h"

using namespace lcpi;

#if defined(__x86_64__)
namespace {

// ".cfi_escape" operands of a ULEB128 value.
std::string Uleb(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    s += "," + std::to_string(b);
  } while (v);
  return s;
}

// A shared object of one procedure `f` whose FDE carries `escape` (the
// operands of .cfi_escape) after its prologue.
std::string BuildObject(const testing::TempDir& dir, const std::string& escape) {
  const std::string src = dir / "hostile.c", so = dir / "hostile.so";
  testing::WriteFile(src,
                     "__attribute__((noinline)) int f(int x) {\n"
                     "  __asm__ volatile(\"nop\\n\\t.cfi_escape " +
                         escape +
                         "\\n\\tnop\");\n"
                         "  return x + 1;\n"
                         "}\n");
  testing::Run("cc -O1 -shared -fPIC -Wl,--build-id -o " + so + " " + src);
  return so;
}

long MaxRssKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A request whose sampled pc is the object's `f`, 2 bytes in (past the
// escape's nop), with a stack of zeros: the walk asks the tables for f's
// frame first.
UnwindRequest AtF(const std::string& so) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h != nullptr);
  void* f = dlsym(h, "f");
  REQUIRE(f != nullptr);
  Dl_info info{};
  REQUIRE(dladdr(f, &info) != 0);
  const uint64_t vaddr = reinterpret_cast<uint64_t>(f) - reinterpret_cast<uint64_t>(info.dli_fbase);
  dlclose(h);
  // The file's text lies at its vaddr (ld's layout of a shared object):
  // a mapping of the whole file at `base` puts f at base + vaddr.
  constexpr uint64_t base = 0x10000000;
  UnwindRequest r;
  auto space = std::make_shared<UnwindSpace>();
  space->maps.push_back({base, base + (uint64_t{16} << 20), 0, 0});
  space->images.push_back({std::string(kMappedIdentity) + so, so});
  r.space = std::move(space);
  r.regs.Set(kDwarfPc, base + vaddr + 2);
  r.regs.Set(kDwarfSp, 0x7ff000000000);
  r.regs.Set(kDwarfFp, 0);
  r.stack.assign(256, 0);
  return r;
}

// A shared object of one procedure `f` (nop; nop; lea; ret) whose
// .eh_frame is written here byte by byte: one CIE (`cie`: assembler lines
// from the augmentation string on) and one FDE for f (`fde`: assembler
// lines after its CIE pointer, where @F@ is f's address, known after a
// first link; the second has the same layout). No .eh_frame_hdr: ld
// cannot parse what these say.
std::string BuildHandCfi(const testing::TempDir& dir, const std::string& cie,
                         const std::string& fde) {
  const std::string src = dir / "hand.s", so = dir / "hand.so";
  auto build = [&](const std::string& f_address) {
    std::string body = fde;
    for (size_t at; (at = body.find("@F@")) != std::string::npos;) body.replace(at, 3, f_address);
    testing::WriteFile(src,
                       "  .text\n  .globl f\n  .type f,@function\nf:\n.Lf:\n  nop\n  nop\n"
                       "  leal 1(%rdi),%eax\n  ret\n.Lf_end:\n  .size f, .-f\n"
                       "  .section .eh_frame,\"a\",@progbits\n.Lcie:\n"
                       "  .long .Lcie_end - .Lcie_start\n.Lcie_start:\n  .long 0\n  .byte 1\n" +
                           cie +
                           "\n.Lcie_end:\n  .long .Lfde_end - .Lfde_start\n.Lfde_start:\n"
                           "  .long .Lfde_start - .Lcie\n" +
                           body + "\n.Lfde_end:\n");
    testing::Run("cc -shared -nostdlib -Wl,--build-id -Wl,--no-eh-frame-hdr -o " + so + " " + src +
                 " 2>/dev/null");
  };
  build("0");
  const std::string nm = dir / "nm.txt";
  testing::Run("nm " + so + " | awk '$3 == \"f\" { print \"0x\" $1 }' > " + nm);
  std::string f_address = testing::ReadFile(nm);
  while (!f_address.empty() && f_address.back() == '\n') f_address.pop_back();
  REQUIRE(f_address.size() > 2);
  build(f_address);
  return so;
}

// f's FDE read two ways. libdw, with `width`-byte pointers (`directive`
// .short or .long, f's `location` as it reads it): augmentation length 0,
// then DW_CFA_offset_extended 20,000,000 (160 MB of frame). A reader that
// takes 8-byte pointers finds its augmentation length (0) at byte 16, and
// nops after it.
std::string TwoWayFde(const std::string& directive, const std::string& location, int width) {
  std::string fde = "  " + directive + " " + location + "\n  " + directive +
                    " .Lf_end - .Lf\n  .byte 0, 0x05" + Uleb(20'000'000) + ",0";
  for (int i = 2 * width + 7; i < 20; i++) fde += ",0";
  return fde;
}

// Walks from f in a child and says how it went: 0 when the walk did not
// grow the peak RSS past 32 MiB and the image's CFI was refused.
int RefusedWithoutGrowth(const UnwindRequest& r) {
  return testing::ExitStatusWithin(60, [&] {
    const long before = MaxRssKiB();
    UnwindTables tables("");
    UnwindResult u = UnwindUserStack(r, tables);
    const long grown = MaxRssKiB() - before;
    std::shared_ptr<ImageCfi> cfi =
        tables.Get(r.space->images[0].identity, r.space->images[0].path);
    std::fprintf(stderr, "peak RSS grew %ld KiB, end %s, refused %llu: %s\n", grown,
                 StackEndName(static_cast<uint8_t>(u.end)).c_str(),
                 static_cast<unsigned long long>(tables.stats().cfi_refused),
                 cfi ? cfi->refused.c_str() : "no tables");
    if (grown > 32 * 1024) return 1;
    if (tables.stats().cfi_refused != 1) return 3;
    return 0;
  });
}

}  // namespace

TEST_CASE("CFI naming a huge register is refused before libdw allocates for it") {
  testing::TempDir dir;
  // DW_CFA_offset_extended 20,000,000, 0: libdw sizes a frame for every
  // register up to the one named, 8 bytes each (160 MB here; 2 GiB at
  // 268,000,000), and touches it all.
  const std::string so = BuildObject(dir, "0x05" + Uleb(20'000'000) + ",0");
  UnwindRequest r = AtF(so);
  // In a child: its peak RSS says what the walk allocated and touched.
  const int status = testing::ExitStatusWithin(60, [&] {
    const long before = MaxRssKiB();
    UnwindTables tables("");
    UnwindResult u = UnwindUserStack(r, tables);
    const long grown = MaxRssKiB() - before;
    std::fprintf(stderr, "peak RSS grew %ld KiB, end %s, refused %llu\n", grown,
                 StackEndName(static_cast<uint8_t>(u.end)).c_str(),
                 static_cast<unsigned long long>(tables.stats().cfi_refused));
    if (grown > 32 * 1024) return 1;
    if (u.end != StackEnd::kUnwindFailed || u.pcs.size() != 1) return 2;
    if (tables.stats().cfi_refused != 1) return 3;
    return 0;
  });
  CHECK(status == 0);
}

TEST_CASE("a CIE augmentation libdw reads past its data is refused (zBR, empty data)") {
  // 'B' is a letter libdw's CIE reader skips under 'z', so it takes 'R'
  // from the first instruction byte (0x0a: sdata2, 2-byte pointers; as an
  // opcode DW_CFA_remember_state). Read as the data says (none), the FDE
  // pointers are 8 bytes: the two readers start the FDE's program at
  // different bytes.
  testing::TempDir dir;
  const std::string so =
      BuildHandCfi(dir, "  .asciz \"zBR\"\n  .byte 1, 0x78, 16, 0, 0x0a, 0x0c,7,8, 0x90,1",
                   TwoWayFde(".short", "@F@", 2));
  CHECK(RefusedWithoutGrowth(AtF(so)) == 0);
}

TEST_CASE("a ULEB128 personality pointer in a CIE is refused (zPR)") {
  // Personality encoding DW_EH_PE_uleb128, then 83 1b 00: libdw's size of
  // a ULEB128 there is 1 (it stops at the first byte that continues), so it
  // reads R = 0x1b (pc-relative sdata4); the ULEB128's own 2 bytes put R at
  // 00 (absptr, 8 bytes).
  testing::TempDir dir;
  const std::string so = BuildHandCfi(
      dir, "  .asciz \"zPR\"\n  .byte 1, 0x78, 16, 4, 0x01,0x83,0x1b,0x00, 0x0c,7,8, 0x90,1",
      TwoWayFde(".long", ".Lf - .", 4));
  CHECK(RefusedWithoutGrowth(AtF(so)) == 0);
}

// The tables of a hand-made image whose CIE is an ordinary "zR"
// (pc-relative sdata4 pointers, as every linker writes) and whose FDE for
// f is `fde`.
std::shared_ptr<ImageCfi> OpenWithZrCie(const testing::TempDir& dir, const std::string& fde,
                                        UnwindTables& tables) {
  const std::string so =
      BuildHandCfi(dir, "  .asciz \"zR\"\n  .byte 1, 0x78, 16, 1, 0x1b, 0x0c,7,8, 0x90,1", fde);
  return tables.Get(std::string(kMappedIdentity) + so, so);
}

TEST_CASE("an ordinary hand-made CIE (zR) is not refused") {
  // The same layout with the letters libdw and the screen read alike.
  testing::TempDir dir;
  UnwindTables tables("");
  std::shared_ptr<ImageCfi> cfi =
      OpenWithZrCie(dir, "  .long .Lf - .\n  .long .Lf_end - .Lf\n  .byte 0, 0,0,0", tables);
  REQUIRE(cfi != nullptr);
  CHECK(cfi->refused.empty());
  CHECK(cfi->eh_frame != nullptr);
}

TEST_CASE("an FDE too short for its pointers is refused, not passed unchecked") {
  // libdw reads an FDE's pointers up to the section's end, not the FDE's:
  // it would go on into the next entry's bytes.
  testing::TempDir dir;
  UnwindTables tables("");
  std::shared_ptr<ImageCfi> cfi = OpenWithZrCie(dir, "  .long .Lf - .\n  .short 6", tables);
  REQUIRE(cfi != nullptr);
  CHECK(cfi->refused == "FDE cut short");
  CHECK(tables.stats().cfi_refused == 1);
}

TEST_CASE("a 32-bit image's tables are refused before libdw reads them") {
  // No .eh_frame content: its .debug_frame (gcc -g without unwind tables)
  // would go to libdw, and names register 20,000,000.
  testing::TempDir dir;
  const std::string src = dir / "x32.c", so = dir / "x32.so";
  testing::WriteFile(src, "int f(int x) {\n  __asm__ volatile(\"nop\\n\\t.cfi_escape 0x05" +
                              Uleb(20'000'000) + ",0\\n\\tnop\");\n  return x + 1;\n}\n");
  if (std::system(("cc -m32 -g -fno-asynchronous-unwind-tables -shared -nostdlib "
                   "-Wl,--build-id -o " +
                   so + " " + src + " 2>/dev/null")
                      .c_str()) != 0) {
    WARN("skipped: cc -m32 cannot build here");
    return;
  }
  UnwindTables tables("");
  std::shared_ptr<ImageCfi> cfi = tables.Get(std::string(kMappedIdentity) + so, so);
  CHECK((cfi == nullptr || !cfi->refused.empty()));
  if (cfi) {
    CHECK(cfi->debug_frame == nullptr);
    CHECK(cfi->elf == nullptr);
  }
  CHECK(tables.stats().cfi_refused == 1);
  CHECK(tables.stats().bytes == 0);
}

// Sets the size of `so`'s section `name` in its section header to `size`
// and makes the file (sparsely) long enough to hold it.
void ClaimSectionSize(const std::string& so, const char* name, uint64_t size) {
  std::fstream f(so, std::ios::in | std::ios::out | std::ios::binary);
  Elf64_Ehdr eh{};
  f.read(reinterpret_cast<char*>(&eh), sizeof eh);
  REQUIRE(f.good());
  auto shdr = [&](size_t i) {
    Elf64_Shdr sh{};
    f.seekg(static_cast<std::streamoff>(eh.e_shoff + i * sizeof sh));
    f.read(reinterpret_cast<char*>(&sh), sizeof sh);
    return sh;
  };
  const Elf64_Shdr strtab = shdr(eh.e_shstrndx);
  for (size_t i = 1; i < eh.e_shnum; i++) {
    Elf64_Shdr sh = shdr(i);
    char buf[32] = {};
    f.seekg(static_cast<std::streamoff>(strtab.sh_offset + sh.sh_name));
    f.read(buf, sizeof buf - 1);
    if (std::strcmp(buf, name) != 0) continue;
    sh.sh_size = size;
    f.seekp(static_cast<std::streamoff>(eh.e_shoff + i * sizeof sh));
    f.write(reinterpret_cast<const char*>(&sh), sizeof sh);
    f.close();
    REQUIRE(truncate(so.c_str(), static_cast<off_t>(sh.sh_offset + size)) == 0);
    return;
  }
  FAIL("no section " << name);
}

TEST_CASE("an .eh_frame whose header claims a huge size is refused unread") {
  if (testing::kAddressSanitizer) {
    WARN("skipped under AddressSanitizer: its allocator's RSS is not the walk's");
    return;
  }
  testing::TempDir dir;
  const std::string so = BuildObject(dir, "0x00");
  // 256 MiB of .eh_frame: the file is sparse, so it costs no disk; read,
  // it is 256 MiB of lcpid's heap.
  ClaimSectionSize(so, ".eh_frame", uint64_t{256} << 20);
  const int status = testing::ExitStatusWithin(60, [&] {
    const long before = MaxRssKiB();
    UnwindTables tables("");
    std::shared_ptr<ImageCfi> cfi = tables.Get(std::string(kMappedIdentity) + so, so);
    const long grown = MaxRssKiB() - before;
    const UnwindTableStats s = tables.stats();
    std::fprintf(stderr, "peak RSS grew %ld KiB, refused %llu, bytes held %llu\n", grown,
                 static_cast<unsigned long long>(s.cfi_refused),
                 static_cast<unsigned long long>(s.bytes));
    if (grown > 32 * 1024) return 1;
    if (s.cfi_refused != 1) return 2;
    if (s.bytes != 0) return 3;     // a refused image counts nothing
    if (cfi && cfi->elf) return 4;  // and holds nothing
    return 0;
  });
  CHECK(status == 0);
}

TEST_CASE("an image bigger than the byte cap is refused, not kept by evicting the rest") {
  testing::TempDir dir;
  const std::string a = BuildObject(dir, "0x00"), b = dir / "b.so";
  std::filesystem::copy_file(a, b);
  uint64_t one = 0;
  {
    UnwindTables tables("");
    REQUIRE(tables.Get(std::string(kMappedIdentity) + a, a) != nullptr);
    one = tables.stats().bytes;
  }
  // Room for half of one: the first is refused, and so is the second,
  // neither evicting the other.
  UnwindTables tables("", one / 2);
  tables.Get(std::string(kMappedIdentity) + a, a);
  tables.Get(std::string(kMappedIdentity) + b, b);
  const UnwindTableStats s = tables.stats();
  CHECK(s.bytes <= one / 2);
  CHECK(s.evicted == 0);
  CHECK(s.cfi_refused == 2);
}

TEST_CASE("CFI nesting remembered states past the bound is refused") {
  testing::TempDir dir;
  std::string escape = "0x0a";  // DW_CFA_remember_state, 9 deep, then undone
  for (int i = 1; i < 9; i++) escape += ",0x0a";
  for (int i = 0; i < 9; i++) escape += ",0x0b";
  UnwindRequest r = AtF(BuildObject(dir, escape));
  UnwindTables tables("");
  UnwindResult u = UnwindUserStack(r, tables);
  CHECK(u.end == StackEnd::kUnwindFailed);
  CHECK(tables.stats().cfi_refused == 1);
}

TEST_CASE("ordinary CFI in the same shape is not refused") {
  testing::TempDir dir;
  // 8 nested states and a register libdw sizes nothing for: the bounds'
  // edge, as compilers never reach it.
  std::string escape = "0x0a";
  for (int i = 1; i < 8; i++) escape += ",0x0a";
  for (int i = 0; i < 8; i++) escape += ",0x0b";
  escape += ",0x05" + Uleb(127) + ",0";
  UnwindRequest r = AtF(BuildObject(dir, escape));
  UnwindTables tables("");
  UnwindResult u = UnwindUserStack(r, tables);
  CHECK(tables.stats().cfi_refused == 0);
  CHECK(u.dwarf_frames >= 1);
}

TEST_CASE("an image path through a symbolic link is not opened") {
  testing::TempDir dir;
  const std::string so = BuildObject(dir, "0x00");  // DW_CFA_nop
  Expected<ImageIdentity> id = IdentifyElfFile(so);
  REQUIRE(id);
  REQUIRE(!id->build_id.empty());
  const std::string identity = "build-id:" + id->build_id;
  std::filesystem::create_symlink(so, dir / "link.so");
  std::filesystem::create_directory(dir / "real");
  std::filesystem::copy_file(so, dir / "real/x.so");
  std::filesystem::create_directory_symlink(dir / "real", dir / "linkdir");
  {
    UnwindTables tables("");
    CHECK(tables.Get(identity, so) != nullptr);  // the file itself opens
  }
  {
    UnwindTables tables("");
    CHECK(tables.Get(identity, dir / "link.so") == nullptr);
  }
  {
    UnwindTables tables("");
    CHECK(tables.Get(identity, dir / "linkdir/x.so") == nullptr);
  }
}

TEST_CASE("a walk that reaches an unmapped return address does not keep it") {
  // Anonymous code (no table) with a frame pointer whose saved return
  // address is any 8 bytes: outside every mapping.
  UnwindRequest r;
  auto space = std::make_shared<UnwindSpace>();
  space->maps.push_back({0x1000, 0x2000, 0, -1});
  r.space = std::move(space);
  const uint64_t sp = 0x7ff000000000;
  r.regs.Set(kDwarfPc, 0x1800);
  r.regs.Set(kDwarfSp, sp);
  r.regs.Set(kDwarfFp, sp);
  r.stack.assign(64, 0);
  const uint64_t secret = 0x4141414141414141;
  std::memcpy(r.stack.data() + 8, &secret, 8);
  UnwindTables tables("");
  UnwindResult u = UnwindUserStack(r, tables);
  CHECK(u.end == StackEnd::kWalkEnded);
  CHECK(u.fp_frames == 1);
  for (uint64_t pc : u.pcs) CHECK(pc != secret);
  CHECK(u.pcs.size() == 1);
}

TEST_CASE("the system's own images are not refused") {
  // The bounds sit far above what compilers emit: cc1plus has the longest
  // FDE program here (20 KiB), LLVM the most FDEs.
  int looked = 0;
  for (const char* path :
       {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/lib/x86_64-linux-gnu/libLLVM-14.0.6.so.1", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus",
        "/usr/bin/python3.11", "/proc/self/exe"}) {
    if (!std::filesystem::exists(path)) continue;
    const std::string file = std::filesystem::canonical(path).string();
    UnwindTables tables("");
    INFO(file);
    CHECK(tables.Get(std::string(kMappedIdentity) + file, file) != nullptr);
    CHECK(tables.stats().cfi_refused == 0);
    looked++;
  }
  CHECK(looked >= 2);
}

TEST_CASE("a compressed debug section is not expanded to reach the unwind tables") {
  if (testing::kAddressSanitizer) {
    WARN("skipped under AddressSanitizer: its allocator's RSS is not the walk's");
    return;
  }
  testing::TempDir dir;
  const std::string so = BuildObject(dir, "0x00"), bomb = dir / "bomb.so";
  // 64 MiB of zeros as .debug_info, zlib-compressed to a few dozen KiB.
  testing::Run("head -c 67108864 /dev/zero > " + (dir / "zeros") +
               " && objcopy --add-section .debug_info=" + (dir / "zeros") +
               " --compress-debug-sections=zlib " + so + " " + bomb);
  const int status = testing::ExitStatusWithin(60, [&] {
    const long before = MaxRssKiB();
    UnwindTables tables("");
    const bool opened = tables.Get(std::string(kMappedIdentity) + bomb, bomb) != nullptr;
    const long grown = MaxRssKiB() - before;
    std::fprintf(stderr, "peak RSS grew %ld KiB, bytes held %llu\n", grown,
                 static_cast<unsigned long long>(tables.stats().bytes));
    if (!opened) return 1;
    if (grown > 16 * 1024) return 2;
    if (tables.stats().bytes == 0 || tables.stats().bytes > (1u << 20)) return 3;
    return 0;
  });
  CHECK(status == 0);
}

TEST_CASE("the tables are bounded by the bytes they hold") {
  testing::TempDir dir;
  std::vector<std::string> images;
  for (int i = 0; i < 3; i++) {
    const std::string so = BuildObject(dir, "0x00"), copy = dir / ("x" + std::to_string(i) + ".so");
    std::filesystem::copy_file(so, copy);
    images.push_back(copy);
  }
  uint64_t one = 0;
  {
    UnwindTables tables("");
    REQUIRE(tables.Get(std::string(kMappedIdentity) + images[0], images[0]) != nullptr);
    one = tables.stats().bytes;
    REQUIRE(one > 0);
  }
  // Room for two of them: the third lets the least recently used go.
  UnwindTables tables("", 2 * one + one / 2);
  for (const std::string& so : images)
    CHECK(tables.Get(std::string(kMappedIdentity) + so, so) != nullptr);
  const UnwindTableStats s = tables.stats();
  CHECK(s.held == 2);
  CHECK(s.evicted == 1);
  CHECK(s.bytes <= 2 * one + one / 2);
}
#endif
