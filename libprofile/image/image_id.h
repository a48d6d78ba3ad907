// image_id.h - the identity of an image by its content, not its path.
//
// lcpi files samples under an image identity so that a binary replaced on
// disk gets a new image row and old profiles stay attributable to the code
// they measured. The identity is the ELF GNU build-id where the linker wrote
// one, with a hash of the file's layout ("build-id:<hex>:<layout hex>": a
// build-id is chosen by whoever links the file, so it is a claim, not an
// identity; older databases hold "build-id:<hex>" alone), else a hash of the ELF header, the
// program headers, the file size and every distinct byte of the loadable segments
// ("content-hash:<hex>"), within HashLimits: a file past them (more bytes
// or program headers than a real image has, or too slow to read) is named
// by what fstat says of it instead ("file-stat:<dev>:<ino>:<size>:<mtime>:
// <ctime>:<headers hash>"), a weaker identity the reports say is one. A file
// not owned by root has ":u<uid>" appended to its "build-id:" or
// "content-hash:" identity: a user's copy of a system file, patched where
// the layout hash does not look, is never filed under root's image. The
// running kernel and its modules
// are identified from the build-id notes the kernel exports in /sys
// ("kernel:<hex>", "module:<name>:<hex>"), with fallbacks when none exist.
#ifndef LCPI_LIBPROFILE_IMAGE_IMAGE_ID_H
#define LCPI_LIBPROFILE_IMAGE_IMAGE_ID_H

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "libprofile/base/error.h"

// libelf's handle; the full definition is in <libelf.h>.
struct Elf;

namespace lcpi {

struct ImageIdentity {
  // "build-id:<hex>:<layout>", "content-hash:<hex>", "file-stat:...", "kernel:...",
  // "module:..."
  std::string identity;
  std::string build_id;    // lower-case hex; empty when the image has none
  uint64_t file_size = 0;  // bytes on disk; 0 for the kernel and modules
  // A hash of the ELF header, the program headers looked at and the file
  // size (0 for the kernel and modules): cheap, bounded, and different for
  // two files that differ in layout or size.
  uint64_t headers_hash = 0;
  // A hash of what the loader maps (ELF identification, type, machine,
  // entry, program headers): the same for a stripped copy, different for
  // another file claiming the same build-id with another layout.
  uint64_t layout_hash = 0;
  uint64_t bytes_hashed = 0;   // of the loadable segments' content
  bool content_hashed = true;  // false: "file-stat:", a budget was hit
};

// What identifying one file may cost: the file is named by its content only
// within these; past any of them, by its metadata ("file-stat:").
struct HashLimits {
  uint64_t max_bytes = uint64_t{256} << 20;  // distinct bytes of loadable segments
  std::chrono::milliseconds max_time{5000};  // wall time hashing them
  size_t max_program_headers = 4096;         // real images have about a dozen
};

// Identifies the ELF file at `path`. Errors: kNotFound (no such file),
// kPermission, kIo, kBadElf (not ELF, truncated, malformed headers).
Expected<ImageIdentity> IdentifyElfFile(const std::string& path, const HashLimits& limits = {});

// Identifies the ELF file open as `fd` (a regular file of `file_size`
// bytes; the caller keeps and closes fd). `name` is for messages.
Expected<ImageIdentity> IdentifyElfFd(int fd, uint64_t file_size, const std::string& name,
                                      const HashLimits& limits = {});

// Identifies an ELF already opened with libelf from `fd` (used by ElfImage so
// the file is parsed once). `file_size` is the size of the file behind `elf`;
// without a build-id the loadable segments are read from `fd` with pread.
Expected<ImageIdentity> IdentifyElf(Elf* elf, int fd, uint64_t file_size,
                                    const HashLimits& limits = {});

// The GNU build-id of an opened ELF in hex, empty when it has none. Looks in
// SHT_NOTE sections first, then PT_NOTE segments (stripped section headers):
// in at most the first 16 note areas, 64 KiB of each, and not at all in the
// sections or segments of a file with more than kMaxNoteHeaders of them (a
// hostile file may claim thousands of notes, each as large as the file).
// IdentifyElf spends its HashLimits' deadline and bytes on this search too.
inline constexpr size_t kMaxNoteHeaders = 4096;
// A build-id longer than this is not taken: the image is named by its
// content as a file without one is. GNU build-ids are 20 bytes (sha1), the
// kernel's side band carries at most 20, and an identity is repeated in
// every row lcpi-ship sends, so a user's huge one (the linker takes any
// length) must not become one.
inline constexpr size_t kMaxBuildIdBytes = 64;
std::string ElfBuildIdHex(Elf* elf);
// The same within `budget`, which it updates.
struct NoteBudget {
  std::chrono::steady_clock::time_point deadline;
  uint64_t max_bytes = 0;
  uint64_t file_size = 0;  // note areas past it are not read
  uint64_t bytes_read = 0;
  size_t looked = 0;
  bool exhausted = false;  // a bound stopped the search
};
std::string ElfBuildIdHex(Elf* elf, NoteBudget* budget);

// The calling process's own executable (`exe`: /proc/self/exe, the running
// file itself even if replaced on disk since), identified as the image
// table identifies a mapping of it: lcpid stores this per window so the
// reports' observer line matches its code by identity, never by a name.
Expected<ImageIdentity> IdentifySelf(const std::string& exe = "/proc/self/exe");

// The running kernel: "kernel:<build-id hex>" from `notes_path` (the raw note
// blob /sys/kernel/notes), else "kernel:<uname -r>".
Expected<ImageIdentity> IdentifyRunningKernel(const std::string& notes_path = "/sys/kernel/notes");

// A loaded module: "module:<name>:<build-id hex>" from
// <sys_module_dir>/<name>/notes/.note.gnu.build-id, else "module:<name>".
// kNotFound when <sys_module_dir>/<name> does not exist.
Expected<ImageIdentity> IdentifyKernelModule(const std::string& name,
                                             const std::string& sys_module_dir = "/sys/module");

// Finds the NT_GNU_BUILD_ID note in a raw blob of ELF notes (the format of
// /sys/kernel/notes, which is not an ELF file) and returns its descriptor in
// hex. Every header and length is checked against the end of the blob; a
// malformed blob yields nullopt, never a read out of bounds.
std::optional<std::string> FindGnuBuildIdInNoteBlob(std::string_view blob);

// The build-id an identity claims ("build-id:<hex>[:<layout>][:u<uid>]" -> hex), else "".
std::string BuildIdOfIdentity(const std::string& identity);
// Whether the file identified as `found` is the image recorded as `recorded`:
// the same identity, or, for an identity recorded before layouts were part
// of it, the same build-id.
bool IdentityMatches(const std::string& recorded, const ImageIdentity& found);
// `identity` without its owner (":u<uid>", a file root does not own): what
// lcpid's own, root-owned copy of that file in the image cache identifies
// as. The cache files a user's copy under the whole identity (owner
// included), so a copy found there is checked against this.
std::string WithoutOwner(const std::string& identity);
// `identity` as a file of `owner` has it (":u<uid>" added unless root's).
std::string WithOwner(const std::string& identity, uid_t owner);

// Lower-case hex of `size` bytes.
std::string HexBytes(const void* data, size_t size);

// Makes libelf usable (elf_version); cheap after the first call. False when
// the libelf in use cannot handle the current ELF version.
bool InitLibelf();

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_IMAGE_ID_H
