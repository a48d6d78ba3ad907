// image_cache.h - where lcpid keeps a copy of each user image it profiled,
// so the tools can still symbolize and disassemble it when the file on disk
// is gone, replaced, or only visible inside a container: under the
// database's directory, images/<identity>, one whole file per identity
// (build-id or content hash). lcpid writes it (attribute/
// image_cache_writer.h); the tools look there before the image's path.
#ifndef LCPI_LIBPROFILE_IMAGE_IMAGE_CACHE_H
#define LCPI_LIBPROFILE_IMAGE_IMAGE_CACHE_H

#include <string>

namespace lcpi {

// The cache directory of the database at db_path: <its directory>/images.
std::string ImageCacheDir(const std::string& db_path);

// The file name of an identity in the cache ("build-id:ab12" ->
// "build-id-ab12"), or "" for identities that are never cached (kernel,
// modules, unknown and unreadable images, anything but [a-z0-9-] after the
// kind): a name from the database can never reach outside the directory.
std::string CachedImageName(const std::string& identity);

// ImageCacheDir(db_path)/CachedImageName(identity) when that file exists,
// else "".
std::string FindCachedImage(const std::string& db_path, const std::string& identity);

// Why the calling user may not read the cached copy at `path`, or "" when
// they may (or there is none): lcpid keeps a copy root-only (0600) when the
// file it copied was not readable by others, and a reader of the database
// is told so, not just that the file cannot be read.
std::string CachedImageDenied(const std::string& path);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_IMAGE_CACHE_H
