// fuzz_elf_image.cpp - fuzz target for image identity and symbolization: the
// input is a whole file, as the tools would find it on disk where a binary
// was (truncated, replaced, or hostile). It goes through IdentifyElfFile,
// ElfImage::Open and every lookup ElfImage offers (symbols, offset <-> vaddr,
// source lines through libdw, code bytes), and through the note-blob
// build-id reader used for /sys/kernel/notes. Each must give an answer or an
// Error, never crash, hang or read out of bounds. The file lives in a memfd
// (no disk traffic), named by its /proc/self/fd path.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "libprofile/image/elf_symbols.h"
#include "libprofile/image/image_id.h"

namespace {

// Runs every lookup at `vaddr` and at the same value taken as a file offset.
void Probe(const lcpi::ElfImage& image, uint64_t v) {
  (void)image.Lookup(v);
  (void)image.LookupFileOffset(v);
  if (auto off = image.VaddrToFileOffset(v)) (void)image.FileOffsetToVaddr(*off);
  if (auto va = image.FileOffsetToVaddr(v)) (void)image.VaddrToFileOffset(*va);
  (void)image.SourceLine(v);
  (void)image.ReadBytes(v, 16);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)lcpi::FindGnuBuildIdInNoteBlob(std::string_view(reinterpret_cast<const char*>(data), size));

  int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
  if (fd < 0) std::abort();
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);

  (void)lcpi::IdentifyElfFile(path);
  // No debug root: what this host has under /usr/lib/debug is no input.
  auto image = lcpi::ElfImage::Open(path, "");
  if (image) {
    const lcpi::ElfImage& img = **image;
    (void)img.identity();
    // Bounded: a file may claim millions of symbols; probing a few suffices.
    size_t probed = 0;
    for (const lcpi::ElfSymbol& sym : img.symbols()) {
      if (sym.end <= sym.addr) std::abort();  // the header promises end > addr
      if (probed++ >= 64) break;
      Probe(img, sym.addr);
      Probe(img, sym.end - 1);
      auto found = img.Symbol(sym.name);
      if (!found) std::abort();  // every listed symbol can be found by name
    }
    (void)img.Symbol("no-such-function");
    probed = 0;
    for (const lcpi::LoadSegment& seg : img.segments()) {
      if (probed++ >= 16) break;
      Probe(img, seg.vaddr);
      Probe(img, seg.vaddr + seg.memsz);
      Probe(img, seg.offset);
      Probe(img, seg.offset + seg.filesz);
      (void)img.ReadBytes(seg.vaddr, static_cast<size_t>(seg.filesz > 4096 ? 4096 : seg.filesz));
    }
    Probe(img, 0);
    Probe(img, UINT64_MAX);
    Probe(img, UINT64_MAX / 2);
  }
  close(fd);
  return 0;
}
