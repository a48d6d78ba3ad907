// rust_symbols_test.cpp - a program rustc builds here, read as reports read
// it: its v0 symbols (rustc's default since 1.9x, and asked for by name)
// demangled from the ELF symbol table. Runs where rustc is installed (it is
// not a build dependency; demangle_test.cpp pins the same names as strings).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <set>
#include <string>

#include "libprofile/image/demangle.h"
#include "libprofile/image/elf_symbols.h"
#include "test_files.h"

namespace {

using lcpi::testing::TempDir;

constexpr const char* kRustProgram = R"(mod engine {
    pub struct Grid<T> { pub v: Vec<T> }
    impl<T: Copy + std::ops::Add<Output = T>> Grid<T> {
        #[inline(never)]
        pub fn sum_rows(&self, z: T) -> T { let mut s = z; for x in &self.v { s = s + *x; } s }
    }
}
fn main() {
    let g = engine::Grid { v: (0..1000u64).collect() };
    let mut t = 0u64;
    for i in 0..1000u64 { t = t.wrapping_add(g.sum_rows(i)); }
    println!("{}", t);
}
)";

}  // namespace

TEST_CASE("A rustc-built program's v0 symbols read as Rust names") {
  if (std::system("command -v rustc >/dev/null 2>&1") != 0) {
    WARN("rustc is not installed: nothing to build");
    return;
  }
  TempDir dir;
  const std::string src = dir / "hot.rs", bin = dir / "hot";
  lcpi::testing::WriteFile(src, kRustProgram);
  const std::string cc = "rustc -O -C symbol-mangling-version=v0 -o " + bin + " " + src;
  REQUIRE(std::system(cc.c_str()) == 0);
  auto image = lcpi::ElfImage::Open(bin, "");
  REQUIRE(image.has_value());
  std::set<std::string> shown;
  size_t v0 = 0;
  for (const lcpi::ElfSymbol& s : (*image)->symbols()) {
    if (s.name.rfind("_R", 0) == 0) ++v0;
    shown.insert(lcpi::Demangle(s.name));
  }
  INFO(v0 << " v0 symbols");
  CHECK(v0 > 10);
  CHECK(shown.count("<hot::engine::Grid<u64>>::sum_rows") == 1);
  CHECK(shown.count("hot::main") == 1);
  // No v0 name left mangled: each one demangled.
  for (const std::string& name : shown) CHECK(name.rfind("_R", 0) != 0);
}
