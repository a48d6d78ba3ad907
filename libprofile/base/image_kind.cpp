// image_kind.cpp - ImageKind's names.
#include "libprofile/base/image_kind.h"

namespace lcpi {

const char* ImageKindName(ImageKind kind) {
  switch (kind) {
    case ImageKind::kUser:
      return "user";
    case ImageKind::kKernel:
      return "kernel";
    case ImageKind::kModule:
      return "module";
    case ImageKind::kUnknown:
      return "unknown";
    case ImageKind::kJit:
      return "jit";
  }
  return "unknown";
}

std::optional<ImageKind> ParseImageKind(std::string_view name) {
  for (ImageKind k : {ImageKind::kUser, ImageKind::kKernel, ImageKind::kModule, ImageKind::kUnknown,
                      ImageKind::kJit})
    if (name == ImageKindName(k)) return k;
  return std::nullopt;
}

}  // namespace lcpi
