// shipped_symbols_test.cpp - lcpiprof --fleet names offsets with the
// symbols lcpi-ship sent (ImageSymbolizer::FromShipped) as a local report
// names them: an ELF file's symbols by their extents, the container of an
// offset found among the few before it (as ElfImage::Lookup does: a large
// function enclosing a smaller symbol); stored symbols (kernel, modules)
// of size 0 reaching the next one.
#include <catch2/catch.hpp>

#include "libprofile/report/report_symbols.h"

namespace {

using lcpi::SymbolInfo;
using lcpi::report::ImageSymbolizer;

std::vector<SymbolInfo> Nested() {
  // big [0x100, 0x200) holds inner [0x120, 0x130); then after [0x300, 0x310)
  return {{0x100, 0x100, "big"}, {0x120, 0x10, "inner"}, {0x300, 0x10, "after"}};
}

TEST_CASE("shipped ELF symbols: an offset past a nested symbol is its container's") {
  const auto sym = ImageSymbolizer::FromShipped(Nested(), /*elf_extents=*/true);
  REQUIRE(sym.Find(0x125)->name == "inner");
  auto big = sym.Find(0x140);
  REQUIRE(big);
  CHECK(big->name == "big");
  CHECK(big->lo == 0x100);
  CHECK(big->hi == 0x200);
  CHECK_FALSE(sym.Find(0x250));  // between symbols: an offset range
  CHECK_FALSE(sym.Find(0x80));
  CHECK(sym.Find(0x30f)->name == "after");
  CHECK_FALSE(sym.Find(0x310));
}

TEST_CASE("shipped stored symbols: the nearest start, size 0 up to the next") {
  const auto sized = ImageSymbolizer::FromShipped(Nested(), /*elf_extents=*/false);
  CHECK_FALSE(sized.Find(0x140));  // past inner's end: as a local stored lookup
  const auto unsized =
      ImageSymbolizer::FromShipped({{0x100, 0, "a"}, {0x200, 0, "b"}}, /*elf_extents=*/false);
  CHECK(unsized.Find(0x1ff)->name == "a");
  CHECK(unsized.Find(0x200)->name == "b");
}

}  // namespace
