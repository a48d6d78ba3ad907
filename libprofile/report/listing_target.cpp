// listing_target.cpp - the first job of lcpilist: which image, and which
// range of it, to list. For --range, the one image the name matches (the
// ones with samples decide ambiguity); for a procedure, every image holding
// it, the one with the most samples in it winning and the others named in a
// warning. With no image named, only images with samples in the selected
// epochs are searched, at most 64 of them (each is a file some user chose).
#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "libprofile/base/saturating.h"
#include "libprofile/report/image_filter.h"
#include "libprofile/report/listing_steps.h"

namespace lcpi::report {

namespace {

// The images `filter` matches, the ones with the most samples first, and
// the samples of each.
struct Candidates {
  std::vector<ImageInfo> images;
  std::map<int64_t, uint64_t> samples;  // by image id
};

Expected<Candidates> FindCandidates(ProfileDb& db, const Header& header,
                                    const std::string& filter) {
  auto images = db.ListImages();
  if (!images) return images.error();
  auto totals = db.ImageTotals(QueryEpoch(header));
  if (!totals) return totals.error();
  Candidates c;
  for (const ImageTotal& t : *totals)
    c.samples[t.image_id] = SaturatingAdd(c.samples[t.image_id], t.count);
  for (const ImageInfo& i : *images) {
    if (ImageMatches(i, filter)) c.images.push_back(i);
  }
  std::stable_sort(c.images.begin(), c.images.end(), [&](const ImageInfo& a, const ImageInfo& b) {
    return c.samples[a.id] > c.samples[b.id];
  });
  if (c.images.empty()) return Error(Errc::kNotFound, "no such image: " + filter);
  return c;
}

// --range: addresses as lcpilist prints them, turned into file offsets.
Expected<ListingTarget> RangeTarget(ProfileDb& db, Candidates& c, const ListOptions& options,
                                    std::vector<std::string>* warnings) {
  if (c.images.size() > 1 && c.samples[c.images[1].id] > 0) {
    std::string names;
    for (const ImageInfo& i : c.images) names += "\n  " + i.path + " (" + i.identity + ")";
    return Error(Errc::kInvalidArgument,
                 "image " + options.image + " is ambiguous; name one of:" + names);
  }
  ListingTarget t;
  t.image = c.images.front();
  t.symbols = ImageSymbolizer::Load(db, t.image, warnings);
  t.lo = options.range_lo;
  t.hi = options.range_hi;
  if (const ElfImage* elf = t.symbols.elf()) {
    auto flo = elf->VaddrToFileOffset(t.lo);
    if (!flo) return Error(Errc::kInvalidArgument, "address not in the file of " + t.image.path);
    t.hi = *flo + (t.hi - t.lo);
    t.lo = *flo;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64 "-0x%" PRIx64, options.range_lo, options.range_hi);
  t.name = buf;
  return t;
}

// With no image named, a procedure is looked for in at most this many
// images, those with samples in the selected epochs, the most first: every
// image ever recorded is some user's file to open and read.
constexpr size_t kMaxImagesSearched = 64;

uint64_t Samples(const CountsByOffset& counts) {
  uint64_t n = 0;
  for (const auto& [offset, c] : counts) {
    for (uint64_t x : c) n = SaturatingAdd(n, x);
  }
  return n;
}

// A procedure: every candidate holding it; the one with the most samples in
// it wins.
Expected<ListingTarget> ProcedureTarget(ProfileDb& db, const Header& header, const Candidates& c,
                                        const ListOptions& options,
                                        std::vector<std::string>* warnings) {
  ListingTarget best;
  uint64_t best_samples = 0;
  bool found = false;
  std::vector<std::string> others, best_warnings;
  size_t searched = 0, skipped = 0;
  for (const ImageInfo& image : c.images) {
    if (options.image.empty()) {
      auto in = c.samples.find(image.id);
      if (in == c.samples.end() || in->second == 0) break;  // sorted: none after it has any
      if (searched == kMaxImagesSearched) {
        skipped++;
        continue;
      }
      searched++;
    }
    std::vector<std::string> w;
    ImageSymbolizer s = ImageSymbolizer::Load(db, image, &w);
    for (const Procedure& p : s.FindByName(options.procedure, /*untrusted=*/true)) {
      auto counts = CountOffsets(db, header, image.id, p.lo, p.hi);
      if (!counts) return counts.error();
      const uint64_t n = Samples(*counts);
      if (found) others.push_back(image.path);
      if (!found || n > best_samples) {
        if (found) others.back() = best.image.path;
        best = {image, s, p.lo, p.hi, options.procedure};
        best_samples = n;
        best_warnings = w;
        found = true;
      }
    }
    // Why a user image could not be searched, for the error below.
    if (!found && image.kind == ImageKind::kUser && !s.elf()) {
      best_warnings.insert(best_warnings.end(), w.begin(), w.end());
    }
  }
  if (!found) {
    std::string why;
    for (const std::string& w : best_warnings) why += "; " + w;
    return Error(Errc::kNotFound, "no such procedure: " + options.procedure +
                                      (options.image.empty() ? "" : " in " + options.image) + why);
  }
  warnings->insert(warnings->end(), best_warnings.begin(), best_warnings.end());
  if (skipped > 0) {
    warnings->push_back(options.procedure + " was looked for in the " +
                        std::to_string(kMaxImagesSearched) + " images with the most samples; " +
                        std::to_string(skipped) + " more were not searched (name the image)");
  }
  for (const std::string& o : others) {
    warnings->push_back(options.procedure + " is also in " + o + " (listing " + best.image.path +
                        "; name the image to choose)");
  }
  return best;
}

}  // namespace

Expected<ListingTarget> ChooseTarget(ProfileDb& db, const Header& header,
                                     const ListOptions& options,
                                     std::vector<std::string>* warnings) {
  auto candidates = FindCandidates(db, header, options.image);
  if (!candidates) return candidates.error();
  if (options.has_range) return RangeTarget(db, *candidates, options, warnings);
  return ProcedureTarget(db, header, *candidates, options, warnings);
}

}  // namespace lcpi::report
