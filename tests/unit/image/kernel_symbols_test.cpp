// kernel_symbols_test.cpp - KernelSymbols on this host's /proc/kallsyms
// (resolve a known symbol to kernel + offset and back) and on synthetic
// kallsyms/modules pairs that make module resolution and the error cases
// deterministic.
#include <stdlib.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "libprofile/image/kernel_symbols.h"
#include "test_files.h"

namespace {

using lcpi::Errc;
using lcpi::KernelImageKind;
using lcpi::KernelSymbols;

using lcpi::testing::ReadFile;
using lcpi::testing::Run;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

// A small kernel at 0xffffffff81000000 and modules foo and bar; baz appears
// only in kallsyms (like bpf or __builtin__ftrace).
constexpr const char* kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81000100 t early_helper\n"
    "ffffffff81001000 T schedule\n"
    "ffffffff81001000 W schedule_alias\n"
    "ffffffff81002000 T do_idle\n"
    "ffffffff82000000 D some_data\n"
    "ffffffffc0400000 t foo_init\t[foo]\n"
    "ffffffffc0400080 T foo_work\t[foo]\n"
    "ffffffffc0500000 t bar_probe\t[bar]\n"
    "ffffffffc0600000 t baz_tramp\t[baz]\n"
    "ffffffffc0600040 t baz_tramp2\t[baz]\n"
    "this line is not a symbol\n";

constexpr const char* kModules =
    "foo 16384 0 - Live 0xffffffffc0400000\n"
    "bar 8192 1 foo, Live 0xffffffffc0500000 (OE)\n";

}  // namespace

TEST_CASE("this host's kallsyms: a known symbol resolves to kernel + offset and back") {
  auto ks = KernelSymbols::Load();
  if (geteuid() != 0 && !ks) {
    // kptr_restrict hides addresses from non-root: the specific error.
    CHECK(ks.error().code() == Errc::kPermission);
    return;
  }
  INFO((ks ? "" : ks.error().ToString()));
  REQUIRE(ks.has_value());
  CHECK(ks->text_base() != 0);
  CHECK(ks->text_end() > ks->text_base());

  auto schedule = ks->Address("schedule");
  REQUIRE(schedule.has_value());
  auto r = ks->Locate(*schedule);
  REQUIRE(r.has_value());
  CHECK(r->kind == KernelImageKind::kKernel);
  CHECK(r->module.empty());
  CHECK(r->offset == *schedule - ks->text_base());
  CHECK(ks->SymbolAt(*schedule)->name == "schedule");
  CHECK(ks->SymbolAt(*schedule)->offset == 0);

  auto inside = ks->Locate(*schedule + 7);
  REQUIRE(inside.has_value());
  CHECK(ks->SymbolAt(*schedule + 7)->name == "schedule");
  CHECK(ks->SymbolAt(*schedule + 7)->offset == 7);
  // And back: the offset plus the base is the address again.
  CHECK(ks->text_base() + inside->offset == *schedule + 7);

  // Module symbols, where any are loaded, resolve into their module.
  for (const auto& m : ks->modules()) {
    auto mr = ks->Locate(m.base);
    REQUIRE(mr.has_value());
    CHECK(mr->kind == KernelImageKind::kModule);
    CHECK(mr->module == m.name);
    CHECK(mr->offset == 0);
  }
  CHECK_FALSE(ks->Locate(0x1000).has_value());  // user space
}

TEST_CASE("synthetic kallsyms and modules: kernel, module and unknown addresses") {
  TempDir dir;
  WriteFile(dir / "kallsyms", kKallsyms);
  WriteFile(dir / "modules", kModules);
  auto ks = KernelSymbols::Load(dir / "kallsyms", dir / "modules");
  INFO((ks ? "" : ks.error().ToString()));
  REQUIRE(ks.has_value());
  CHECK(ks->text_base() == 0xffffffff81000000ULL);

  SECTION("kernel") {
    auto r = ks->Locate(0xffffffff81001010ULL);
    REQUIRE(r.has_value());
    CHECK(r->kind == KernelImageKind::kKernel);
    CHECK(r->offset == 0x1010);
    auto sym = ks->SymbolAt(0xffffffff81001010ULL);
    REQUIRE(sym.has_value());
    CHECK(sym->name == "schedule");  // the strong name wins over the weak alias
    CHECK(sym->offset == 0x10);
    CHECK(ks->SymbolAt(0xffffffff81000104ULL)->name == "early_helper");
    CHECK(ks->SymbolAt(0xffffffff81002000ULL)->name == "do_idle");
    CHECK(ks->Address("schedule_alias") == std::nullopt);  // folded into schedule
    CHECK(ks->Address("some_data") == std::nullopt);       // not text
  }
  SECTION("modules from /proc/modules") {
    auto r = ks->Locate(0xffffffffc0400090ULL);
    REQUIRE(r.has_value());
    CHECK(r->kind == KernelImageKind::kModule);
    CHECK(r->module == "foo");
    CHECK(r->offset == 0x90);
    auto sym = ks->SymbolAt(0xffffffffc0400090ULL);
    REQUIRE(sym.has_value());
    CHECK(sym->name == "foo_work");
    CHECK(sym->offset == 0x10);

    auto b = ks->Locate(0xffffffffc0501fffULL);  // last byte of bar
    REQUIRE(b.has_value());
    CHECK(b->module == "bar");
    CHECK(b->offset == 0x1fff);
    CHECK(ks->SymbolAt(0xffffffffc0501fffULL)->name == "bar_probe");
    CHECK_FALSE(ks->Locate(0xffffffffc0502000ULL).has_value());  // just past bar
    CHECK_FALSE(ks->SymbolAt(0xffffffffc0502000ULL).has_value());
  }
  SECTION("a module only kallsyms knows") {
    auto r = ks->Locate(0xffffffffc0600044ULL);
    REQUIRE(r.has_value());
    CHECK(r->module == "baz");
    CHECK(r->offset == 0x44);
    CHECK(ks->SymbolAt(0xffffffffc0600044ULL)->name == "baz_tramp2");
    bool seen = false;
    for (const auto& m : ks->modules()) {
      if (m.name == "baz") {
        seen = true;
        CHECK_FALSE(m.from_proc_modules);
      } else {
        CHECK(m.from_proc_modules);
      }
    }
    CHECK(seen);
  }
  SECTION("outside everything") {
    CHECK_FALSE(ks->Locate(0).has_value());
    CHECK_FALSE(ks->Locate(0xffffffff80ffffffULL).has_value());  // below _text
    CHECK_FALSE(ks->Locate(0xffffffffa0000000ULL).has_value());  // past the kernel's text
  }
}

TEST_CASE("without /proc/modules, modules come from kallsyms tags") {
  TempDir dir;
  WriteFile(dir / "kallsyms", kKallsyms);
  auto ks = KernelSymbols::Load(dir / "kallsyms", dir / "no_modules");
  REQUIRE(ks.has_value());
  CHECK(ks->modules().size() == 3);
  auto r = ks->Locate(0xffffffffc0400080ULL);
  REQUIRE(r.has_value());
  CHECK(r->module == "foo");
  CHECK(r->offset == 0x80);
  CHECK(ks->SymbolAt(0xffffffffc0400080ULL)->name == "foo_work");
}

TEST_CASE("kallsyms errors are specific") {
  TempDir dir;
  SECTION("missing file") {
    CHECK(KernelSymbols::Load(dir / "absent", dir / "absent").error().code() == Errc::kNotFound);
  }
  SECTION("addresses hidden by kptr_restrict") {
    WriteFile(dir / "kallsyms",
              "0000000000000000 T _text\n0000000000000000 T schedule\n"
              "0000000000000000 t foo_init\t[foo]\n");
    auto ks = KernelSymbols::Load(dir / "kallsyms", dir / "none");
    REQUIRE_FALSE(ks.has_value());
    CHECK(ks.error().code() == Errc::kPermission);
    CHECK(ks.error().message().find("kptr_restrict") != std::string::npos);
  }
  SECTION("module addresses hidden") {
    WriteFile(dir / "kallsyms", kKallsyms);
    WriteFile(dir / "modules", "foo 16384 0 - Live 0x0000000000000000\n");
    CHECK(KernelSymbols::Load(dir / "kallsyms", dir / "modules").error().code() ==
          Errc::kPermission);
  }
  SECTION("no _text") {
    WriteFile(dir / "kallsyms", "ffffffff81001000 T schedule\n");
    CHECK(KernelSymbols::Load(dir / "kallsyms", dir / "none").error().code() == Errc::kCorrupt);
  }
  SECTION("empty") {
    WriteFile(dir / "kallsyms", "");
    CHECK(KernelSymbols::Load(dir / "kallsyms", dir / "none").error().code() == Errc::kCorrupt);
  }
  SECTION("_stext alone is a base") {
    WriteFile(dir / "kallsyms", "ffffffff81000000 T _stext\nffffffff81001000 T schedule\n");
    auto ks = KernelSymbols::Load(dir / "kallsyms", dir / "none");
    REQUIRE(ks.has_value());
    CHECK(ks->Locate(0xffffffff81001004ULL)->offset == 0x1004);
  }
}
