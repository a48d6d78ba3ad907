// symbol_limits_test.cpp - a symbol table cannot make the symbolizer's
// memory grow past its caps: names are cut, the total name bytes and the
// symbol count per image are bounded, and the image still opens, quickly.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "image/crafted_elf.h"
#include "libprofile/image/elf_symbols.h"
#include "test_files.h"

namespace {

using lcpi::ElfImage;
using lcpi::testing::SymbolBombElf;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

size_t NameBytes(const ElfImage& image) {
  size_t total = 0;
  for (const lcpi::ElfSymbol& s : image.symbols()) total += s.name.size();
  return total;
}

}  // namespace

TEST_CASE("one 1 MiB name shared by many symbols is cut, not copied whole") {
  TempDir dir;
  WriteFile(dir / "bomb", SymbolBombElf(200, 1 << 20));
  auto start = std::chrono::steady_clock::now();
  auto image = ElfImage::Open(dir / "bomb", "");
  REQUIRE(image);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  REQUIRE((*image)->symbols().size() == 200);
  for (const lcpi::ElfSymbol& s : (*image)->symbols()) CHECK(s.name.size() <= 8 * 1024 + 16);
  CHECK((*image)->symbol_warning().find("cut") != std::string::npos);
}

TEST_CASE("the name bytes kept per image stop at 64 MiB, the rest still symbolize by address") {
  TempDir dir;
  // 10,000 names of 7,000 bytes (under the per-name cap): 70 MB whole.
  WriteFile(dir / "bomb", SymbolBombElf(10000, 7000));
  auto image = ElfImage::Open(dir / "bomb", "");
  REQUIRE(image);
  CHECK(NameBytes(**image) <= 64u << 20);
  CHECK((*image)->symbols().size() < 10000);
  CHECK((*image)->symbol_warning().find("name bytes") != std::string::npos);
  CHECK((*image)->Lookup(0x1000 + 16 * 5));
}

TEST_CASE("an image keeps at most 1,000,000 symbols") {
  TempDir dir;
  WriteFile(dir / "many", SymbolBombElf(1'100'000, 4));
  auto image = ElfImage::Open(dir / "many", "");
  REQUIRE(image);
  CHECK((*image)->symbols().size() == 1'000'000);
  CHECK((*image)->symbol_warning().find("symbols") != std::string::npos);
}
