// error.h - the error type of libprofile: a domain error code, chosen by what
// the caller should do next, with a message for people, returned as
// Expected<T> instead of thrown from deep code or logged and ignored.
#ifndef LCPI_LIBPROFILE_BASE_ERROR_H
#define LCPI_LIBPROFILE_BASE_ERROR_H

#include <string>
#include <utility>
#include <variant>

namespace lcpi {

enum class Errc {
  kIo,               // the operating system failed a call: errno in the message
  kNotFound,         // no such file, image, epoch, procedure
  kPermission,       // needs privilege the caller lacks
  kInvalidArgument,  // the caller's input is wrong: fix it, do not retry
  kBusy,             // try again later (locked database, busy device)
  kFull,             // out of space: keep the data, retry when there is room
  kNotADatabase,     // the file is not an lcpi database
  kNewerSchema,      // written by a newer lcpi: upgrade the tools
  kCorrupt,          // the data fails a consistency check
  kBadElf,           // not a usable ELF file
  kUnsupported,      // this host cannot do it (no PMU event, no module)
};

const char* ErrcName(Errc code);

class Error {
 public:
  Error(Errc code, std::string message) : code_(code), message_(std::move(message)) {}
  Errc code() const { return code_; }
  const std::string& message() const { return message_; }
  // "not-a-database: /tmp/x.db: file is not a database"
  std::string ToString() const { return std::string(ErrcName(code_)) + ": " + message_; }

 private:
  Errc code_;
  std::string message_;
};

// A value or an Error. Check with has_value() (or operator bool) first.
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}
  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success with no value, or an Error.
template <>
class Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), ok_(false) {}
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_{Errc::kIo, ""};
  bool ok_ = true;
};

// An Error for a failed system call: "what: strerror(errno)"; EACCES and
// EPERM map to kPermission, ENOENT to kNotFound, ENOSPC to kFull.
Error ErrnoError(const std::string& what, int err);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_ERROR_H
