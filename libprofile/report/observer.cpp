// observer.cpp - the rules of observer.h, one pass over the rows per view.
#include "libprofile/report/observer.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "libprofile/base/saturating.h"

namespace lcpi::report {

namespace {

// perf's core and the PMU drivers' interrupt paths, by the names kallsyms
// gives them on x86 and arm64 (a suffix such as .isra.0 or .cold is the
// same function).
constexpr std::array<std::string_view, 12> kSamplingPath = {
    "perf_event_overflow", "__perf_event_overflow",     "perf_swevent_hrtimer",
    "perf_swevent_event",  "perf_event_output_forward", "perf_prepare_sample",
    "x86_pmu_handle_irq",  "intel_pmu_handle_irq",      "amd_pmu_handle_irq",
    "armv8pmu_handle_irq", "perf_event_nmi_handler",    "perf_sample_event_took",
};

// lcpid's executable (by the identity lcpid stored: a user's own file named
// lcpid is not it) or lcpi.ko (a module: users cannot load one): all of
// their code is the observer's.
bool IsObserverImage(const Header& h, ImageKind kind, std::string_view path,
                     const std::string& identity) {
  if (kind == ImageKind::kModule) return path == "[lcpi]";
  return kind == ImageKind::kUser &&
         std::binary_search(h.observer_images.begin(), h.observer_images.end(), identity);
}

class Observer {
 public:
  explicit Observer(size_t events) {
    row_.name = kObserverLine, row_.symbol = false;
    row_.counts.assign(events, 0);
  }
  // Moves up to `counts` of r's samples (all of them without) into the line.
  void Take(Row& r, const std::vector<uint64_t>* counts = nullptr) {
    for (size_t e = 0; e < r.counts.size() && e < row_.counts.size(); ++e) {
      const uint64_t n = std::min(r.counts[e], counts ? (*counts)[e] : r.counts[e]);
      r.counts[e] -= n;
      row_.counts[e] = SaturatingAdd(row_.counts[e], n);
    }
  }
  // Appends the line if it has samples, after dropping rows left empty.
  void Finish(std::vector<Row>* rows) {
    std::erase_if(*rows, [](const Row& r) {
      return std::all_of(r.counts.begin(), r.counts.end(), [](uint64_t c) { return c == 0; });
    });
    if (std::any_of(row_.counts.begin(), row_.counts.end(), [](uint64_t c) { return c > 0; }))
      rows->push_back(std::move(row_));
  }

 private:
  Row row_;
};

// The samples of the kernel image's sampling-path functions, per event column.
Expected<std::vector<uint64_t>> SamplingPathCounts(ProfileDb& db, const Header& h,
                                                   int64_t image_id) {
  std::vector<uint64_t> out(h.events.size(), 0);
  auto symbols = db.Symbols(image_id);
  if (!symbols) return symbols.error();
  for (const SymbolInfo& s : *symbols) {
    if (!IsObserverSymbol(s.name)) continue;
    const uint64_t hi = s.size && s.offset <= std::numeric_limits<uint64_t>::max() - s.size
                            ? s.offset + s.size
                            : s.offset + 1;
    for (size_t e = 0; e < h.events.size(); ++e) {
      auto counts = db.OffsetCounts(QueryEpoch(h), image_id, h.events[e].id, s.offset, hi);
      if (!counts) return counts.error();
      uint64_t n = 0;
      for (const OffsetCount& c : *counts) n = SaturatingAdd(n, c.count);
      out[e] = SaturatingAdd(out[e], ScaleCount(h, e, n));
    }
  }
  return out;
}

// lcpid's processes' samples per image, per event column.
Expected<std::map<int64_t, std::vector<uint64_t>>> ObserverProcessCounts(ProfileDb& db,
                                                                         const Header& h) {
  auto totals = db.ProcessTotals(QueryEpoch(h));
  if (!totals) return totals.error();
  std::map<int64_t, std::vector<uint64_t>> out;
  for (const ProcessTotal& t : *totals) {
    if (!t.observer) continue;
    for (size_t e = 0; e < h.events.size(); ++e) {
      if (h.events[e].id != t.event_id) continue;
      auto& c = out[t.image_id];
      c.resize(h.events.size(), 0);
      c[e] = SaturatingAdd(c[e], ScaleCount(h, e, t.count));
    }
  }
  return out;
}

}  // namespace

bool IsObserverSymbol(std::string_view name) {
  const size_t dot = name.find('.');
  if (dot != std::string_view::npos) name = name.substr(0, dot);
  if (name.starts_with("lcpi_")) return true;  // lcpi.ko's handler, where it is named in kallsyms
  return std::find(kSamplingPath.begin(), kSamplingPath.end(), name) != kSamplingPath.end();
}

Expected<void> AttributeObserver(ProfileDb& db, const Header& h, View view, bool labelled,
                                 std::vector<Row>* rows) {
  Observer observer(h.events.size());
  switch (view) {
    case View::kLabels:
      return {};
    case View::kProcesses:
      for (Row& r : *rows) {
        if (r.observer) observer.Take(r);
      }
      break;
    case View::kProcedures:
      for (Row& r : *rows) {
        if (IsObserverImage(h, r.kind, r.image, r.identity) ||
            (r.kind == ImageKind::kKernel && r.symbol && IsObserverSymbol(r.name)))
          observer.Take(r);
      }
      break;
    case View::kImages: {
      auto by_process = ObserverProcessCounts(db, h);
      if (!by_process) return by_process.error();
      for (Row& r : *rows) {
        if (IsObserverImage(h, r.kind, r.name, r.identity)) {
          observer.Take(r);
          continue;
        }
        if (auto p = by_process->find(r.image_id); p != by_process->end())
          observer.Take(r, &p->second);
        if (labelled || r.kind != ImageKind::kKernel) continue;
        auto path = SamplingPathCounts(db, h, r.image_id);
        if (!path) return path.error();
        observer.Take(r, &*path);
      }
      break;
    }
  }
  observer.Finish(rows);
  return {};
}

}  // namespace lcpi::report
