// render.cpp - the rendering entry points: a Document in the format asked
// for, each view's Render* (its Document, rendered), and the text width.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "libprofile/report/table.h"

namespace lcpi::report {

std::string Render(const Document& doc, const RenderOptions& options) {
  switch (options.format) {
    case Format::kText:
      return RenderText(doc, options.width, options.header);
    case Format::kCsv:
      return RenderCsv(doc);
    case Format::kJson:
      return RenderJson(doc);
    case Format::kPprof:  // binary, from the store: BuildPprof (pprof_profile.h)
      return "";
    case Format::kHtml:
      return RenderHtml(doc);
  }
  return "";
}

std::string RenderProfile(const Profile& profile, const RenderOptions& options) {
  return Render(ProfileDocument(profile), options);
}

std::string RenderDiff(const Diff& diff, const RenderOptions& options) {
  return Render(DiffDocument(diff), options);
}

std::string RenderListing(const Listing& listing, const RenderOptions& options) {
  return Render(ListingDocument(listing), options);
}

std::string RenderEpochList(const EpochList& list, const RenderOptions& options) {
  return Render(EpochListDocument(list), options);
}

int OutputWidth(int requested, int fd) {
  if (requested > 0) return requested;
  struct winsize ws {};
  if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    int c = std::atoi(columns);
    if (c > 0) return c;
  }
  return 100;
}

}  // namespace lcpi::report
