// dwarf_strings_test.cpp - DwarfStrings, the check SourceLine makes before
// it copies a name libdw hands out: a string that runs to its section's end
// is refused in every section libdw may take names from, and a file with
// too many such sections is refused whole.
#include <gelf.h>
#include <libelf.h>
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "image/crafted_elf.h"
#include "libprofile/image/dwarf_strings.h"

namespace {

using lcpi::DwarfStrings;
using lcpi::testing::CraftedSection;
using lcpi::testing::SectionsElf;

// An ELF file in memory, read through libelf as libdw reads it.
class MemoryElf {
 public:
  explicit MemoryElf(std::string bytes) : bytes_(std::move(bytes)) {
    REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
    elf_ = elf_memory(bytes_.data(), bytes_.size());
    REQUIRE(elf_ != nullptr);
  }
  ~MemoryElf() { elf_end(elf_); }
  MemoryElf(const MemoryElf&) = delete;
  MemoryElf& operator=(const MemoryElf&) = delete;

  Elf* elf() const { return elf_; }
  // The bytes of the index'th section (1: the first of SectionsElf's list)
  // as libelf holds them: where libdw's pointers point.
  const char* Data(size_t index) const {
    Elf_Data* data = elf_getdata(elf_getscn(elf_, index), nullptr);
    REQUIRE(data != nullptr);
    REQUIRE(data->d_buf != nullptr);
    return static_cast<const char*>(data->d_buf);
  }

 private:
  std::string bytes_;
  Elf* elf_ = nullptr;
};

// "name\0" then "tail" with no NUL: the hostile last string.
const std::string kStrings = std::string("name\0tail", 9);
constexpr size_t kTail = 5;

}  // namespace

TEST_CASE("a string is taken only if it ends inside its section") {
  MemoryElf file(SectionsElf({{".debug_line_str", kStrings}}));
  DwarfStrings strings;
  REQUIRE(strings.Add(file.elf()));
  const char* s = file.Data(1);
  CHECK(strings.Ends(s));
  CHECK(strings.Ends(s + 2));
  CHECK_FALSE(strings.Ends(s + kTail));
  CHECK_FALSE(strings.Ends(s + kStrings.size() - 1));
  // One past the end: libdw's strx check lets an offset equal the size.
  CHECK_FALSE(strings.Ends(s + kStrings.size()));
  // A name libdw built itself (a directory joined to a name) is in no section.
  const std::string joined = "/src/name";
  CHECK(strings.Ends(joined.c_str()));
}

TEST_CASE("a section that begins where another ends: its first string is taken") {
  MemoryElf file(SectionsElf({{".debug_line_str", kStrings}, {".debug_str", kStrings}}));
  DwarfStrings strings;
  REQUIRE(strings.Add(file.elf()));
  // Back to back, as libelf hands out the sections of a file read through mmap.
  REQUIRE(file.Data(1) + kStrings.size() == file.Data(2));
  CHECK(strings.Ends(file.Data(2)));
  CHECK_FALSE(strings.Ends(file.Data(2) + kTail));
}

TEST_CASE("every section libdw may take names from is checked, duplicates included") {
  const std::vector<std::string> names = {
      ".debug_str",     ".debug_line_str",      ".zdebug_str",
      ".debug_str.dwo", ".zdebug_line_str.dwo", ".gnu.debuglto_.debug_line_str",
      ".debug_str",  // a duplicate: libdw skips an empty first one and takes the next
  };
  std::vector<CraftedSection> sections;
  for (const std::string& name : names) sections.push_back({name, kStrings});
  MemoryElf file(SectionsElf(sections));
  DwarfStrings strings;
  REQUIRE(strings.Add(file.elf()));
  for (size_t i = 0; i < names.size(); ++i) {
    INFO(names[i] << " (section " << i + 1 << ")");
    CHECK(strings.Ends(file.Data(i + 1)));
    CHECK_FALSE(strings.Ends(file.Data(i + 1) + kTail));
  }
}

TEST_CASE("other sections are not string sections, and a NOBITS one holds nothing") {
  MemoryElf file(SectionsElf({{".debug_str_offsets", kStrings},
                              {".debug_strings", kStrings},
                              {".debug_info", kStrings},
                              {".debug_str", kStrings, SHT_NOBITS}}));
  DwarfStrings strings;
  REQUIRE(strings.Add(file.elf()));
  // Not kept, so not checked: libdw takes no name from them.
  for (size_t i = 1; i <= 3; ++i) CHECK(strings.Ends(file.Data(i) + kTail));
}

TEST_CASE("past 8 string sections in all, Add refuses and keeps none of the file's") {
  std::vector<CraftedSection> five(5, {".debug_str", kStrings});
  MemoryElf first(SectionsElf(five));
  MemoryElf second(SectionsElf(five));
  DwarfStrings strings;
  REQUIRE(strings.Add(first.elf()));
  CHECK_FALSE(strings.Add(second.elf()));
  CHECK_FALSE(strings.Ends(first.Data(5) + kTail));
  CHECK(strings.Ends(second.Data(1) + kTail));

  std::vector<CraftedSection> eight(lcpi::kMaxDwarfStringSections, {".debug_str", kStrings});
  MemoryElf full(SectionsElf(eight));
  DwarfStrings enough;
  CHECK(enough.Add(full.elf()));
  CHECK_FALSE(enough.Ends(full.Data(lcpi::kMaxDwarfStringSections) + kTail));
}
