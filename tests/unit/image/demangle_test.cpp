// demangle_test.cpp - names as reports show them.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

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

// A mangled name of `levels` nested substitutions: each level's template
// names the previous one twice, so the demangled text doubles per level.
// 20 levels: 210 bytes mangled, 35 MB demangled (c++filt: 1.6 s); 60
// levels: 2^60 times a few bytes, which no machine could print.
std::string Exponential(int levels) {
  static constexpr char kBase36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  auto seq = [&](int k) {
    std::string s;
    do {
      s.insert(s.begin(), kBase36[k % 36]);
      k /= 36;
    } while (k);
    return s;
  };
  std::string name = "_Z1f1AIiiE";  // S_ is A, S0_ is A<int, int>
  for (int k = 0; k < levels; ++k) name += "S_IS" + seq(k) + "_S" + seq(k) + "_E";
  return name;
}

double SecondsToDemangle(const std::string& name, std::string* out) {
  auto start = std::chrono::steady_clock::now();
  *out = Demangle(name);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("A name whose demangled text is exponential stays mangled, at once") {
  // Small: demangled as usual.
  CHECK(Demangle(Exponential(1)) == "f");
  std::string out;
  for (int levels : {20, 60, 400}) {
    INFO(levels << " levels, " << Exponential(levels).size() << " bytes mangled");
    const double seconds = SecondsToDemangle(Exponential(levels), &out);
    // Beyond the output bound (kMaxDemangledBytes): the mangled name, as the
    // symbol table has it, which is what the report shows.
    REQUIRE(out.size() <= Exponential(levels).size());
    CHECK(out == Exponential(levels));
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
