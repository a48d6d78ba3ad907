// image_id_test.cpp - image identity of real binaries built by the test
// (with and without a build-id, different, copied, stripped), of corrupt
// files (clean errors, no crash), of raw note blobs, and of the running
// kernel and synthetic /sys/module trees.
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "crafted_elf.h"
#include "libprofile/image/image_id.h"
#include "test_files.h"

namespace {

using lcpi::Errc;
using lcpi::IdentifyElfFile;

constexpr const char* kProgram = R"(#include <stdio.h>
int square(int x) { return x * x; }
int main(int argc, char** argv) { (void)argv; printf("%d\n", square(argc)); return 0; }
)";

constexpr const char* kOtherProgram = R"(#include <stdio.h>
int cube(int x) { return x * x * x; }
int main(int argc, char** argv) { (void)argv; printf("%d\n", cube(argc)); return 0; }
)";

using lcpi::testing::ReadFile;
using lcpi::testing::Run;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

std::string Build(const TempDir& dir, const std::string& name, const char* source,
                  const std::string& flags) {
  const std::string src = dir / (name + ".c");
  WriteFile(src, source);
  const std::string bin = dir / name;
  Run("cc -O1 " + flags + " -o " + bin + " " + src);
  return bin;
}

// The build-id as readelf prints it: the independent oracle.
// The file offset of the first executable loadable segment, from readelf -lW
// ("LOAD 0x001000 0x...1000 0x...1000 0x000161 0x000161 R E 0x1000").
uint64_t ExecutableSegmentOffset(const std::string& bin) {
  const std::string out = bin + ".segments";
  Run("readelf -lW " + bin + " > " + out);
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string type, offset;
    fields >> type >> offset;
    if (type == "LOAD" && line.find(" R E ") != std::string::npos)
      return std::stoull(offset, nullptr, 16);
  }
  return 0;
}

std::string ReadelfBuildId(const std::string& bin) {
  const std::string out = bin + ".notes";
  Run("readelf -n " + bin + " > " + out);
  std::ifstream in(out);
  std::string line;
  const std::string key = "Build ID: ";
  while (std::getline(in, line)) {
    size_t at = line.find(key);
    if (at != std::string::npos) return line.substr(at + key.size());
  }
  return "";
}

// One note in the raw /sys format: header, name, descriptor, 4-byte padding.
std::string Note(uint32_t type, const std::string& name, const std::string& desc) {
  auto pad = [](std::string s) {
    while (s.size() % 4 != 0) s.push_back('\0');
    return s;
  };
  uint32_t hdr[3] = {static_cast<uint32_t>(name.size()), static_cast<uint32_t>(desc.size()), type};
  return std::string(reinterpret_cast<const char*>(hdr), sizeof(hdr)) + pad(name) + pad(desc);
}

const std::string kGnu("GNU\0", 4);
const std::string kDesc("\x01\x23\x45\x67\x89\xab\xcd\xef\x00\xff", 10);
const std::string kDescHex = "0123456789abcdef00ff";

}  // namespace

TEST_CASE("a build-id names the image") {
  TempDir dir;
  const std::string bin = Build(dir, "with_id", kProgram, "-Wl,--build-id");
  auto id = IdentifyElfFile(bin);
  REQUIRE(id.has_value());
  const std::string expected = ReadelfBuildId(bin);
  REQUIRE(expected.size() == 40);  // sha1
  CHECK(id->build_id == expected);
  CHECK(id->identity.rfind("build-id:" + expected + ":", 0) == 0);
  CHECK(id->identity.size() == std::strlen("build-id:") + 40 + 1 + 16);
  CHECK(id->file_size == std::filesystem::file_size(bin));

  // strip keeps the note, so a stripped copy is the same image.
  const std::string stripped = dir / "stripped";
  Run("cp " + bin + " " + stripped + " && strip --strip-all " + stripped);
  auto sid = IdentifyElfFile(stripped);
  REQUIRE(sid.has_value());
  CHECK(sid->identity == id->identity);
  CHECK(sid->file_size < id->file_size);

  // With the section headers gone too, the PT_NOTE segment still has it.
  const std::string noshdr = dir / "noshdr";
  std::string bytes = ReadFile(bin);
  // e_shoff = 0, e_shnum = 0, e_shstrndx = 0 (ELF64 little-endian offsets).
  std::memset(bytes.data() + 0x28, 0, 8);
  std::memset(bytes.data() + 0x3c, 0, 4);
  WriteFile(noshdr, bytes);
  auto nid = IdentifyElfFile(noshdr);
  REQUIRE(nid.has_value());
  CHECK(nid->identity == id->identity);
}

TEST_CASE("a build-id longer than 64 bytes is not taken: the content names the image") {
  // GNU build-ids are 20 bytes (sha1); the linker takes any length, and each
  // identity is repeated in every row the fleet ships, so a user's 30,000-byte
  // one would make every count row 60 KB (and its queries too long).
  TempDir dir;
  const std::string at_cap =
      Build(dir, "id64", kProgram, "-Wl,--build-id=0x" + std::string(128, 'a'));
  auto ok = IdentifyElfFile(at_cap);
  REQUIRE(ok.has_value());
  CHECK(ok->build_id == std::string(128, 'a'));
  const std::string huge =
      Build(dir, "id30000", kProgram, "-Wl,--build-id=0x" + std::string(60000, 'b'));
  REQUIRE(ReadelfBuildId(huge).size() == 60000);  // the linker wrote it
  auto id = IdentifyElfFile(huge);
  REQUIRE(id.has_value());
  CHECK(id->build_id.empty());
  CHECK(id->identity.rfind("build-id:", 0) != 0);
  CHECK(id->identity.size() < 100);
  // The raw note blobs of the kernel and modules: the same limit.
  CHECK(lcpi::FindGnuBuildIdInNoteBlob(Note(3, kGnu, std::string(64, 'x'))).has_value());
  CHECK_FALSE(lcpi::FindGnuBuildIdInNoteBlob(Note(3, kGnu, std::string(65, 'x'))).has_value());
}

TEST_CASE("without a build-id the identity is a hash of the content") {
  TempDir dir;
  const std::string a = Build(dir, "a", kProgram, "-Wl,--build-id=none");
  const std::string b = Build(dir, "b", kOtherProgram, "-Wl,--build-id=none");
  REQUIRE(ReadelfBuildId(a).empty());
  auto ia = IdentifyElfFile(a);
  auto ib = IdentifyElfFile(b);
  REQUIRE(ia.has_value());
  REQUIRE(ib.has_value());
  CHECK(ia->build_id.empty());
  CHECK(ia->identity.rfind("content-hash:", 0) == 0);
  CHECK(ia->identity.size() == std::strlen("content-hash:") + 16);
  CHECK(ia->identity != ib->identity);

  // Stable: the same file, or a copy of it, gets the same identity.
  auto again = IdentifyElfFile(a);
  REQUIRE(again.has_value());
  CHECK(again->identity == ia->identity);
  const std::string copy = dir / "a_copy";
  std::filesystem::copy_file(a, copy);
  auto ic = IdentifyElfFile(copy);
  REQUIRE(ic.has_value());
  CHECK(ic->identity == ia->identity);

  // The file size is part of the hash: appended bytes make a new image.
  const std::string longer = dir / "a_longer";
  WriteFile(longer, ReadFile(a) + "tail");
  auto il = IdentifyElfFile(longer);
  REQUIRE(il.has_value());
  CHECK(il->identity != ia->identity);
}

TEST_CASE("without a build-id, a changed code byte makes a new image") {
  // Same headers, same size, one instruction byte different: what a rebuild
  // with a one-character source change looks like. A hash of the headers
  // alone would give both files one identity.
  TempDir dir;
  const std::string a = Build(dir, "a", kProgram, "-Wl,--build-id=none");
  std::string bytes = ReadFile(a);
  uint64_t code_offset = ExecutableSegmentOffset(a);
  REQUIRE(code_offset > 0);
  REQUIRE(code_offset + 16 < bytes.size());
  bytes[code_offset + 16] = static_cast<char>(bytes[code_offset + 16] ^ 0x01);
  const std::string patched = dir / "patched";
  WriteFile(patched, bytes);
  auto ia = IdentifyElfFile(a);
  auto ip = IdentifyElfFile(patched);
  REQUIRE(ia.has_value());
  REQUIRE(ip.has_value());
  CHECK(ia->file_size == ip->file_size);
  CHECK(ia->identity != ip->identity);
}

TEST_CASE("different binaries with build-ids differ, copies do not") {
  TempDir dir;
  const std::string a = Build(dir, "a", kProgram, "-Wl,--build-id");
  const std::string b = Build(dir, "b", kOtherProgram, "-Wl,--build-id");
  const std::string copy = dir / "a_copy";
  std::filesystem::copy_file(a, copy);
  CHECK(IdentifyElfFile(a)->identity != IdentifyElfFile(b)->identity);
  CHECK(IdentifyElfFile(a)->identity == IdentifyElfFile(copy)->identity);
}

TEST_CASE("a FIFO where a mapped file was is refused at once") {
  // A hostile user's program can leave a FIFO at its own path: lcpid must
  // not wait in open() for a writer that never comes.
  TempDir dir;
  const std::string fifo = dir / "prog";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  int status = lcpi::testing::ExitStatusWithin(10, [&] {
    auto id = IdentifyElfFile(fifo);
    return !id && id.error().code() == Errc::kBadElf ? 0 : 1;
  });
  CHECK(status == 0);
}

TEST_CASE("files that are not usable ELF get kBadElf, missing files kNotFound") {
  TempDir dir;
  const std::string good = Build(dir, "good", kProgram, "-Wl,--build-id=none");
  const std::string content = ReadFile(good);

  CHECK(IdentifyElfFile(dir / "missing").error().code() == Errc::kNotFound);
  WriteFile(dir / "empty", "");
  CHECK(IdentifyElfFile(dir / "empty").error().code() == Errc::kBadElf);
  WriteFile(dir / "garbage", "this is not an ELF file at all, just words\n");
  CHECK(IdentifyElfFile(dir / "garbage").error().code() == Errc::kBadElf);
  WriteFile(dir / "magic_only",
            "\x7f"
            "ELF");
  CHECK(IdentifyElfFile(dir / "magic_only").error().code() == Errc::kBadElf);
  WriteFile(dir / "trunc100", content.substr(0, 100));
  auto t = IdentifyElfFile(dir / "trunc100");
  REQUIRE_FALSE(t.has_value());
  CHECK(t.error().code() == Errc::kBadElf);
  CHECK(t.error().message().find("trunc100") != std::string::npos);
  WriteFile(dir / "trunchalf", content.substr(0, content.size() / 2));
  CHECK(IdentifyElfFile(dir / "trunchalf").error().code() == Errc::kBadElf);
  CHECK(IdentifyElfFile(dir / "").error().code() == Errc::kBadElf);  // a directory
}

TEST_CASE("flipped bytes give an identity or a clean error, never a crash") {
  TempDir dir;
  for (const char* flags : {"-Wl,--build-id", "-Wl,--build-id=none"}) {
    const std::string good = Build(dir, "victim", kProgram, flags);
    const std::string content = ReadFile(good);
    const std::string path = dir / "flipped";
    size_t step = content.size() / 700 + 1;
    for (size_t pos = 0; pos < content.size(); pos += (pos < 1024 ? 1 : step)) {
      std::string bad = content;
      bad[pos] = static_cast<char>(bad[pos] ^ 0x5a);
      // A new file each time: rewriting one in place makes ext4 flush it (auto_da_alloc).
      std::filesystem::remove(path);
      WriteFile(path, bad);
      auto id = IdentifyElfFile(path);
      if (id) {
        CHECK_FALSE(id->identity.empty());
      } else {
        CHECK_FALSE(id.error().message().empty());
      }
    }
  }
}

TEST_CASE("raw note blobs are parsed with bounds checks") {
  using lcpi::FindGnuBuildIdInNoteBlob;
  CHECK_FALSE(FindGnuBuildIdInNoteBlob("").has_value());
  CHECK(FindGnuBuildIdInNoteBlob(Note(3, kGnu, kDesc)) == kDescHex);
  // After other notes (the kernel puts Xen and Linux notes around it).
  std::string several = Note(6, std::string("Linux\0", 6), "abcd") + Note(3, kGnu, kDesc);
  CHECK(FindGnuBuildIdInNoteBlob(several) == kDescHex);
  // Wrong owner or type: not a build-id.
  CHECK_FALSE(FindGnuBuildIdInNoteBlob(Note(3, std::string("Xen\0", 4), kDesc)).has_value());
  CHECK_FALSE(FindGnuBuildIdInNoteBlob(Note(1, kGnu, kDesc)).has_value());
  // Every truncation of a good blob: no build-id, no overrun (ASan would see one).
  const std::string good = Note(6, std::string("Linux\0", 6), "abcd") + Note(3, kGnu, kDesc);
  for (size_t n = 0; n < good.size(); ++n) {
    std::string cut = good.substr(0, n);
    auto r = FindGnuBuildIdInNoteBlob(cut);
    if (r) CHECK(*r == kDescHex);  // only the unpadded tail may be missing
  }
  // Huge lengths must not wrap the offset arithmetic.
  std::string huge = Note(3, kGnu, kDesc);
  uint32_t big = 0xffffffffu;
  std::memcpy(huge.data() + 4, &big, 4);
  CHECK_FALSE(FindGnuBuildIdInNoteBlob(huge).has_value());
  std::memcpy(huge.data(), &big, 4);
  CHECK_FALSE(FindGnuBuildIdInNoteBlob(huge).has_value());
}

TEST_CASE("the running kernel has a kernel: identity") {
  auto id = lcpi::IdentifyRunningKernel();
  REQUIRE(id.has_value());
  CHECK(id->identity.rfind("kernel:", 0) == 0);
  std::ifstream notes("/sys/kernel/notes", std::ios::binary);
  if (notes) {
    std::stringstream ss;
    ss << notes.rdbuf();
    if (auto hex = lcpi::FindGnuBuildIdInNoteBlob(ss.str())) {
      CHECK(id->identity == "kernel:" + *hex);
      CHECK(id->build_id == *hex);
    }
  }

  TempDir dir;
  WriteFile(dir / "notes", Note(3, kGnu, kDesc));
  CHECK(lcpi::IdentifyRunningKernel(dir / "notes")->identity == "kernel:" + kDescHex);
  // No notes: the release string.
  struct utsname u;
  REQUIRE(uname(&u) == 0);
  auto fallback = lcpi::IdentifyRunningKernel(dir / "none");
  REQUIRE(fallback.has_value());
  CHECK(fallback->identity == std::string("kernel:") + u.release);
  CHECK(fallback->build_id.empty());
}

TEST_CASE("kernel modules are identified from /sys/module notes") {
  TempDir dir;
  std::filesystem::create_directories(dir / "withid/notes");
  WriteFile(dir / "withid/notes/.note.gnu.build-id", Note(3, kGnu, kDesc));
  std::filesystem::create_directories(dir / "noid");
  std::filesystem::create_directories(dir / "badnote/notes");
  WriteFile(dir / "badnote/notes/.note.gnu.build-id", "\x04\x00");

  auto a = lcpi::IdentifyKernelModule("withid", dir / "");
  REQUIRE(a.has_value());
  CHECK(a->identity == "module:withid:" + kDescHex);
  CHECK(a->build_id == kDescHex);
  CHECK(lcpi::IdentifyKernelModule("noid", dir / "")->identity == "module:noid");
  CHECK(lcpi::IdentifyKernelModule("badnote", dir / "")->identity == "module:badnote");
  CHECK(lcpi::IdentifyKernelModule("absent", dir / "").error().code() == Errc::kNotFound);
  CHECK(lcpi::IdentifyKernelModule("../x", dir / "").error().code() == Errc::kInvalidArgument);
  CHECK(lcpi::IdentifyKernelModule("", dir / "").error().code() == Errc::kInvalidArgument);
}

namespace {

// A copy of `bin` with `extra` more program headers, each a PT_LOAD over
// the whole file (crafted_elf.h), extended to `sparse_size` when that is
// more. The bytes are crafted here, in the test; the product reads them only
// through libelf.
std::string WithWholeFileLoads(const TempDir& dir, const std::string& bin, uint32_t extra,
                               uint64_t sparse_size = 0) {
  const std::string bytes = lcpi::testing::WithWholeFileLoads(ReadFile(bin), extra, sparse_size);
  REQUIRE(!bytes.empty());
  const std::string out = dir / (std::filesystem::path(bin).filename().string() + ".phdrs");
  WriteFile(out, bytes);
  if (sparse_size > bytes.size())
    REQUIRE(truncate(out.c_str(), static_cast<off_t>(sparse_size)) == 0);
  return out;
}

}  // namespace

TEST_CASE("tens of thousands of program headers over the whole file are hashed once") {
  TempDir dir;
  const std::string bin = Build(dir, "plain", kProgram, "-Wl,--build-id=none");
  const std::string hostile = WithWholeFileLoads(dir, bin, 30000);
  // Each header covers the ~1.7 MB file: hashed once per header that is
  // 50 GB of reading. In a child, so a regression fails instead of hanging.
  const int status = lcpi::testing::ExitStatusWithin(10, [&] {
    auto id = IdentifyElfFile(hostile);
    return id.has_value() ? 0 : 1;
  });
  CHECK(status == 0);
  // Past the bound on program headers: named by what fstat says, marked.
  auto id = IdentifyElfFile(hostile);
  REQUIRE(id.has_value());
  CHECK(id->identity.rfind("file-stat:", 0) == 0);
  CHECK_FALSE(id->content_hashed);
  CHECK(id->bytes_hashed == 0);

  // Within the bound, each distinct byte is read once: the whole file.
  const std::string within = WithWholeFileLoads(dir, bin, 4000);
  auto wid = IdentifyElfFile(within);
  REQUIRE(wid.has_value());
  CHECK(wid->identity.rfind("content-hash:", 0) == 0);
  CHECK(wid->bytes_hashed == std::filesystem::file_size(within));
  // The same layout whatever the order or number of the duplicates: stable.
  auto again = IdentifyElfFile(within);
  REQUIRE(again.has_value());
  CHECK(again->identity == wid->identity);
}

TEST_CASE("a file too slow or too big to hash gets a marked weaker identity") {
  TempDir dir;
  const std::string bin = Build(dir, "budget", kProgram, "-Wl,--build-id=none");
  lcpi::HashLimits small;
  small.max_bytes = 1024;
  auto weak = IdentifyElfFile(bin, small);
  REQUIRE(weak.has_value());
  CHECK(weak->identity.rfind("file-stat:", 0) == 0);
  CHECK(weak->bytes_hashed == 0);  // over the budget: nothing read
  lcpi::HashLimits no_time;
  no_time.max_time = std::chrono::milliseconds(-1);
  auto late = IdentifyElfFile(bin, no_time);
  REQUIRE(late.has_value());
  CHECK(late->identity == weak->identity);  // same file, same metadata
  // A copy is another file: another weak identity, unlike a content hash.
  const std::string copy = dir / "budget_copy";
  std::filesystem::copy_file(bin, copy);
  auto other = IdentifyElfFile(copy, small);
  REQUIRE(other.has_value());
  CHECK(other->identity != weak->identity);
  auto full = IdentifyElfFile(bin);
  REQUIRE(full.has_value());
  CHECK(full->identity.rfind("content-hash:", 0) == 0);
  CHECK(full->headers_hash == weak->headers_hash);
}

TEST_CASE("a huge sparse file without a build-id is not read whole") {
  TempDir dir;
  const std::string bin = Build(dir, "sparse", kProgram, "-Wl,--build-id=none");
  // 64 GiB of hole under one loadable segment: minutes of reading zeros.
  const std::string huge = WithWholeFileLoads(dir, bin, 1, uint64_t{64} << 30);
  const int status = lcpi::testing::ExitStatusWithin(10, [&] {
    auto id = IdentifyElfFile(huge);
    return id.has_value() ? 0 : 1;
  });
  CHECK(status == 0);
  auto id = IdentifyElfFile(huge);
  REQUIRE(id.has_value());
  CHECK(id->identity.rfind("file-stat:", 0) == 0);
  CHECK(id->bytes_hashed == 0);
}

TEST_CASE("a file claiming another's build-id does not get its identity") {
  TempDir dir;
  // Any user may link any build-id into a program of their own.
  const std::string real = Build(dir, "real", kProgram, "-Wl,--build-id");
  const std::string claimed = ReadelfBuildId(real);
  REQUIRE(!claimed.empty());
  const std::string forged =
      Build(dir, "forged", kOtherProgram, "-Wl,--build-id=0x" + claimed + " -Wl,-z,norelro");
  REQUIRE(ReadelfBuildId(forged) == claimed);
  auto a = IdentifyElfFile(real);
  auto b = IdentifyElfFile(forged);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(a->build_id == b->build_id);  // the claim is still read
  CHECK(a->identity != b->identity);  // but it is not the identity
  CHECK(lcpi::BuildIdOfIdentity(a->identity) == claimed);
  CHECK(lcpi::BuildIdOfIdentity(b->identity) == claimed);
  // A copy, stripped or not, is still the same image.
  const std::string copy = dir / "real_copy";
  std::filesystem::copy_file(real, copy);
  auto c = IdentifyElfFile(copy);
  REQUIRE(c.has_value());
  CHECK(c->identity == a->identity);
  // Identities recorded before (the build-id alone) still match the file.
  CHECK(lcpi::IdentityMatches("build-id:" + claimed, *a));
  CHECK(lcpi::IdentityMatches(a->identity, *a));
  CHECK_FALSE(lcpi::IdentityMatches(a->identity, *b));
}
