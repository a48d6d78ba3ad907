// listing_source.cpp - lcpilist's source lines: each instruction's file and
// line from libdw, the text of the line from the source file when readable,
// and the counts summed per source line (--lines).
#include <fstream>
#include <map>

#include "libprofile/report/listing_steps.h"

namespace lcpi::report {

namespace {

// The lines of source files, read once.
class SourceCache {
 public:
  std::string Line(const std::string& file, int line) {
    auto it = files_.find(file);
    if (it == files_.end()) {
      std::vector<std::string> lines;
      std::ifstream in(file);
      for (std::string l; std::getline(in, l);) lines.push_back(l);
      it = files_.emplace(file, std::move(lines)).first;
    }
    if (line < 1 || static_cast<size_t>(line) > it->second.size()) return "";
    return it->second[line - 1];
  }

 private:
  std::map<std::string, std::vector<std::string>> files_;
};

}  // namespace

void AttachSource(const ElfImage& elf, bool text, std::vector<Instruction>* instructions) {
  SourceCache cache;
  for (Instruction& i : *instructions) {
    if (i.text == kNoCode) continue;
    if (auto src = elf.SourceLine(i.address)) {
      i.source_file = src->file;
      i.source_line = src->line;
      if (text) i.source_text = cache.Line(src->file, src->line);
    }
  }
}

std::vector<SourceLineRow> SourceLineRows(const std::vector<Instruction>& instructions,
                                          size_t events) {
  SourceCache cache;
  std::map<std::pair<std::string, int>, SourceLineRow> rows;
  for (const Instruction& i : instructions) {
    auto key = std::make_pair(i.source_file.value_or("??"), i.source_line);
    SourceLineRow& r = rows[key];
    if (r.counts.empty()) {
      r.file = key.first;
      r.line = key.second;
      r.text = i.source_file ? cache.Line(*i.source_file, i.source_line) : "";
      r.counts.assign(events, 0);
    }
    for (size_t e = 0; e < i.counts.size(); ++e) r.counts[e] += i.counts[e];
  }
  std::vector<SourceLineRow> out;
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  return out;
}

}  // namespace lcpi::report
