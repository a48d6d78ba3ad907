// kernel_reload_test.cpp - KernelSymbolsReloader (libprofile/image/
// kernel_reload.h) on kallsyms and modules files written in a temporary
// directory, as /proc shows them: a module loaded after the first read is
// located once the files are read again, and reads are rate-limited.
#include "libprofile/image/kernel_reload.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include "test_files.h"

using lcpi::KernelImageKind;
using lcpi::KernelSymbols;
using lcpi::KernelSymbolsReloader;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

namespace {

constexpr uint64_t kSecond = 1000000000ull;
constexpr uint64_t kInModule = 0xffffffffc0a01010ull;

const char* kBoot =
    "ffffffff81000000 T _text\n"
    "ffffffff81001000 T schedule\n";
const char* kWithModule =
    "ffffffff81000000 T _text\n"
    "ffffffff81001000 T schedule\n"
    "ffffffffc0a01000 t spin_work\t[lcpi_busy]\n"
    "ffffffffc0a01100 t busy_write\t[lcpi_busy]\n";
const char* kModules = "lcpi_busy 16384 0 - Live 0xffffffffc0a01000 (OE)\n";

}  // namespace

TEST_CASE("a module loaded after the first read is located after a re-read") {
  TempDir dir;
  WriteFile(dir / "kallsyms", kBoot);
  WriteFile(dir / "modules", "");
  auto symbols = KernelSymbols::Load(dir / "kallsyms", dir / "modules");
  REQUIRE(symbols);
  REQUIRE_FALSE(symbols->Locate(kInModule));

  WriteFile(dir / "kallsyms", kWithModule);
  WriteFile(dir / "modules", kModules);
  KernelSymbolsReloader reload(dir / "kallsyms", dir / "modules", 10 * kSecond);
  REQUIRE(reload.OnUnresolved(*symbols, 5 * kSecond));  // the first time: at once
  auto where = symbols->Locate(kInModule);
  REQUIRE(where);
  CHECK(where->kind == KernelImageKind::kModule);
  CHECK(where->module == "lcpi_busy");
  CHECK(where->offset == 0x10);
  auto hit = symbols->SymbolAt(kInModule);
  REQUIRE(hit);
  CHECK(hit->name == "spin_work");
  CHECK(reload.reloads() == 1);
}

TEST_CASE("re-reads are at most one per interval, and a failed one keeps the symbols") {
  TempDir dir;
  WriteFile(dir / "kallsyms", kBoot);
  auto symbols = KernelSymbols::Load(dir / "kallsyms", dir / "no-modules");
  REQUIRE(symbols);
  KernelSymbolsReloader reload(dir / "kallsyms", dir / "no-modules", 10 * kSecond);
  CHECK(reload.OnUnresolved(*symbols, 100 * kSecond));
  WriteFile(dir / "kallsyms", kWithModule);
  CHECK_FALSE(reload.OnUnresolved(*symbols, 105 * kSecond));  // too soon
  CHECK_FALSE(reload.OnUnresolved(*symbols, 50 * kSecond));   // clock behind the last read
  CHECK(reload.waited() == 2);
  CHECK_FALSE(symbols->Locate(kInModule));
  CHECK(reload.OnUnresolved(*symbols, 110 * kSecond));
  CHECK(symbols->Locate(kInModule));

  unlink((dir / "kallsyms").c_str());
  CHECK_FALSE(reload.OnUnresolved(*symbols, 120 * kSecond));
  CHECK(reload.failures() == 1);
  CHECK_FALSE(reload.last_error().empty());
  CHECK(symbols->Locate(kInModule));  // still the last good read
}
