// listing_source.cpp - lcpilist's source lines: each instruction's file and
// line from libdw, the text of the line from the source file when readable,
// and the counts summed per source line (--lines). What is read, and
// what is withheld, is SourceFiles' rule (source_files.h).
#include <map>

#include "libprofile/base/saturating.h"
#include "libprofile/report/listing_steps.h"

namespace lcpi::report {

void AttachSource(const ElfImage& elf, SourceFiles* files, std::vector<Instruction>* instructions) {
  for (Instruction& i : *instructions) {
    if (i.text == kNoCode) continue;
    if (auto src = elf.SourceLine(i.address)) {
      i.source_file = src->file;
      i.source_line = src->line;
      if (files) i.source_text = files->Line(src->file, src->line);
    }
  }
}

std::vector<SourceLineRow> SourceLineRows(const std::vector<Instruction>& instructions,
                                          size_t events, SourceFiles* files) {
  std::map<std::pair<std::string, int>, SourceLineRow> rows;
  for (const Instruction& i : instructions) {
    auto key = std::make_pair(i.source_file.value_or("??"), i.source_line);
    SourceLineRow& r = rows[key];
    if (r.counts.empty()) {
      r.file = key.first;
      r.line = key.second;
      r.text = i.source_file ? files->Line(*i.source_file, i.source_line) : "";
      r.counts.assign(events, 0);
    }
    for (size_t e = 0; e < i.counts.size(); ++e)
      r.counts[e] = SaturatingAdd(r.counts[e], i.counts[e]);
  }
  std::vector<SourceLineRow> out;
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  return out;
}

}  // namespace lcpi::report
