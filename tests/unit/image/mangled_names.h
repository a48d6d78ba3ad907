// mangled_names.h - a hostile C++ name for the demangling tests
// (demangle_test.cpp) and the tools fixture's hostile.db
// (tests/integration/tools_fixture.cpp).
#ifndef LCPI_TESTS_UNIT_IMAGE_MANGLED_NAMES_H
#define LCPI_TESTS_UNIT_IMAGE_MANGLED_NAMES_H

#include <string>

namespace lcpi::testing {

// A mangled name of `levels` nested substitutions: each level's template
// names the previous one twice, so the demangled text doubles per level.
// 20 levels: 210 bytes mangled, 35 MB demangled (c++filt: 1.6 s); 60
// levels: 2^60 times a few bytes, which no machine could print.
inline std::string ExponentialMangledName(int levels) {
  static constexpr char kBase36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  auto seq = [&](int k) {  // a substitution's <seq-id>: base 36
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

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_IMAGE_MANGLED_NAMES_H
