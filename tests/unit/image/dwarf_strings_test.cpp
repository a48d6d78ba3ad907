// dwarf_strings_test.cpp - DwarfStrings, the check made before libdw's
// line-table names are read: a file with a string section that does not
// end in a NUL (libdw runs strlen on such names itself) or with too many
// of them is refused whole, in every form of the section names libdw may
// take strings from; a name one past a section's end is refused, one that
// ends in any section it lies in is taken.
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>
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

// An ELF file read through libelf. kRead: as lcpi opens images (ELF_C_READ
// on a descriptor: each section's data a block of its own); kMemory: from
// memory, the sections back to back as in a file read through mmap.
class OpenedElf {
 public:
  enum Mode { kRead, kMemory };
  explicit OpenedElf(std::string bytes, Mode mode = kRead) : bytes_(std::move(bytes)) {
    REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
    if (mode == kMemory) {
      elf_ = elf_memory(bytes_.data(), bytes_.size());
    } else {
      fd_ = memfd_create("dwarf_strings_test", MFD_CLOEXEC);
      REQUIRE(fd_ >= 0);
      REQUIRE(write(fd_, bytes_.data(), bytes_.size()) == static_cast<ssize_t>(bytes_.size()));
      elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
    }
    REQUIRE(elf_ != nullptr);
  }
  ~OpenedElf() {
    elf_end(elf_);
    if (fd_ >= 0) close(fd_);
  }
  OpenedElf(const OpenedElf&) = delete;
  OpenedElf& operator=(const OpenedElf&) = delete;

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
  int fd_ = -1;
  Elf* elf_ = nullptr;
};

// Two names, each ending in a NUL, as compilers write them.
const std::string kStrings = std::string("name\0tail\0", 10);
constexpr size_t kTail = 5;
// The same with the last NUL missing: the hostile last name.
const std::string kUnterminated = kStrings.substr(0, kStrings.size() - 1);

// Every form of the two names libdw takes strings from.
const std::vector<std::string> kForms = {
    ".debug_str",     ".debug_line_str",      ".zdebug_str",
    ".debug_str.dwo", ".zdebug_line_str.dwo", ".gnu.debuglto_.debug_line_str",
};

}  // namespace

TEST_CASE("a name in a section is taken, one past its end is refused") {
  for (OpenedElf::Mode mode : {OpenedElf::kRead, OpenedElf::kMemory}) {
    INFO("mode " << mode);
    OpenedElf file(SectionsElf({{".debug_line_str", kStrings}}), mode);
    DwarfStrings strings;
    REQUIRE(strings.Add(file.elf()));
    const char* s = file.Data(1);
    CHECK(strings.Ends(s));
    CHECK(strings.Ends(s + 2));
    CHECK(strings.Ends(s + kTail));
    // One past the end: libdw's strx check lets an offset equal the size.
    CHECK_FALSE(strings.Ends(s + kStrings.size()));
    // A name libdw built itself (a directory joined to a name) is in no section.
    const std::string joined = "/src/name";
    CHECK(strings.Ends(joined.c_str()));
  }
}

TEST_CASE("a string section that does not end in a NUL refuses the file, in every form") {
  std::vector<std::string> forms = kForms;
  forms.push_back(".debug_str");  // a duplicate after a good first one
  for (size_t i = 0; i < forms.size(); ++i) {
    INFO(forms[i]);
    std::vector<CraftedSection> sections = {{forms[i], kUnterminated}};
    if (i + 1 == forms.size()) sections.insert(sections.begin(), {".debug_str", kStrings});
    OpenedElf file(SectionsElf(sections));
    DwarfStrings strings;
    CHECK_FALSE(strings.Add(file.elf()));
  }
  // Sections libdw takes no names from are not looked at.
  for (const char* other : {".debug_str_offsets", ".debug_strings", ".debug_info", ".str"}) {
    INFO(other);
    OpenedElf file(SectionsElf({{other, kUnterminated}}));
    DwarfStrings strings;
    CHECK(strings.Add(file.elf()));
  }
}

TEST_CASE("a section that begins where another ends: its first string is taken") {
  OpenedElf file(SectionsElf({{".debug_line_str", kStrings}, {".debug_str", kStrings}}),
                 OpenedElf::kMemory);
  DwarfStrings strings;
  REQUIRE(strings.Add(file.elf()));
  // Back to back: one past the first's end is the second's first byte.
  REQUIRE(file.Data(1) + kStrings.size() == file.Data(2));
  CHECK(strings.Ends(file.Data(2)));
  CHECK_FALSE(strings.Ends(file.Data(2) + kStrings.size()));
}

TEST_CASE("every form and duplicate is kept: one past any of them is refused") {
  std::vector<std::string> names = kForms;
  names.push_back(".debug_str");  // a duplicate: libdw skips an empty first one
  std::vector<CraftedSection> sections;
  for (const std::string& name : names) sections.push_back({name, kStrings});
  OpenedElf file(SectionsElf(sections));
  DwarfStrings strings;
  REQUIRE(strings.Add(file.elf()));
  for (size_t i = 0; i < names.size(); ++i) {
    INFO(names[i] << " (section " << i + 1 << ")");
    CHECK(strings.Ends(file.Data(i + 1) + kTail));
    CHECK_FALSE(strings.Ends(file.Data(i + 1) + kStrings.size()));
  }
}

TEST_CASE("past 8 string sections in all, Add refuses and keeps none of the file's") {
  std::vector<CraftedSection> five(5, {".debug_str", kStrings});
  OpenedElf first(SectionsElf(five));
  OpenedElf second(SectionsElf(five));
  DwarfStrings strings;
  REQUIRE(strings.Add(first.elf()));
  CHECK_FALSE(strings.Add(second.elf()));
  CHECK_FALSE(strings.Ends(first.Data(5) + kStrings.size()));
  CHECK(strings.Ends(second.Data(1) + kStrings.size()));

  std::vector<CraftedSection> nine(lcpi::kMaxDwarfStringSections + 1, {".debug_str", kStrings});
  OpenedElf too_many(SectionsElf(nine));
  DwarfStrings refused;
  CHECK_FALSE(refused.Add(too_many.elf()));

  // Eight, and a NOBITS one (no bytes in the file: not counted).
  std::vector<CraftedSection> eight(lcpi::kMaxDwarfStringSections, {".debug_str", kStrings});
  eight.push_back({".debug_str", "", SHT_NOBITS});
  OpenedElf full(SectionsElf(eight));
  DwarfStrings enough;
  CHECK(enough.Add(full.elf()));
  CHECK_FALSE(enough.Ends(full.Data(lcpi::kMaxDwarfStringSections) + kStrings.size()));
}
