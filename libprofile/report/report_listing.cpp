// report_listing.cpp - the data behind lcpilist: one procedure (or address
// range) of one image, instruction by instruction, each with its samples per
// event, disassembled by Capstone from the image on disk, with source lines
// from libdw. BuildListing runs the jobs of listing_steps.h in turn: choose
// the image and range, count, disassemble, spread the counts, attach the
// source. When the image on disk is missing or not the profiled build, it
// says so and still lists what it can: the counts per offset.
#include "libprofile/base/saturating.h"
#include "libprofile/base/text.h"
#include "libprofile/report/listing_steps.h"
#include "libprofile/report/report.h"

namespace lcpi::report {

namespace {

// An address of --range: hex, with or without 0x (the one parser, base/text.h).
Expected<uint64_t> ParseAddress(const std::string& text) {
  std::optional<uint64_t> value = ParseHex(text);
  if (!value) return Error(Errc::kInvalidArgument, "not a hexadecimal address: " + text);
  return *value;
}

}  // namespace

Expected<void> ParseRange(const std::string& text, ListOptions* options) {
  size_t colon = text.rfind(':');
  size_t dash = colon == std::string::npos ? std::string::npos : text.find('-', colon);
  if (colon == std::string::npos || colon == 0 || dash == std::string::npos) {
    return Error(Errc::kInvalidArgument, "--range takes IMAGE:START-END, not " + text);
  }
  auto lo = ParseAddress(text.substr(colon + 1, dash - colon - 1));
  if (!lo) return lo.error();
  auto hi = ParseAddress(text.substr(dash + 1));
  if (!hi) return hi.error();
  if (*lo >= *hi) return Error(Errc::kInvalidArgument, "--range: START must be below END");
  options->has_range = true;
  options->image = text.substr(0, colon);
  options->range_lo = *lo;
  options->range_hi = *hi;
  return {};
}

void SpreadCounts(const CountsByOffset& counts, size_t events,
                  std::vector<Instruction>* instructions) {
  for (Instruction& i : *instructions) {
    i.counts.assign(events, 0);
    for (auto it = counts.lower_bound(i.offset);
         it != counts.end() && it->first < i.offset + i.size; ++it) {
      for (size_t e = 0; e < it->second.size(); ++e)
        i.counts[e] = SaturatingAdd(i.counts[e], it->second[e]);
    }
  }
}

Expected<Listing> BuildListing(ProfileDb& db, const ListOptions& options) {
  if (!options.has_range && options.procedure.empty()) {
    return Error(Errc::kInvalidArgument, "name a procedure or give --range IMAGE:START-END");
  }
  auto header = BeginReport(db, options.epoch, options.range, options.events);
  if (!header) return header.error();
  SnapshotGuard end(db);
  Listing l;
  l.header = std::move(*header);
  l.source = options.source;
  l.by_lines = options.lines;
  const size_t events = l.header.events.size();

  l.warnings = EventWarnings(l.header);
  auto target = ChooseTarget(db, l.header, options, &l.warnings);
  if (!target) return target.error();
  l.procedure = target->name;
  l.image = target->image.path;
  l.identity = target->image.identity;
  l.kind = target->image.kind;

  auto counts = CountOffsets(db, l.header, target->image.id, target->lo, target->hi);
  if (!counts) return counts.error();
  l.totals = SumCounts(*counts, events);
  ListCode(*target, *counts, &l);
  SpreadCounts(*counts, events, &l.instructions);
  const ElfImage* elf = target->symbols.elf();
  SourceFiles files(options.source_any);
  if (elf && (options.source || options.lines)) {
    AttachSource(*elf, options.source ? &files : nullptr, &l.instructions);
  }
  if (options.lines) l.lines = SourceLineRows(l.instructions, events, &files);
  for (std::string& w : files.Warnings()) l.warnings.push_back(std::move(w));
  return l;
}

}  // namespace lcpi::report
