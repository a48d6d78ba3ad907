// vdso_symbols_test.cpp - ReadOwnVdsoSymbols (libprofile/image/
// vdso_symbols.h) on this process's real vDSO: its clock functions are
// named, at offsets inside the image, and the offset of the function the C
// library calls is where that function really lies.
#include "libprofile/image/vdso_symbols.h"

#include <dlfcn.h>
#include <sys/auxv.h>

#include <catch2/catch.hpp>

TEST_CASE("the vDSO's functions are named at their offsets") {
  auto symbols = lcpi::ReadOwnVdsoSymbols();
  INFO((symbols ? "" : symbols.error().ToString()));
  REQUIRE(symbols);
  const lcpi::VdsoSymbol* gettime = nullptr;
  for (const lcpi::VdsoSymbol& s : *symbols) {
    CHECK(s.size > 0);
    CHECK(s.offset < (1u << 20));
    if (s.name == "__vdso_clock_gettime" || s.name == "clock_gettime") gettime = &s;
  }
  REQUIRE(gettime != nullptr);
  // Where the dynamic linker finds the same function in this process: its
  // address minus the vDSO's base is the offset (the vDSO is linked at 0).
  auto base = reinterpret_cast<const char*>(getauxval(AT_SYSINFO_EHDR));
  void* vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
  REQUIRE(vdso != nullptr);
  auto fn = static_cast<const char*>(dlsym(vdso, "__vdso_clock_gettime"));
  REQUIRE(fn != nullptr);
  CHECK(static_cast<uint64_t>(fn - base) == gettime->offset);
  dlclose(vdso);
}
