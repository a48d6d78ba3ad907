// source_files.cpp - SourceFiles: bounded reads of the source files an
// image's DWARF names, only those everyone may read unless asked otherwise.
#include "libprofile/report/source_files.h"

#include <unistd.h>

#include "libprofile/base/public_file.h"
#include "libprofile/base/regular_file.h"

namespace lcpi::report {

std::string SourceFiles::Line(const std::string& file, int line) {
  auto it = files_.find(file);
  if (it == files_.end()) {
    std::string why;
    std::vector<std::string> lines = Read(file, &why);
    if (!why.empty()) withheld_.push_back(why);
    it = files_.emplace(file, std::move(lines)).first;
  }
  if (line < 1 || static_cast<size_t>(line) > it->second.size()) return "";
  return it->second[line - 1];
}

std::vector<std::string> SourceFiles::Read(const std::string& file, std::string* why) {
  struct stat st;
  uint64_t size = 0;
  Expected<int> fd = any_ ? OpenRegularFile(file, &size) : OpenPublicFile(file, &st);
  if (!fd) {
    // A source that is simply not on this host is the common case: no warning.
    if (fd.error().code() != Errc::kNotFound) {
      *why = "source withheld: " + fd.error().message() +
             (any_ || fd.error().code() != Errc::kPermission ? "" : "; --source-any reads it");
    }
    return {};
  }
  if (!any_) size = static_cast<uint64_t>(st.st_size);
  std::vector<std::string> lines;
  if (size > kMaxSourceFileBytes || bytes_read_ + size > kMaxSourceBytes) {
    *why = "source withheld: " + file + ": " + std::to_string(size) + " bytes, over the bound of " +
           std::to_string(size > kMaxSourceFileBytes ? kMaxSourceFileBytes
                                                     : kMaxSourceBytes - bytes_read_) +
           (size > kMaxSourceFileBytes ? " per file" : " left for this listing");
    close(*fd);
    return lines;
  }
  // One byte past the size: a file that grew since fstat is refused too.
  Expected<std::string> text = ReadBounded(*fd, 0, size + 1, file);
  close(*fd);
  if (!text || text->size() > size) {
    *why = "source withheld: " + (text ? file + ": grew while read" : text.error().message());
    return lines;
  }
  bytes_read_ += text->size();
  for (size_t at = 0; at < text->size();) {
    size_t nl = text->find('\n', at);
    if (nl == std::string::npos) nl = text->size();
    std::string l = text->substr(at, std::min(nl - at, kMaxSourceLineBytes));
    if (nl - at > kMaxSourceLineBytes) l += "[...]";
    lines.push_back(std::move(l));
    at = nl + 1;
  }
  return lines;
}

std::vector<std::string> SourceFiles::Warnings() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < withheld_.size() && i < kMaxSourceWarnings; ++i) {
    out.push_back(withheld_[i]);
  }
  if (withheld_.size() > kMaxSourceWarnings) {
    out.push_back(std::to_string(withheld_.size() - kMaxSourceWarnings) +
                  " more source files withheld");
  }
  return out;
}

}  // namespace lcpi::report
