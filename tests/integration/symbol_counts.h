// symbol_counts.h - what a test's lcpid stored for one program: its image
// id, and its samples per function (ELF symbols), over every epoch or the
// ones given: the known-answer tests' reading of the database.
#ifndef LCPI_TESTS_INTEGRATION_SYMBOL_COUNTS_H
#define LCPI_TESTS_INTEGRATION_SYMBOL_COUNTS_H

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "libprofile/image/elf_symbols.h"
#include "libprofile/store/profile_db.h"

namespace lcpi::testing {

inline int64_t ImageId(ProfileDb& db, const std::string& path) {
  Expected<std::vector<ImageInfo>> images = db.ListImages();
  REQUIRE(images);
  for (const ImageInfo& i : *images)
    if (i.path == path) return i.id;
  return -1;
}

// Samples per function of the ELF file at path, in epoch (kAllEpochs: all).
inline std::map<std::string, uint64_t> PerSymbol(ProfileDb& db, const std::string& path,
                                                 int64_t epoch = kAllEpochs) {
  std::map<std::string, uint64_t> out;
  const int64_t id = ImageId(db, path);
  if (id < 0) return out;
  auto elf = ElfImage::Open(path);
  REQUIRE(elf);
  Expected<std::vector<EventInfo>> events = db.ListEvents();
  REQUIRE(events);
  for (const EventInfo& ev : *events) {
    Expected<std::vector<OffsetCount>> counts =
        db.OffsetCounts(epoch, id, ev.id, 0, UINT64_MAX >> 1);
    REQUIRE(counts);
    for (const OffsetCount& oc : *counts) {
      auto hit = (*elf)->LookupFileOffset(oc.offset);
      out[hit ? hit->symbol->name : "?"] += oc.count;
    }
  }
  return out;
}

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_INTEGRATION_SYMBOL_COUNTS_H
