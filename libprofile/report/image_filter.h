// image_filter.h - how the reports match an image to what the user typed
// (-i/--image, lcpilist's IMAGE, --range IMAGE:...): its identity exactly, or
// any part of its path. An empty filter matches every image.
#ifndef LCPI_LIBPROFILE_REPORT_IMAGE_FILTER_H
#define LCPI_LIBPROFILE_REPORT_IMAGE_FILTER_H

#include <algorithm>
#include <string>
#include <vector>

#include "libprofile/store/profile_db.h"

namespace lcpi::report {

inline bool ImageMatches(const ImageInfo& image, const std::string& filter) {
  return image.identity == filter || image.path.find(filter) != std::string::npos;
}

// No filters, or one of them matches.
inline bool ImageChosen(const ImageInfo& image, const std::vector<std::string>& filters) {
  return filters.empty() || std::any_of(filters.begin(), filters.end(), [&](const std::string& f) {
           return ImageMatches(image, f);
         });
}

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_IMAGE_FILTER_H
