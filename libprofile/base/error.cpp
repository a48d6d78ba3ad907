// error.cpp - names of the error codes and the errno mapping.
#include "libprofile/base/error.h"

#include <cerrno>
#include <cstring>

namespace lcpi {

const char* ErrcName(Errc code) {
  switch (code) {
    case Errc::kIo:
      return "io-error";
    case Errc::kNotFound:
      return "not-found";
    case Errc::kPermission:
      return "permission-denied";
    case Errc::kInvalidArgument:
      return "invalid-argument";
    case Errc::kBusy:
      return "busy";
    case Errc::kFull:
      return "no-space";
    case Errc::kNotADatabase:
      return "not-a-database";
    case Errc::kNewerSchema:
      return "newer-schema";
    case Errc::kCorrupt:
      return "corrupt";
    case Errc::kBadElf:
      return "bad-elf";
    case Errc::kUnsupported:
      return "unsupported";
  }
  return "unknown-error";
}

Error ErrnoError(const std::string& what, int err) {
  Errc code = Errc::kIo;
  if (err == EACCES || err == EPERM) code = Errc::kPermission;
  if (err == ENOENT) code = Errc::kNotFound;
  if (err == ENOSPC || err == EDQUOT) code = Errc::kFull;
  if (err == EBUSY || err == EAGAIN) code = Errc::kBusy;
  if (err == EINVAL) code = Errc::kInvalidArgument;
  return Error(code, what + ": " + std::strerror(err));
}

}  // namespace lcpi
