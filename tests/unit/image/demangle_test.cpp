// demangle_test.cpp - names as reports show them.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "image/mangled_names.h"
#include "libprofile/image/demangle.h"

using lcpi::Demangle;

TEST_CASE("C names and junk pass through unchanged") {
  CHECK(Demangle("main") == "main");
  CHECK(Demangle("") == "");
  CHECK(Demangle("_Zjunk") == "_Zjunk");
}

TEST_CASE("C++ names lose their parameter lists, keep scopes and templates") {
  CHECK(Demangle("_Z17push_to_top_levelv") == "push_to_top_level");
  CHECK(Demangle("_ZN4lcpi10Aggregator3AddERKNS_12RecordBufferE") == "lcpi::Aggregator::Add");
  CHECK(Demangle("_ZNK4lcpi10Aggregator7entriesEv") == "lcpi::Aggregator::entries");
  CHECK(Demangle("_Z3fooIiEvT_") == "void foo<int>");
  // a function-pointer parameter nests parentheses
  CHECK(Demangle("_Z5applyPFviEi") == "apply");
}

namespace {

double SecondsToDemangle(const std::string& name, std::string* out) {
  auto start = std::chrono::steady_clock::now();
  *out = Demangle(name);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("A name whose demangled text is exponential stays mangled, at once") {
  using lcpi::testing::ExponentialMangledName;
  // Within the output bound: demangled as usual (8 levels: about 8.6 KB).
  CHECK(Demangle(ExponentialMangledName(1)) == "f");
  CHECK(Demangle(ExponentialMangledName(8)) == "f");
  std::string out;
  for (int levels : {20, 60, 400}) {
    const std::string name = ExponentialMangledName(levels);
    INFO(levels << " levels, " << name.size() << " bytes mangled");
    const double seconds = SecondsToDemangle(name, &out);
    // Beyond the output bound (kMaxDemangledBytes): the mangled name, as the
    // symbol table has it, which is what the report shows.
    REQUIRE(out.size() <= name.size());
    CHECK(out == name);
    CHECK(seconds < 0.5);
  }
}

TEST_CASE("A mangled name beyond the input bound is not demangled") {
  // 100 KiB of a valid name: f(A, A, ..., A) with each A spelled out.
  std::string name = "_Z1f";
  while (name.size() < 100 * 1024) name += "1A";
  CHECK(Demangle(name) == name);
  CHECK(Demangle("_Z1f1A1A") == "f");
}

// Real names from rustc 1.95 (`nm` of a program built with -C
// symbol-mangling-version=legacy and with the default, v0): reports show
// them as `rustfilt` does, without the legacy hash or the v0 crate
// disambiguators, as C++ names show without their parameter lists.
TEST_CASE("Rust names, legacy and v0, are demangled as C++ names are") {
  CHECK(Demangle("_ZN3hot6engine13Grid$LT$T$GT$8sum_rows17h956bf6e1d4ed5a83E") ==
        "hot::engine::Grid<T>::sum_rows");
  CHECK(Demangle("_RNvMNtCs81nRMqtTsfS_3hot6engineINtB2_4GridyE8sum_rowsB4_") ==
        "<hot::engine::Grid<u64>>::sum_rows");
  CHECK(Demangle("_RNvCs81nRMqtTsfS_3hot4main") == "hot::main");
  // A v0 path holding a function type keeps its parentheses: only C++ names
  // carry a parameter list to drop.
  CHECK(Demangle("_RINvCs81nRMqtTsfS_3hot5applyFmEuE") == "hot::apply::<fn(u32)>");
  // Not a v0 name: shown as it is.
  CHECK(Demangle("_RNvjunk") == "_RNvjunk");
}
