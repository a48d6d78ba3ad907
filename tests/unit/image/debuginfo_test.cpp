// debuginfo_test.cpp - separate debug files through .gnu_debuglink: a
// stripped binary whose link names a debug file beside it (or in .debug/)
// gets its functions and its source lines back, and a debug file of another
// build is refused (build-id, or the link's CRC32 without one). The network
// is never used here: debuginfod is off unless a tool turns it on.
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <string>

#include "libprofile/image/debuginfo.h"
#include "libprofile/image/elf_symbols.h"
#include "test_files.h"

namespace {

using lcpi::ElfImage;
using lcpi::testing::Run;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

// Line numbers matter: the body of scale is line 4.
constexpr const char* kProgram = R"(#include <stdio.h>

__attribute__((noinline)) static int scale(int x) {
  return x * 7 + 3;
}

int main(int argc, char** argv) {
  (void)argv;
  printf("%d\n", scale(argc));
  return 0;
}
)";
constexpr int kScaleBodyLine = 4;

// Builds dir/name from kProgram with -g, and returns its path.
std::string Build(const TempDir& dir, const std::string& name, const std::string& flags) {
  const std::string src = dir / "prog.c";
  WriteFile(src, kProgram);
  const std::string bin = dir / name;
  Run("cc -O1 -g " + flags + " -o " + bin + " " + src);
  return bin;
}

std::unique_ptr<ElfImage> OpenOk(const std::string& path) {
  // No debug root: only the debuglink can find anything.
  auto image = ElfImage::Open(path, "");
  INFO(path << ": " << (image ? "" : image.error().ToString()));
  REQUIRE(image);
  return std::move(*image);
}

// The stripped file names scale, and scale's body is on kScaleBodyLine of prog.c.
void CheckSymbolsAndLines(const ElfImage& image, const ElfImage& reference,
                          const std::string& table) {
  CHECK(image.symbol_table() == table);
  auto scale = reference.Symbol("scale");
  REQUIRE(scale);
  auto hit = image.Lookup(scale->addr + 1);
  REQUIRE(hit);
  CHECK(hit->symbol->name == "scale");
  auto line = image.SourceLine(scale->addr);
  REQUIRE(line);
  CHECK(line->line == kScaleBodyLine);
  CHECK(line->file.size() >= 6);
  CHECK(line->file.substr(line->file.size() - 6) == "prog.c");
}

}  // namespace

TEST_CASE("a stripped binary gets symbols and source lines from its .gnu_debuglink file") {
  TempDir dir;
  const std::string full = Build(dir, "full", "-Wl,--build-id");
  auto reference = OpenOk(full);
  REQUIRE(reference->symbol_table() == "symtab");
  const std::string bin = dir / "prog";

  SECTION("the debug file beside the binary") {
    Run("objcopy --only-keep-debug " + full + " " + (dir / "prog.debug"));
    Run("objcopy --strip-all --add-gnu-debuglink=" + (dir / "prog.debug") + " " + full + " " + bin);
    auto image = OpenOk(bin);
    CheckSymbolsAndLines(*image, *reference, "debuglink");
    CHECK(image->debug_file() == dir / "prog.debug");
  }
  SECTION("the debug file in .debug/ beside the binary") {
    Run("mkdir " + (dir / ".debug"));
    Run("objcopy --only-keep-debug " + full + " " + (dir / ".debug/prog.debug"));
    Run("cd " + dir.path().string() + " && cp .debug/prog.debug . && objcopy --strip-all " +
        "--add-gnu-debuglink=prog.debug full prog && rm prog.debug");
    CheckSymbolsAndLines(*OpenOk(bin), *reference, "debuglink");
  }
  SECTION("a debug file of another build is refused (build-id differs)") {
    const std::string other = Build(dir, "other", "-Wl,--build-id -DUNUSED=1 -O2");
    Run("objcopy --only-keep-debug " + full + " " + (dir / "prog.debug"));
    Run("objcopy --strip-all --add-gnu-debuglink=" + (dir / "prog.debug") + " " + full + " " + bin);
    // Same name, other contents: the other build's debug file.
    Run("objcopy --only-keep-debug " + other + " " + (dir / "prog.debug"));
    auto image = OpenOk(bin);
    CHECK(image->symbol_table() == "none");
    CHECK_FALSE(image->SourceLine(reference->Symbol("scale")->addr));
  }
}

TEST_CASE("without a build-id, the debuglink's CRC32 decides") {
  TempDir dir;
  const std::string full = Build(dir, "full", "-Wl,--build-id=none");
  auto reference = OpenOk(full);
  REQUIRE(reference->build_id().empty());
  const std::string bin = dir / "prog", debug = dir / "prog.debug";
  Run("objcopy --only-keep-debug " + full + " " + debug);
  Run("objcopy --strip-all --add-gnu-debuglink=" + debug + " " + full + " " + bin);
  SECTION("the right file") { CheckSymbolsAndLines(*OpenOk(bin), *reference, "debuglink"); }
  SECTION("a changed file") {
    Run("printf x >> " + debug);
    CHECK(OpenOk(bin)->symbol_table() == "none");
  }
}

TEST_CASE("debuginfod stays off unless a tool turns it on") {
  TempDir dir;
  const std::string full = Build(dir, "full", "-Wl,--build-id");
  const std::string bin = dir / "prog";
  Run("strip --strip-all -o " + bin + " " + full);
  // A closed port: a query would fail at once and leave a warning.
  setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
  CHECK_FALSE(lcpi::DebuginfodActive());
  CHECK(OpenOk(bin)->symbol_table() == "none");
  CHECK(lcpi::DebuginfoWarnings().empty());
  unsetenv("DEBUGINFOD_URLS");
}
