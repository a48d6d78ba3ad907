// pprof_profile.cpp - a selection of the store as a pprof profile (see
// pprof_profile.h): one location per sampled offset, named as lcpiprof -p
// names its procedures.
#include "libprofile/report/pprof_profile.h"
#include "libprofile/report/observer_cost.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "libprofile/base/saturating.h"
#include "libprofile/base/stack_end.h"
#include "libprofile/image/image_id.h"
#include "libprofile/report/image_filter.h"
#include "libprofile/report/offset_counts.h"
#include "libprofile/report/report_symbols.h"
#include "libprofile/report/stack_names.h"

namespace lcpi::report {

namespace {

constexpr int64_t kNanosPerSecond = 1000000000;

// The unit of samples x mean period: time for the clock events (their
// period is in nanoseconds), else occurrences of the event.
const char* PeriodUnit(const EventInfo& event) {
  return event.used == "cpu-clock" || event.used == "task-clock" ? "nanoseconds" : "events";
}

std::string BuildIdOf(const ImageInfo& image) {
  std::string hex = BuildIdOfIdentity(image.identity);
  std::transform(hex.begin(), hex.end(), hex.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return hex;
}

// What names one sampled offset: a procedure, or a range of samples no
// symbol covers (grouped exactly as lcpiprof -p groups them).
struct Frame {
  std::optional<Procedure> proc;
  size_t range = 0;  // index into the image's ranges when !proc
};

struct Range {
  uint64_t lo = 0, hi = 0;  // first and last sampled offset
};

std::vector<std::string> Comments(const Header& h) {
  std::vector<std::string> c;
  c.push_back("lcpi profile of " + h.database);
  std::string epochs = h.all_epochs ? "epochs: all (" : "epoch: ";
  for (size_t i = 0; i < h.epochs.size(); ++i) {
    if (i) epochs += ", ";
    epochs += std::to_string(h.epochs[i].id);
    if (h.epochs[i].tag) epochs += " (" + *h.epochs[i].tag + ")";
  }
  if (h.all_epochs) epochs += ")";
  c.push_back(epochs);
  for (size_t e = 0; e < h.events.size(); ++e) {
    const EventInfo& ev = h.events[e];
    std::string line = "event " + ev.name;
    if (ev.used != ev.name) line += " (sampled as " + ev.used + ")";
    line += ": mean period " + std::to_string(ev.period) + ", " + std::to_string(h.totals[e]) +
            " samples";
    c.push_back(line);
  }
  char shares[96];
  std::snprintf(shares, sizeof shares, "unknown %.2f%%, lost %.2f%%", h.unknown_percent,
                h.lost_percent);
  c.push_back(shares);
  c.push_back(CostSentence(h.cost, WindowsRead(h)));
  if (h.throttled_percent > 0) {
    char throttled[96];
    std::snprintf(throttled, sizeof throttled, "throttled %.2f%% (estimated, never taken)",
                  h.throttled_percent);
    c.push_back(throttled);
  }
  // The notes lcpiprof -p warns of (multiplexed events scaled, epochs of
  // different precise_ip summed): the file outlives the run's stderr.
  for (std::string& w : EventWarnings(h)) c.push_back(std::move(w));
  return c;
}

uint64_t AddFunction(pprof::Profile* p, const std::string& name) {
  pprof::Function fn;
  fn.id = p->functions.size() + 1;
  fn.name = fn.system_name = name;
  p->functions.push_back(std::move(fn));
  return p->functions.back().id;
}

// The stacks as samples of the last sample type (`flat_columns` zeros
// before it), innermost frame first: each frame the flat samples' location
// of its offset where there is one, else a location of its own in its
// image's mapping (added after the flat ones for an image without flat
// samples), named as lcpiprof --callers names it; a stack cut short ends in
// a "[stack end: ...]" location of no mapping. With image filters, the
// stacks whose innermost frame is in a chosen image.
Expected<void> AddStacks(
    ProfileDb& db, const std::vector<ImageInfo>& images, const std::vector<StoredStack>& stacks,
    const std::vector<std::string>& filters, size_t flat_columns, pprof::Profile* p,
    std::map<int64_t, size_t>* mapping_of,
    std::map<int64_t, std::unique_ptr<ImageSymbolizer>>* syms,
    std::map<std::pair<int64_t, uint64_t>, uint64_t>* location_of,
    std::map<std::tuple<int64_t, uint64_t, std::string>, uint64_t>* function_of,
    std::vector<std::string>* warnings) {
  std::map<int64_t, const ImageInfo*> by_id;
  for (const ImageInfo& i : images) by_id[i.id] = &i;
  std::map<std::string, uint64_t> other_functions;  // ranges, unknown images, stack ends
  std::map<uint8_t, uint64_t> end_locations;
  const auto named = [&](const std::string& name) {
    auto [it, added] = other_functions.emplace(name, 0);
    if (added) it->second = AddFunction(p, name);
    return it->second;
  };
  const auto location = [&](int64_t image, uint64_t offset) -> uint64_t {
    auto [it, added] = location_of->emplace(std::make_pair(image, offset), 0);
    if (!added) return it->second;
    pprof::Location loc;
    loc.id = p->locations.size() + 1;
    loc.address = offset;
    auto info = by_id.find(image);
    if (info == by_id.end()) {
      loc.lines.push_back({named("[image " + std::to_string(image) + "]"), 0});
    } else {
      auto m = mapping_of->find(image);
      if (m == mapping_of->end()) {
        pprof::Mapping map;
        map.id = p->mappings.size() + 1;
        map.filename = info->second->path;
        map.build_id = BuildIdOf(*info->second);
        map.has_functions = true;
        m = mapping_of->emplace(image, p->mappings.size()).first;
        p->mappings.push_back(std::move(map));
      }
      pprof::Mapping& map = p->mappings[m->second];
      map.memory_limit = std::max(map.memory_limit, offset + 1);
      map.has_filenames = map.has_line_numbers = false;  // no source lines for these
      loc.mapping_id = map.id;
      auto& sym = (*syms)[image];
      if (!sym) {
        sym = std::make_unique<ImageSymbolizer>(ImageSymbolizer::Load(db, *info->second, warnings));
      }
      if (std::optional<Procedure> proc = sym->Find(offset)) {
        auto [f, fresh] = function_of->emplace(std::make_tuple(image, proc->lo, proc->name), 0);
        if (fresh) f->second = AddFunction(p, proc->name);
        loc.lines.push_back({f->second, 0});
      } else {
        loc.lines.push_back({named(RangeName(info->second->path, offset, offset)), 0});
      }
    }
    it->second = loc.id;
    p->locations.push_back(std::move(loc));
    return it->second;
  };
  for (const StoredStack& s : stacks) {
    if (s.frames.empty() || s.count == 0) continue;
    if (!filters.empty()) {
      auto leaf = by_id.find(s.frames.front().first);
      if (leaf == by_id.end() || !ImageChosen(*leaf->second, filters)) continue;
    }
    pprof::Sample sample;
    for (const auto& [image, offset] : s.frames)
      sample.location_ids.push_back(location(image, offset));
    if (s.end != static_cast<uint8_t>(StackEnd::kWalkEnded)) {
      auto [it, added] = end_locations.emplace(s.end, 0);
      if (added) {
        pprof::Location loc;
        loc.id = p->locations.size() + 1;
        loc.lines.push_back({named(StackEndFrame(s.end)), 0});
        it->second = loc.id;
        p->locations.push_back(std::move(loc));
      }
      sample.location_ids.push_back(it->second);
    }
    sample.values.assign(flat_columns, 0);
    sample.values.push_back(static_cast<int64_t>(s.count));
    p->samples.push_back(std::move(sample));
  }
  return {};
}

}  // namespace

PprofBuilder::PprofBuilder(const Header& h, bool with_stacks) : with_stacks_(with_stacks) {
  for (const EventInfo& e : h.events) periods_.push_back(e.period);
  pprof::Profile& p = profile;
  // Sample types: per event its samples, then, with a period, samples x period.
  for (size_t e = 0; e < h.events.size(); ++e) {
    const EventInfo& ev = h.events[e];
    p.sample_types.push_back({ev.name + "_samples", "count"});
    columns_.emplace_back(e, false);
    if (ev.period > 0) {
      p.sample_types.push_back({ev.name, PeriodUnit(ev)});
      columns_.emplace_back(e, true);
    }
  }
  // The call stacks, where lcpid took them: a sample type of their own (a
  // second, lower rate than the flat events'), the default when there are
  // any, so that go tool pprof -top -cum and -traces show the callers.
  if (with_stacks) p.sample_types.push_back({"stack_samples", "count"});
  if (!h.events.empty()) {
    p.default_sample_type = p.sample_types.front().type;
    const EventInfo& first = h.events.front();
    if (first.period > 0) {
      p.period_type = {first.name, PeriodUnit(first)};
      p.period = static_cast<int64_t>(first.period);
    }
  }
  if (!h.epochs.empty()) {
    int64_t started = std::numeric_limits<int64_t>::max(), ended = 0;
    bool open = false;
    for (const EpochInfo& e : h.epochs) {
      started = std::min(started, e.started);
      if (e.ended) {
        ended = std::max(ended, *e.ended);
      } else {
        open = true;
      }
    }
    p.time_nanos = started * kNanosPerSecond;
    if (!open && ended > started) p.duration_nanos = (ended - started) * kNanosPerSecond;
  }
  if (with_stacks) p.default_sample_type = "stack_samples";
  p.comments = Comments(h);
}

void PprofBuilder::AddImage(const ImageInfo& info, const CountsByOffset& offsets,
                            std::unique_ptr<ImageSymbolizer> symbolizer) {
  if (offsets.empty() || !symbolizer || mapping_of.count(info.id)) return;  // once an image
  pprof::Profile& p = profile;
  const ImageSymbolizer& sym = *(syms[info.id] = std::move(symbolizer));
  // Source lines only from the profiled build.
  const ElfImage* elf = sym.trusted() ? sym.elf() : nullptr;

  // Name every offset, as lcpiprof -p does (profile_rows.h, AddProcedureRows).
  std::vector<std::pair<uint64_t, Frame>> frames;
  std::vector<Range> ranges;
  bool open_range = false;
  for (const auto& [offset, c] : offsets) {
    Frame f;
    f.proc = sym.Find(offset);
    if (f.proc) {
      open_range = false;
    } else {
      if (!open_range || offset - ranges.back().hi > kRangeGap) {
        ranges.push_back({offset, offset});
        open_range = true;
      }
      ranges.back().hi = offset;
      f.range = ranges.size() - 1;
    }
    frames.emplace_back(offset, std::move(f));
  }

  pprof::Mapping m;
  m.id = p.mappings.size() + 1;
  m.memory_start = 0;
  m.memory_limit = std::max(offsets.rbegin()->first, offsets.rbegin()->first + 1);
  m.file_offset = 0;
  m.filename = info.path;
  m.build_id = BuildIdOf(info);
  m.has_functions = true;  // every location is named below
  bool all_lines = elf != nullptr;

  std::map<size_t, uint64_t> range_functions;  // range -> id
  for (const auto& [offset, f] : frames) {
    uint64_t function_id;
    if (f.proc) {
      auto [it, added] = function_of.emplace(std::make_tuple(info.id, f.proc->lo, f.proc->name), 0);
      if (added) {
        pprof::Function fn;
        fn.id = p.functions.size() + 1;
        fn.name = fn.system_name = f.proc->name;
        if (elf) {
          if (auto vaddr = elf->FileOffsetToVaddr(f.proc->lo)) {
            if (auto src = elf->SourceLine(*vaddr)) {
              fn.filename = src->file;
              fn.start_line = src->line;
            }
          }
        }
        it->second = fn.id;
        p.functions.push_back(std::move(fn));
      }
      function_id = it->second;
    } else {
      auto [it, added] = range_functions.emplace(f.range, 0);
      if (added)
        it->second = AddFunction(&p, RangeName(info.path, ranges[f.range].lo, ranges[f.range].hi));
      function_id = it->second;
    }
    pprof::Location loc;
    loc.id = p.locations.size() + 1;
    loc.mapping_id = m.id;
    loc.address = offset;
    pprof::Line line{function_id, 0};
    std::optional<SourceLocation> src;
    if (elf && f.proc) {
      if (auto vaddr = elf->FileOffsetToVaddr(offset)) src = elf->SourceLine(*vaddr);
    }
    if (src) {
      line.line = src->line;
      // The function's file: the first line found for it, when its start had none.
      pprof::Function& fn = p.functions[function_id - 1];
      if (fn.filename.empty()) fn.filename = src->file;
    } else {
      all_lines = false;
    }
    loc.lines.push_back(line);

    pprof::Sample s;
    s.location_ids.push_back(loc.id);
    const std::vector<uint64_t>& counts = offsets.at(offset);
    for (const auto& [e, scaled] : columns_) {
      // int64 in profile.proto: a count (a fleet host's word) or its
      // product with the period beyond it is clamped, and said so
      const uint64_t max = std::numeric_limits<int64_t>::max();
      const uint64_t n = e < counts.size() ? counts[e] : 0;
      const uint64_t period = scaled ? periods_[e] : 1;
      const bool over = n > max || (period > 1 && n > max / period);
      if (over) clamped_ = true;
      s.values.push_back(static_cast<int64_t>(over ? max : n * period));
    }
    if (with_stacks_) s.values.push_back(0);
    location_of[{info.id, offset}] = loc.id;
    p.locations.push_back(std::move(loc));
    p.samples.push_back(std::move(s));
  }
  m.has_filenames = m.has_line_numbers = all_lines;
  mapping_of[info.id] = p.mappings.size();
  p.mappings.push_back(std::move(m));
}

void PprofBuilder::MoveInto(PprofResult* result) {
  result->profile = std::move(profile);
  if (clamped_)
    result->warnings.push_back(
        "a value beyond 2^63-1 (profile.proto's int64) is written as 9223372036854775807");
}

void SortHottestFirst(std::vector<ImageInfo>* images, const std::map<int64_t, uint64_t>& samples) {
  const auto of = [&](const ImageInfo& i) {
    auto it = samples.find(i.id);
    return it == samples.end() ? 0 : it->second;
  };
  std::stable_sort(images->begin(), images->end(),
                   [&](const ImageInfo& a, const ImageInfo& b) { return of(a) > of(b); });
}

Expected<PprofResult> BuildPprof(ProfileDb& db, const PprofOptions& options) {
  auto header = BeginReport(db, options.epoch, options.range, options.events);
  if (!header) return header.error();
  SnapshotGuard end(db);
  const Header& h = *header;
  auto images = db.ListImages();
  if (!images) return images.error();
  for (const std::string& f : options.images) {
    if (std::none_of(images->begin(), images->end(),
                     [&](const ImageInfo& i) { return ImageMatches(i, f); })) {
      return Error(Errc::kNotFound, "no such image: " + f);
    }
  }
  auto totals = db.ImageTotals(QueryEpoch(h));
  if (!totals) return totals.error();
  std::set<int64_t> sampled;                // images with samples of the selected events
  std::map<int64_t, uint64_t> first_event;  // image -> samples of the default sample type
  for (const ImageTotal& t : *totals) {
    for (const EventInfo& e : h.events) {
      if (e.id == t.event_id && t.count > 0) sampled.insert(t.image_id);
    }
    if (!h.events.empty() && t.event_id == h.events.front().id)
      first_event[t.image_id] = SaturatingAdd(first_event[t.image_id], t.count);
  }
  SortHottestFirst(&*images, first_event);
  auto stacks = db.Stacks(QueryEpoch(h));
  if (!stacks) return stacks.error();
  PprofResult result;
  // Every image's mapping, symbols and named offsets, kept for the stacks'
  // frames after the flat samples.
  PprofBuilder b(h, !stacks->empty());
  for (const ImageInfo& info : *images) {
    if (!sampled.count(info.id) || !ImageChosen(info, options.images)) continue;
    auto offsets = CountOffsets(db, h, info.id, 0, std::numeric_limits<uint64_t>::max());
    if (!offsets) return offsets.error();
    if (offsets->empty()) continue;
    b.AddImage(
        info, *offsets,
        std::make_unique<ImageSymbolizer>(ImageSymbolizer::Load(db, info, &result.warnings)));
  }
  if (!stacks->empty()) {
    auto added =
        AddStacks(db, *images, *stacks, options.images, b.flat_columns(), &b.profile, &b.mapping_of,
                  &b.syms, &b.location_of, &b.function_of, &result.warnings);
    if (!added) return added.error();
  }
  b.MoveInto(&result);
  for (std::string& w : StacksNotKept(h)) result.warnings.push_back(std::move(w));
  // Last, as in lcpiprof -p's warnings (report.cpp, BuildProfile).
  for (std::string& w : EventWarnings(h)) result.warnings.push_back(std::move(w));
  return result;
}

Expected<std::string> PprofBytes(const pprof::Profile& profile) {
  return pprof::Gzip(pprof::EncodePprof(profile));
}

}  // namespace lcpi::report
