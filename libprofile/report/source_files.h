// source_files.h - the source lines lcpilist --source and --lines (and
// lcpiprof's HTML page) print. The path of a source file comes from the
// image's DWARF line table, which whoever built the image wrote, and the
// tools often run as root: so a source file is read only when everyone may
// read it (OpenPublicFile), unless the caller asks for its own rights
// (--source-any); never a FIFO, device or directory; at most
// kMaxSourceFileBytes per file and kMaxSourceBytes per listing; lines cut at
// kMaxSourceLineBytes. A file withheld gives a warning that says why.
#ifndef LCPI_LIBPROFILE_REPORT_SOURCE_FILES_H
#define LCPI_LIBPROFILE_REPORT_SOURCE_FILES_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lcpi::report {

constexpr uint64_t kMaxSourceFileBytes = 16ull << 20;  // sqlite3.c is 9 MiB
constexpr uint64_t kMaxSourceBytes = 64ull << 20;      // all files of one listing
constexpr size_t kMaxSourceLineBytes = 1024;           // longer lines end in "[...]"
constexpr size_t kMaxSourceWarnings = 8;               // files named; the rest counted

class SourceFiles {
 public:
  // any: open with the caller's own rights (still only regular files, still
  // bounded), instead of only files everyone may read.
  explicit SourceFiles(bool any) : any_(any) {}

  // Line `line` (from 1) of `file`, "" when it has no such line or the file
  // is withheld. Each file is read once.
  std::string Line(const std::string& file, int line);

  // One warning per withheld file (the first kMaxSourceWarnings), then how
  // many more.
  std::vector<std::string> Warnings() const;

 private:
  // The lines of `file`, or a reason in *why.
  std::vector<std::string> Read(const std::string& file, std::string* why);

  bool any_;
  uint64_t bytes_read_ = 0;
  std::map<std::string, std::vector<std::string>> files_;
  std::vector<std::string> withheld_;  // "<path>: <why>"
};

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_SOURCE_FILES_H
