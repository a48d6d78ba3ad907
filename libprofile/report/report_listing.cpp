// report_listing.cpp - the data behind lcpilist: one procedure (or address
// range) of one image, instruction by instruction, each with its samples per
// event, disassembled by Capstone from the image on disk, with source lines
// from libdw. When the image on disk is missing or not the profiled build, it
// says so and still lists what it can: the counts per offset.
#include <capstone/capstone.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <limits>

#include "libprofile/report/report.h"
#include "libprofile/report/report_symbols.h"

namespace lcpi::report {

namespace {

Expected<uint64_t> ParseHex(const std::string& s) {
  std::string t = s;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) t = t.substr(2);
  if (t.empty() || t.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos ||
      t.size() > 16) {
    return Error(Errc::kInvalidArgument, "not a hexadecimal address: " + s);
  }
  return std::stoull(t, nullptr, 16);
}

bool ImageMatches(const ImageInfo& image, const std::string& filter) {
  return filter.empty() || image.identity == filter || image.path.find(filter) != std::string::npos;
}

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

// Disassembles `bytes` at `vaddr`: one Instruction per decoded instruction;
// an undecodable byte becomes ".byte 0x..", and decoding resumes after it.
std::vector<Instruction> Disassemble(const std::vector<uint8_t>& bytes, uint64_t vaddr,
                                     uint64_t file_offset) {
  std::vector<Instruction> out;
  csh handle;
#if defined(__aarch64__)
  if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &handle) != CS_ERR_OK) return out;
#else
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) return out;
#endif
  cs_insn* insn = cs_malloc(handle);
  const uint8_t* code = bytes.data();
  size_t size = bytes.size();
  uint64_t address = vaddr;
  while (size > 0) {
    Instruction i;
    i.address = address;
    i.offset = file_offset + (address - vaddr);
    if (cs_disasm_iter(handle, &code, &size, &address, insn)) {
      i.size = insn->size;
      i.text = insn->mnemonic;
      if (insn->op_str[0]) i.text += std::string(" ") + insn->op_str;
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, ".byte 0x%02x", *code);
      i.size = 1;
      i.text = buf;
      ++code;
      --size;
      ++address;
    }
    out.push_back(std::move(i));
  }
  cs_free(insn, 1);
  cs_close(&handle);
  return out;
}

}  // namespace

Expected<void> ParseRange(const std::string& text, ListOptions* options) {
  size_t colon = text.rfind(':');
  size_t dash = colon == std::string::npos ? std::string::npos : text.find('-', colon);
  if (colon == std::string::npos || colon == 0 || dash == std::string::npos) {
    return Error(Errc::kInvalidArgument, "--range takes IMAGE:START-END, not " + text);
  }
  auto lo = ParseHex(text.substr(colon + 1, dash - colon - 1));
  if (!lo) return lo.error();
  auto hi = ParseHex(text.substr(dash + 1));
  if (!hi) return hi.error();
  if (*lo >= *hi) return Error(Errc::kInvalidArgument, "--range: START must be below END");
  options->has_range = true;
  options->image = text.substr(0, colon);
  options->range_lo = *lo;
  options->range_hi = *hi;
  return {};
}

Expected<Listing> BuildListing(ProfileDb& db, const ListOptions& options) {
  if (!options.has_range && options.procedure.empty()) {
    return Error(Errc::kInvalidArgument, "name a procedure or give --range IMAGE:START-END");
  }
  auto snap = db.BeginSnapshot();
  if (!snap) return snap.error();
  SnapshotGuard end(db);

  Listing l;
  l.source = options.source;
  l.by_lines = options.lines;
  auto header = ReadHeader(db, options.epoch, options.events);
  if (!header) return header.error();
  l.header = std::move(*header);
  const int64_t epoch = QueryEpoch(l.header);

  // Candidate images: those the filter names, the ones with samples first.
  auto images = db.ListImages();
  if (!images) return images.error();
  auto totals = db.ImageTotals(epoch);
  if (!totals) return totals.error();
  std::map<int64_t, uint64_t> samples;
  for (const ImageTotal& t : *totals) samples[t.image_id] += t.count;
  std::vector<ImageInfo> candidates;
  for (const ImageInfo& i : *images) {
    if (ImageMatches(i, options.image)) candidates.push_back(i);
  }
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [&](const ImageInfo& a, const ImageInfo& b) { return samples[a.id] > samples[b.id]; });
  if (candidates.empty()) return Error(Errc::kNotFound, "no such image: " + options.image);

  ImageInfo image;
  ImageSymbolizer sym;
  uint64_t lo = 0, hi = 0;  // file offsets (kernel: offsets from the base)
  if (options.has_range) {
    if (candidates.size() > 1 && samples[candidates[1].id] > 0) {
      std::string names;
      for (const ImageInfo& c : candidates) names += "\n  " + c.path + " (" + c.identity + ")";
      return Error(Errc::kInvalidArgument,
                   "image " + options.image + " is ambiguous; name one of:" + names);
    }
    image = candidates.front();
    sym = ImageSymbolizer::Load(db, image, &l.warnings);
    lo = options.range_lo;
    hi = options.range_hi;
    if (sym.elf()) {
      auto flo = sym.elf()->VaddrToFileOffset(lo);
      if (!flo) {
        return Error(Errc::kInvalidArgument, "address not in the file of " + image.path);
      }
      hi = *flo + (hi - lo);
      lo = *flo;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64 "-0x%" PRIx64, options.range_lo, options.range_hi);
    l.procedure = buf;
  } else {
    // Every image holding the procedure; the one with the most samples in it wins.
    uint64_t best = 0;
    bool found = false;
    std::vector<std::string> others, candidate_warnings;
    for (const ImageInfo& c : candidates) {
      std::vector<std::string> w;
      ImageSymbolizer s = ImageSymbolizer::Load(db, c, &w);
      for (const Procedure& p : s.FindByName(options.procedure, /*untrusted=*/true)) {
        uint64_t n = 0;
        for (const EventInfo& e : l.header.events) {
          auto oc = db.OffsetCounts(epoch, c.id, e.id, p.lo, p.hi);
          if (!oc) return oc.error();
          for (const OffsetCount& o : *oc) n += o.count;
        }
        if (found) others.push_back(c.path);
        if (!found || n > best) {
          if (found) others.back() = image.path;
          image = c;
          sym = s;
          lo = p.lo;
          hi = p.hi;
          best = n;
          candidate_warnings = w;
          found = true;
        }
      }
      if (!found && c.kind == "user" && !s.elf())
        candidate_warnings.insert(candidate_warnings.end(), w.begin(), w.end());
    }
    if (!found) {
      std::string why;
      for (const std::string& w : candidate_warnings) why += "; " + w;
      return Error(Errc::kNotFound, "no such procedure: " + options.procedure +
                                        (options.image.empty() ? "" : " in " + options.image) +
                                        why);
    }
    l.warnings.insert(l.warnings.end(), candidate_warnings.begin(), candidate_warnings.end());
    for (const std::string& o : others) {
      l.warnings.push_back(options.procedure + " is also in " + o + " (listing " + image.path +
                           "; name the image to choose)");
    }
    l.procedure = options.procedure;
  }
  l.image = image.path;
  l.identity = image.identity;
  l.kind = image.kind;

  // Counts per offset in [lo, hi).
  std::map<uint64_t, std::vector<uint64_t>> counts;
  l.totals.assign(l.header.events.size(), 0);
  for (size_t e = 0; e < l.header.events.size(); ++e) {
    auto oc = db.OffsetCounts(epoch, image.id, l.header.events[e].id, lo, hi);
    if (!oc) return oc.error();
    for (const OffsetCount& o : *oc) {
      auto& v = counts[o.offset];
      v.resize(l.header.events.size(), 0);
      v[e] += o.count;
      l.totals[e] += o.count;
    }
  }

  const ElfImage* elf = sym.elf();
  std::optional<uint64_t> vlo = elf ? elf->FileOffsetToVaddr(lo) : std::nullopt;
  if (elf && vlo) {
    l.lo = *vlo;
    l.hi = *vlo + (hi - lo);
    auto bytes = elf->ReadBytes(*vlo, hi - lo);
    if (bytes) {
      l.instructions = Disassemble(*bytes, *vlo, lo);
    } else {
      l.warnings.push_back("cannot read the code of " + image.path + ": " +
                           bytes.error().message());
    }
  } else {
    l.lo = lo;
    l.hi = hi;
    if (image.kind != "user") {
      l.warnings.push_back("no code for " + image.path + " (" + image.kind +
                           " image): counts per offset only");
    }
  }
  if (l.instructions.empty()) {
    // What can be printed without the code: each sampled offset.
    for (const auto& [offset, c] : counts) {
      Instruction i;
      i.address = l.lo + (offset - lo);
      i.offset = offset;
      i.size = 1;
      i.text = "(no code)";
      l.instructions.push_back(std::move(i));
    }
  }
  SourceCache source_cache;
  for (Instruction& i : l.instructions) {
    i.counts.assign(l.header.events.size(), 0);
    for (auto it = counts.lower_bound(i.offset);
         it != counts.end() && it->first < i.offset + i.size; ++it) {
      for (size_t e = 0; e < it->second.size(); ++e) i.counts[e] += it->second[e];
    }
    if (elf && (options.source || options.lines) && i.text != "(no code)") {
      if (auto src = elf->SourceLine(i.address)) {
        i.source_file = src->file;
        i.source_line = src->line;
        if (options.source) i.source_text = source_cache.Line(src->file, src->line);
      }
    }
  }
  if (options.lines) {
    SourceCache& cache = source_cache;
    std::map<std::pair<std::string, int>, SourceLineRow> rows;
    for (const Instruction& i : l.instructions) {
      auto key = std::make_pair(i.source_file.value_or("??"), i.source_line);
      SourceLineRow& r = rows[key];
      if (r.counts.empty()) {
        r.file = key.first;
        r.line = key.second;
        r.text = i.source_file ? cache.Line(*i.source_file, i.source_line) : "";
        r.counts.assign(l.header.events.size(), 0);
      }
      for (size_t e = 0; e < i.counts.size(); ++e) r.counts[e] += i.counts[e];
    }
    for (auto& [k, r] : rows) l.lines.push_back(std::move(r));
  }
  return l;
}

}  // namespace lcpi::report
