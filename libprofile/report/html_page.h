// html_page.h - lcpiprof's HTML report (--format html): one self-contained
// page of several reports of one epoch selection: where the numbers come
// from (database, epochs and their times, events, unknown and lost shares),
// the images, the hottest procedures, the processes, and the per-instruction
// listing of the hottest few procedures (BuildListing, with source lines, as
// lcpilist --source), and over several epochs and windows (--epoch all, a
// tag's span, --since/--until) the share of the top images in each as an
// inline SVG with its numbers in a table; where call stacks are stored, a
// flame graph of them and an icicle of the hottest procedure's callers
// (flame_graph.h).
// The tables are the Documents of each report (table.h) rendered by
// render_html.cpp; this file composes them.
#ifndef LCPI_LIBPROFILE_REPORT_HTML_PAGE_H
#define LCPI_LIBPROFILE_REPORT_HTML_PAGE_H

#include <string>
#include <vector>

#include "libprofile/report/flame_graph.h"
#include "libprofile/report/report.h"

namespace lcpi::report {

struct HtmlOptions {
  ProfOptions prof;             // epoch, events, sort, keep; images (-i) filter procedures
  size_t top_procedures = 30;   // prof.top when given
  size_t listings = 3;          // listings of the hottest procedures with a symbol
  size_t images_per_epoch = 5;  // images plotted per epoch
  // The newest epochs and windows plotted: a report each, a column each.
  size_t epochs_plotted = 24;
  bool source_any = false;  // the listings' ListOptions::source_any
};

// One image's share of the sort event in each epoch or window plotted.
struct EpochSeries {
  std::string image;            // its path
  std::vector<double> percent;  // per HtmlReport::plotted
};

struct HtmlReport {
  Profile images, procedures, processes;
  std::vector<Listing> listings;
  std::vector<EpochInfo> plotted;      // the header's newest epochs_plotted, when several
  std::vector<EpochSeries> per_epoch;  // empty unless several epochs or windows
  uint64_t stack_samples = 0;          // of the selection's stored stacks; 0: none
  FlameNode flame;                     // every stack (BuildFlame)
  FlameNode icicle;                    // the hottest procedure's callers (BuildIcicle)
  std::vector<std::string> warnings;   // of every part, each once
};

Expected<HtmlReport> BuildHtmlReport(ProfileDb& db, const HtmlOptions& options);

// The page (options are not used: the page has no width).
std::string RenderHtmlReport(const HtmlReport& report, const RenderOptions& options);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_HTML_PAGE_H
