// image_cache.cpp - naming and finding cached images.
#include "libprofile/image/image_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>

namespace lcpi {

std::string ImageCacheDir(const std::string& db_path) {
  std::filesystem::path dir = std::filesystem::path(db_path).parent_path();
  return (dir.empty() ? std::filesystem::path(".") : dir).string() + "/images";
}

std::string CachedImageName(const std::string& identity) {
  // A user's file ends in ":u<uid>" (image_id.h): filed as "-u<uid>".
  std::string owner;
  const size_t u = identity.rfind(":u");
  if (u != std::string::npos) {
    owner = identity.substr(u + 2);
    if (owner.empty() || owner.size() > 10 ||
        owner.find_first_not_of("0123456789") != std::string::npos)
      return "";
    const std::string base = CachedImageName(identity.substr(0, u));
    return base.empty() ? "" : base + "-u" + owner;
  }
  std::string kind, hex;
  for (const char* k : {"build-id:", "content-hash:"}) {
    if (identity.rfind(k, 0) == 0) {
      kind = std::string(k, std::char_traits<char>::length(k) - 1);
      hex = identity.substr(kind.size() + 1);
    }
  }
  if (kind.empty() || hex.empty() || hex.size() > 128) return "";
  // "build-id:<hex>:<layout>" (image_id.h) is filed as build-id-<hex>-<layout>.
  for (char& c : hex) {
    if (c == ':' && kind == "build-id") c = '-';
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return "";
  }
  return kind + "-" + hex;
}

std::string FindCachedImage(const std::string& db_path, const std::string& identity) {
  std::string name = CachedImageName(identity);
  if (name.empty()) return "";
  std::string path = ImageCacheDir(db_path) + "/" + name;
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? path : "";
}

std::string CachedImageDenied(const std::string& path) {
  if (path.empty() || access(path.c_str(), R_OK) == 0 || errno != EACCES) return "";
  return "cached copy is root-only: the file was not readable by others";
}

}  // namespace lcpi
