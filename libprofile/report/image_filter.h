// image_filter.h - how the reports match an image to what the user typed
// (-i/--image, lcpilist's IMAGE, --range IMAGE:...): its identity exactly, or
// any part of its path. An empty filter matches every image.
#ifndef LCPI_LIBPROFILE_REPORT_IMAGE_FILTER_H
#define LCPI_LIBPROFILE_REPORT_IMAGE_FILTER_H

#include <string>

#include "libprofile/store/profile_db.h"

namespace lcpi::report {

inline bool ImageMatches(const ImageInfo& image, const std::string& filter) {
  return image.identity == filter || image.path.find(filter) != std::string::npos;
}

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_IMAGE_FILTER_H
