// elf_symbols_test.cpp - ElfImage against real binaries built by the test
// itself: PIE and non-PIE executables, with and without -g, a shared library,
// stripped copies; symbols checked against nm, offsets against a live dlopen
// mapping, source lines against the lines of the C file written here; and
// corrupt inputs, which must give clean errors and never crash.
#include <dlfcn.h>
#include <elf.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "libprofile/image/elf_symbols.h"
#include "test_files.h"

namespace {

using lcpi::ElfImage;
using lcpi::Errc;

// Line numbers matter: alpha is lines 3-6, beta 8-12, main 14-18.
constexpr const char* kProgram = R"(#include <stdio.h>

__attribute__((noinline)) int alpha(int x) {
  int y = x * 3;
  return y + 1;
}

__attribute__((noinline)) int beta(int x) {
  int s = 0;
  for (int i = 0; i < x; i++) s += alpha(i);
  return s;
}

int main(int argc, char** argv) {
  (void)argv;
  printf("%d\n", beta(argc));
  return 0;
}
)";

using lcpi::testing::ReadFile;
using lcpi::testing::Run;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

// Compiles kProgram (or the library variant) with `flags` into dir/out.
std::string Build(const TempDir& dir, const std::string& out, const std::string& flags) {
  const std::string src = dir / "prog.c";
  WriteFile(src, kProgram);
  const std::string bin = dir / out;
  Run("cc -O0 " + flags + " -o " + bin + " " + src);
  return bin;
}

// Defined function symbols as nm sees them: the independent oracle.
std::map<std::string, uint64_t> Nm(const std::string& bin, bool dynamic) {
  const std::string out = bin + ".nm";
  Run(std::string("nm ") + (dynamic ? "-D " : "") + "--defined-only " + bin + " > " + out);
  std::map<std::string, uint64_t> syms;
  std::ifstream in(out);
  std::string addr, type, name;
  while (in >> addr >> type >> name) {
    if (type == "T" || type == "t") syms[name] = std::stoull(addr, nullptr, 16);
  }
  return syms;
}

std::unique_ptr<ElfImage> OpenOk(const std::string& path,
                                 const std::string& debug_root = "/usr/lib/debug") {
  auto image = ElfImage::Open(path, debug_root);
  INFO(path << ": " << (image ? "" : image.error().ToString()));
  REQUIRE(image.has_value());
  return std::move(*image);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Checks one function: name and range agree with nm, lookups at its start,
// inside and at its last byte, and the offset <-> address round trip.
void CheckFunction(const ElfImage& image, const std::map<std::string, uint64_t>& nm,
                   const std::string& name) {
  INFO("function " << name);
  REQUIRE(nm.count(name) == 1);
  auto sym = image.Symbol(name);
  REQUIRE(sym.has_value());
  CHECK(sym->addr == nm.at(name));
  REQUIRE(sym->size > 5);
  CHECK(sym->end == sym->addr + sym->size);

  for (uint64_t delta : {uint64_t{0}, uint64_t{5}, sym->size - 1}) {
    auto hit = image.Lookup(sym->addr + delta);
    REQUIRE(hit.has_value());
    CHECK(hit->symbol->name == name);
    CHECK(hit->offset == delta);

    auto off = image.VaddrToFileOffset(sym->addr + delta);
    REQUIRE(off.has_value());
    CHECK(image.FileOffsetToVaddr(*off) == sym->addr + delta);
    auto by_off = image.LookupFileOffset(*off);
    REQUIRE(by_off.has_value());
    CHECK(by_off->symbol->name == name);
    CHECK(by_off->offset == delta);
  }
}

}  // namespace

TEST_CASE("PIE and non-PIE executables with -g: symbols, offsets and source lines") {
  TempDir dir;
  struct Variant {
    const char* name;
    const char* flags;
    uint16_t type;
  };
  for (const Variant& v : {Variant{"pie", "-g -fPIE -pie", ET_DYN},
                           Variant{"nopie", "-g -fno-pie -no-pie", ET_EXEC}}) {
    SECTION(v.name) {
      const std::string bin = Build(dir, v.name, v.flags);
      auto image = OpenOk(bin);
      CHECK(image->elf_type() == v.type);
      CHECK(image->symbol_table() == "symtab");
      CHECK_FALSE(image->build_id().empty());  // Debian's gcc passes --build-id
      auto nm = Nm(bin, false);
      for (const char* fn : {"alpha", "beta", "main"}) CheckFunction(*image, nm, fn);

      // Symbols are sorted and each covers a non-empty range.
      const auto& syms = image->symbols();
      for (size_t i = 0; i < syms.size(); ++i) {
        CHECK(syms[i].end > syms[i].addr);
        if (i > 0) CHECK(syms[i - 1].addr < syms[i].addr);
      }

      if (v.type == ET_EXEC) {
        // Non-PIE code is linked at 0x400000 and up: offsets differ from addresses.
        auto alpha = image->Symbol("alpha");
        CHECK(image->VaddrToFileOffset(alpha->addr) != alpha->addr);
      }

      // Every byte of alpha maps to a line of alpha in prog.c; its first
      // instruction to the line with its name. Likewise beta.
      struct Fn {
        const char* name;
        int first, last;
      };
      for (const Fn& fn : {Fn{"alpha", 3, 6}, Fn{"beta", 8, 12}}) {
        INFO(fn.name);
        auto sym = image->Symbol(fn.name);
        REQUIRE(sym.has_value());
        auto entry = image->SourceLine(sym->addr);
        REQUIRE(entry.has_value());
        CHECK(EndsWith(entry->file, "prog.c"));
        CHECK(entry->line == fn.first);
        for (uint64_t a = sym->addr; a < sym->end; ++a) {
          auto loc = image->SourceLine(a);
          REQUIRE(loc.has_value());
          CHECK(loc->line >= fn.first);
          CHECK(loc->line <= fn.last);
        }
      }

      // Outside every function and every segment: no answers, no crash.
      CHECK_FALSE(image->Lookup(0xfffffffffffff000ULL).has_value());
      CHECK_FALSE(image->FileOffsetToVaddr(1ULL << 40).has_value());
      CHECK_FALSE(image->VaddrToFileOffset(0xfffffffffffff000ULL).has_value());
      CHECK_FALSE(image->SourceLine(0xfffffffffffff000ULL).has_value());
      auto missing = image->Symbol("no_such_function");
      REQUIRE_FALSE(missing.has_value());
      CHECK(missing.error().code() == Errc::kNotFound);
    }
  }
}

TEST_CASE("the tools never wait on a FIFO named as an image") {
  TempDir dir;
  const std::string fifo = dir / "prog";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  int status = lcpi::testing::ExitStatusWithin(10, [&] {
    auto image = ElfImage::Open(fifo);
    return !image && image.error().code() == Errc::kBadElf ? 0 : 1;
  });
  CHECK(status == 0);
}

TEST_CASE("without -g there are symbols but no source lines") {
  TempDir dir;
  const std::string bin = Build(dir, "nodebug", "-fPIE -pie");
  auto image = OpenOk(bin);
  CHECK(image->symbol_table() == "symtab");
  auto nm = Nm(bin, false);
  CheckFunction(*image, nm, "alpha");
  auto alpha = image->Symbol("alpha");
  CHECK_FALSE(image->SourceLine(alpha->addr).has_value());
}

TEST_CASE("a shared library, and its stripped copy through .dynsym") {
  TempDir dir;
  const std::string lib = Build(dir, "libab.so", "-g -shared -fPIC");
  const std::string stripped = dir / "libab-stripped.so";
  Run("cp " + lib + " " + stripped + " && strip --strip-all " + stripped);

  auto full = OpenOk(lib);
  CHECK(full->elf_type() == ET_DYN);
  CHECK(full->symbol_table() == "symtab");
  auto nm = Nm(lib, false);
  CheckFunction(*full, nm, "alpha");
  CheckFunction(*full, nm, "beta");

  auto bare = OpenOk(stripped);
  CHECK(bare->symbol_table() == "dynsym");
  auto dyn = Nm(stripped, true);
  CheckFunction(*bare, dyn, "alpha");
  CheckFunction(*bare, dyn, "beta");
  CHECK(bare->Symbol("alpha")->addr == full->Symbol("alpha")->addr);
  CHECK_FALSE(bare->SourceLine(bare->Symbol("alpha")->addr).has_value());
  // strip keeps the build-id note: the stripped copy is the same image.
  CHECK(bare->build_id() == full->build_id());
}

TEST_CASE("a stripped non-PIE executable has no function symbols") {
  TempDir dir;
  const std::string bin = Build(dir, "bare", "-fno-pie -no-pie");
  Run("strip --strip-all " + bin);
  auto image = OpenOk(bin);
  CHECK(image->symbol_table() == "none");
  CHECK(image->symbols().empty());
  CHECK_FALSE(image->Lookup(0x401000).has_value());
  CHECK(image->Symbol("main").error().code() == Errc::kNotFound);
  // The segments are still there: offsets still map to addresses.
  REQUIRE_FALSE(image->segments().empty());
  CHECK(image->FileOffsetToVaddr(image->segments()[0].offset).has_value());
}

TEST_CASE("a stripped file's functions come back from MiniDebugInfo or a debug file") {
  TempDir dir;
  const std::string full = Build(dir, "full", "-fno-pie -no-pie -Wl,--build-id");
  auto reference = OpenOk(full);
  auto alpha = reference->Symbol("alpha");
  REQUIRE(alpha);

  SECTION("MiniDebugInfo: an xz-compressed symbol file in .gnu_debugdata") {
    const std::string mini = dir / "mini", bin = dir / "with_mini";
    Run("objcopy --only-keep-debug " + full + " " + mini + " && xz " + mini);
    Run("strip --strip-all -o " + bin + " " + full);
    Run("objcopy --add-section .gnu_debugdata=" + mini + ".xz " + bin);
    auto image = OpenOk(bin, "");
    CHECK(image->symbol_table() == "minidebuginfo");
    auto hit = image->Lookup(alpha->addr + 2);
    REQUIRE(hit);
    CHECK(hit->symbol->name == "alpha");
  }
  SECTION("a separate debug file found by build-id under the debug root") {
    const std::string bin = dir / "stripped", id = reference->build_id();
    REQUIRE(id.size() > 2);
    Run("mkdir -p " + (dir / "debug/.build-id/") + id.substr(0, 2));
    Run("objcopy --only-keep-debug " + full + " " + (dir / "debug/.build-id/") + id.substr(0, 2) +
        "/" + id.substr(2) + ".debug");
    Run("strip --strip-all -o " + bin + " " + full);
    CHECK(OpenOk(bin, "")->symbol_table() == "none");  // no debug root: nothing
    auto image = OpenOk(bin, dir / "debug");
    CHECK(image->symbol_table() == "debug-file");
    auto hit = image->Lookup(alpha->addr + 2);
    REQUIRE(hit);
    CHECK(hit->symbol->name == "alpha");
  }
}

TEST_CASE("the daemon's offset (pc - map_start + map_pgoff) of a live mapping symbolizes") {
  TempDir dir;
  const std::string lib = Build(dir, "liblive.so", "-shared -fPIC");
  void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO(dlerror());
  REQUIRE(handle != nullptr);
  auto image = OpenOk(lib);

  for (const char* fn : {"alpha", "beta"}) {
    INFO(fn);
    void* p = dlsym(handle, fn);
    REQUIRE(p != nullptr);
    uint64_t pc = reinterpret_cast<uint64_t>(p) + 3;
    // Find the mapping holding pc, as the daemon would from MMAP2 records.
    std::ifstream maps("/proc/self/maps");
    std::string line;
    bool found = false;
    while (std::getline(maps, line)) {
      uint64_t start = 0, end = 0, pgoff = 0;
      if (std::sscanf(line.c_str(), "%lx-%lx %*s %lx", &start, &end, &pgoff) != 3) continue;
      if (pc < start || pc >= end) continue;
      found = true;
      uint64_t offset = pc - start + pgoff;
      auto hit = image->LookupFileOffset(offset);
      REQUIRE(hit.has_value());
      CHECK(hit->symbol->name == fn);
      CHECK(hit->offset == 3);
    }
    CHECK(found);
  }
  dlclose(handle);
}

TEST_CASE("ReadBytes returns the file's bytes of a function and refuses bad ranges") {
  TempDir dir;
  const std::string bin = Build(dir, "bytes", "-fno-pie -no-pie");
  auto image = OpenOk(bin);
  auto alpha = image->Symbol("alpha");
  REQUIRE(alpha.has_value());
  auto bytes = image->ReadBytes(alpha->addr, alpha->size);
  REQUIRE(bytes.has_value());
  REQUIRE(bytes->size() == alpha->size);
  const std::string file = ReadFile(bin);
  uint64_t off = *image->VaddrToFileOffset(alpha->addr);
  CHECK(std::string(bytes->begin(), bytes->end()) == file.substr(off, alpha->size));

  auto empty = image->ReadBytes(alpha->addr, 0);
  REQUIRE(empty.has_value());
  CHECK(empty->empty());
  CHECK(image->ReadBytes(alpha->addr, 1 << 30).error().code() == Errc::kInvalidArgument);
  CHECK(image->ReadBytes(0xfffffffffffff000ULL, 4).error().code() == Errc::kInvalidArgument);
}

TEST_CASE("Open rejects what is not a usable ELF image with a specific error") {
  TempDir dir;
  const std::string good = Build(dir, "good", "-g");
  const std::string content = ReadFile(good);

  CHECK(ElfImage::Open(dir / "missing").error().code() == Errc::kNotFound);
  WriteFile(dir / "empty", "");
  CHECK(ElfImage::Open(dir / "empty").error().code() == Errc::kBadElf);
  WriteFile(dir / "garbage", std::string(4096, 'x'));
  CHECK(ElfImage::Open(dir / "garbage").error().code() == Errc::kBadElf);
  WriteFile(dir / "trunc100", content.substr(0, 100));
  CHECK(ElfImage::Open(dir / "trunc100").error().code() == Errc::kBadElf);
  WriteFile(dir / "trunchalf", content.substr(0, content.size() / 2));
  CHECK(ElfImage::Open(dir / "trunchalf").error().code() == Errc::kBadElf);
  CHECK(ElfImage::Open(dir / "").error().code() == Errc::kBadElf);  // the directory itself
  // A relocatable object is ELF, but not an image that runs.
  Run("cc -c -o " + (dir / "prog.o") + " " + (dir / "prog.c"));
  CHECK(ElfImage::Open(dir / "prog.o").error().code() == Errc::kBadElf);
}

TEST_CASE("flipped bytes anywhere give an error or an image, never a crash") {
  TempDir dir;
  const std::string good = Build(dir, "victim", "-g -fPIE -pie");
  const std::string content = ReadFile(good);
  REQUIRE(content.size() > 4096);
  std::vector<size_t> positions;
  for (size_t i = 0; i < 4096; i += 3) positions.push_back(i);  // headers, notes, dynsym
  for (size_t i = 4096; i < content.size(); i += content.size() / 500 + 1) positions.push_back(i);
  // The section headers at the end describe every table libelf reads.
  for (size_t i = content.size() > 2048 ? content.size() - 2048 : 0; i < content.size(); i += 5) {
    positions.push_back(i);
  }
  const std::string path = dir / "flipped";
  size_t opened = 0;
  for (size_t pos : positions) {
    std::string bad = content;
    bad[pos] = static_cast<char>(bad[pos] ^ 0xff);
    // A new file each time: rewriting one in place makes ext4 flush it (auto_da_alloc).
    std::filesystem::remove(path);
    WriteFile(path, bad);
    auto image = ElfImage::Open(path);
    if (!image) {
      CHECK(!image.error().message().empty());
      continue;
    }
    ++opened;
    // Exercise every reader on the damaged image.
    for (const auto& s : (*image)->symbols()) {
      (void)(*image)->Lookup(s.addr + 1);
    }
    auto alpha = (*image)->Symbol("alpha");
    uint64_t a = alpha ? alpha->addr : 0x1139;
    (void)(*image)->SourceLine(a);
    (void)(*image)->SourceLine(a + 4);
    (void)(*image)->ReadBytes(a, 16);
    if (auto off = (*image)->VaddrToFileOffset(a)) (void)(*image)->LookupFileOffset(*off);
  }
  // Most flips land in bytes that do not matter to the headers.
  CHECK(opened > 0);
}
