// listing_steps.h - the jobs BuildListing (report_listing.cpp) does in turn:
// choose the image and the range (listing_target.cpp), count its samples
// (offset_counts.h), disassemble it (listing_code.cpp), spread the counts
// over the instructions, and attach the source lines (listing_source.cpp).
// Internal to the report code.
#ifndef LCPI_LIBPROFILE_REPORT_LISTING_STEPS_H
#define LCPI_LIBPROFILE_REPORT_LISTING_STEPS_H

#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/report/offset_counts.h"
#include "libprofile/report/report.h"
#include "libprofile/report/report_symbols.h"
#include "libprofile/report/source_files.h"

namespace lcpi::report {

// The text of an instruction listed without its code.
inline constexpr const char* kNoCode = "(no code)";

// What a listing shows: a range of one image's file offsets (kernel and
// modules: offsets from the base), with its symbols.
struct ListingTarget {
  ImageInfo image;
  ImageSymbolizer symbols;
  uint64_t lo = 0, hi = 0;
  std::string name;  // the procedure, or the range as given ("0x1000-0x1010")
};

// The image the options name (--range IMAGE, or the image with the most
// samples in the procedure among those matching IMAGE) and the range in it.
// Warnings: the image's (missing, rebuilt), and the other images holding the
// procedure. kNotFound for no such image or procedure; kInvalidArgument for
// an ambiguous --range image or an address outside its file.
Expected<ListingTarget> ChooseTarget(ProfileDb& db, const Header& header,
                                     const ListOptions& options,
                                     std::vector<std::string>* warnings);

// Disassembles the target's range from its ELF file into
// listing->instructions and sets the printed range listing->lo/hi (link-time
// addresses; offsets without a file). Without the code, one "(no code)"
// instruction per sampled offset in `counts`, and a warning why.
void ListCode(const ListingTarget& target, const CountsByOffset& counts, Listing* listing);

// Adds to each instruction the samples at the offsets it covers.
void SpreadCounts(const CountsByOffset& counts, size_t events,
                  std::vector<Instruction>* instructions);

// Sets each decoded instruction's source file and line (libdw), and with
// `files` the line read from the source file.
void AttachSource(const ElfImage& elf, SourceFiles* files, std::vector<Instruction>* instructions);

// The instructions' counts summed per source line, in file and line order,
// with the lines' text from `files`; instructions without a source line make
// one "??" row.
std::vector<SourceLineRow> SourceLineRows(const std::vector<Instruction>& instructions,
                                          size_t events, SourceFiles* files);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_LISTING_STEPS_H
