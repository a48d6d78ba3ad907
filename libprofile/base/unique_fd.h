// unique_fd.h - a file descriptor with one owner, closed when that owner
// goes: results handed between threads (an identified file on its way to
// the image cache) must not leak a descriptor when they are discarded.
#ifndef LCPI_LIBPROFILE_BASE_UNIQUE_FD_H
#define LCPI_LIBPROFILE_BASE_UNIQUE_FD_H

#include <unistd.h>

#include <utility>

namespace lcpi {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  // Gives up ownership: the caller closes it.
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_UNIQUE_FD_H
