// alt_dwarf.h - the DWARF supplementary file (dwz's multifile, named by
// .gnu_debugaltlink), found by lcpi's rules and handed to libdw.
//
// Left to itself, libdw (0.188) opens the supplementary file the first time
// a string or a DIE points into it: /usr/lib/debug/.build-id/<id>.debug,
// else whatever path the link names, with a plain open(2). That path is the
// image author's choice, so a tool reading a user's image would wait for
// ever on a FIFO there, or read another user's ELF file that root may read
// and print its strings as source paths. AttachAltDwarf finds the file
// itself (debuginfo.h's FindSupplementaryFile) and gives it to libdw with
// dwarf_setalt, or, if there is none to trust, an empty stand-in, so that
// libdw never looks on its own: what pointed into the file is then missing
// (a source path without its directory), never wrong.
#ifndef LCPI_LIBPROFILE_IMAGE_ALT_DWARF_H
#define LCPI_LIBPROFILE_IMAGE_ALT_DWARF_H

#include <elfutils/libdw.h>

#include <memory>
#include <string>
#include <vector>

#include "libprofile/image/debuginfo.h"

namespace lcpi {

// What a Dwarf's supplementary file needs kept: the file and its Dwarf, or
// the stand-in. Must outlive the Dwarf it was attached to (dwarf_end that
// one first).
class AltDwarf {
 public:
  ~AltDwarf();
  AltDwarf(const AltDwarf&) = delete;
  AltDwarf& operator=(const AltDwarf&) = delete;

  // The file found, or nullptr where the stand-in was given.
  const DebugFile* file() const { return file_.get(); }

 private:
  friend bool AttachAltDwarf(Dwarf*, const std::string&, const std::string&,
                             std::unique_ptr<AltDwarf>*);
  AltDwarf() = default;
  std::unique_ptr<DebugFile> file_;
  Dwarf* dwarf_ = nullptr;         // the file's, or nullptr
  std::vector<char> empty_bytes_;  // the stand-in: an ELF file in memory
  Elf* empty_elf_ = nullptr;
  Dwarf* empty_dwarf_ = nullptr;
};

// Gives `main`, the DWARF of the file at `naming_file`, its supplementary
// file if .gnu_debugaltlink names one, keeping what it needs in *kept
// (nullptr when the link names none: libdw then looks for nothing either).
// False if it could give neither the file nor the stand-in (no memory): the
// caller must then not use `main`, which would let libdw look on its own.
bool AttachAltDwarf(Dwarf* main, const std::string& naming_file, const std::string& debug_root,
                    std::unique_ptr<AltDwarf>* kept);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_ALT_DWARF_H
