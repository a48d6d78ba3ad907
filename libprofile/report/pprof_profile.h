// pprof_profile.h - lcpiprof --format pprof: the samples of a selection
// (epoch(s), events, images) as a pprof profile (pprof_encode.h), one
// location per sampled offset. The table model (table.h) holds rows, not
// offsets, so this is built from the store directly, with the same offset
// counts (offset_counts.h) and procedure names (report_symbols.h) as
// lcpiprof -p.
//
// What the profile holds (docs/tools.md, "pprof"):
// - per event E two sample types: ("E_samples", "count"), the samples, and,
//   when the event has a mean period, ("E", unit) = samples x period, the unit
//   "nanoseconds" for what was sampled as cpu-clock or task-clock, else
//   "events". The default sample type is the first event's samples.
// - a Mapping per image: file = image path, build_id = the lowercase hex of a
//   "build-id:" identity, memory_start 0, memory_limit = largest sampled
//   offset + 1, file_offset 0.
// - a Location per sampled offset: address = the FILE OFFSET in the image
//   (for every kind of image), one Line naming its Function (and, from the
//   image's DWARF, its source line).
// - a Function per procedure, named as lcpiprof -p names it, including the
//   "<image>+0x10-0x2f" ranges of samples no symbol covers, so that pprof's
//   figures per function are lcpiprof -p's rows. Every location is named, so
//   every mapping says has_functions and pprof does not symbolize again.
// - one Sample per sampled offset (a one-frame stack: the flat profile has
//   no call chains), and, where call stacks are stored, one per stack
//   (innermost first) valued in a last sample type, "stack_samples", the
//   default then (so go tool pprof -top -cum and -traces show callers).
#ifndef LCPI_LIBPROFILE_REPORT_PPROF_PROFILE_H
#define LCPI_LIBPROFILE_REPORT_PPROF_PROFILE_H

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "libprofile/report/offset_counts.h"
#include "libprofile/report/pprof_encode.h"
#include "libprofile/report/report.h"
#include "libprofile/report/report_symbols.h"

namespace lcpi::report {

struct PprofOptions {
  std::string epoch;                // "" newest, "all", id or tag
  std::vector<std::string> events;  // empty: all present
  TimeRange range;                  // --since/--until
  // Only images whose path contains one of these, or whose identity equals
  // one. kNotFound when one matches no image.
  std::vector<std::string> images;
};

struct PprofResult {
  pprof::Profile profile;
  std::vector<std::string> warnings;
};

Expected<PprofResult> BuildPprof(ProfileDb& db, const PprofOptions& options);

// What BuildPprof and BuildFleetPprof (fleet_profile.h) share: the
// profile's sample types, period, times and comments from a report's
// header; then, one image at a time, a mapping and a location per sampled
// offset, named by the image's symbolizer as lcpiprof -p names it. The
// maps let the stacks (BuildPprof's) reuse the flat samples' locations.
class PprofBuilder {
 public:
  // with_stacks: a last sample type, "stack_samples", the default.
  PprofBuilder(const Header& h, bool with_stacks);
  // Images are added hottest first (SortHottestFirst); one without
  // offsets or a symbolizer, or added before, adds nothing. Counts are per
  // column of the header's events.
  void AddImage(const ImageInfo& info, const CountsByOffset& offsets,
                std::unique_ptr<ImageSymbolizer> symbolizer);
  // The sample types before "stack_samples".
  size_t flat_columns() const { return columns_.size(); }
  // The profile built, into result, with a warning if a value beyond int64
  // (a count, or its product with the period) was written as 2^63-1.
  void MoveInto(PprofResult* result);

  pprof::Profile profile;
  std::map<int64_t, size_t> mapping_of;                          // image id -> index in mappings
  std::map<int64_t, std::unique_ptr<ImageSymbolizer>> syms;      // image id -> its symbols
  std::map<std::pair<int64_t, uint64_t>, uint64_t> location_of;  // (image id, offset)
  std::map<std::tuple<int64_t, uint64_t, std::string>, uint64_t> function_of;  // (id, lo, name)

 private:
  std::vector<uint64_t> periods_;  // per event of the header
  bool with_stacks_;
  bool clamped_ = false;
  std::vector<std::pair<size_t, bool>> columns_;  // (event, scaled by the period)
};

// go tool pprof names the first mapping as the profile's "File:": the
// hottest image by the default sample type (`samples` per image id), not
// whichever was seen first (a cold memfd:sealed-... on a real host). Ties
// keep the given order.
void SortHottestFirst(std::vector<ImageInfo>* images, const std::map<int64_t, uint64_t>& samples);

// BuildPprof, encoded and gzipped: the bytes of a .pb.gz file.
Expected<std::string> PprofBytes(const pprof::Profile& profile);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_PPROF_PROFILE_H
