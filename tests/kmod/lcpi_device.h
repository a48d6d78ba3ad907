// lcpi_device.h - what the guest checkers (lcpi_kmod_check, lcpi_kmod_faults)
// share: CHECK, which counts a failed check and goes on; opening /dev/lcpi
// and reading its geometry, where a failure ends the checker with exit
// status 2 and the reason on stderr; and flushing every table out.
#ifndef LCPI_TESTS_KMOD_LCPI_DEVICE_H
#define LCPI_TESTS_KMOD_LCPI_DEVICE_H

#include <fcntl.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lcpi_abi.h"

// Failed CHECKs so far; a checker exits 1 when there are any.
inline int g_failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                        \
    }                                                                      \
  } while (0)

inline int OpenDev(int flags = 0) {
  int fd = open(LCPI_DEVICE_PATH, O_RDWR | O_CLOEXEC | flags);
  if (fd < 0) {
    std::fprintf(stderr, "open %s: %s\n", LCPI_DEVICE_PATH, std::strerror(errno));
    std::exit(2);
  }
  return fd;
}

inline lcpi_info GetInfo(int fd) {
  lcpi_info info{};
  info.size = sizeof(info);
  if (ioctl(fd, LCPI_IOC_GET_INFO, &info) != 0) {
    std::perror("GET_INFO");
    std::exit(2);
  }
  return info;
}

// Writes every table out to the buffers. FLUSH stops with EAGAIN when the
// buffers fill first (a full table holds more entries than both buffers),
// so drain() empties them and it is called again. False if FLUSH fails
// otherwise or never finishes.
template <typename DrainFn>
bool FlushAll(int fd, DrainFn drain) {
  for (int round = 0; round < 1000; ++round) {
    int rc = ioctl(fd, LCPI_IOC_FLUSH, 0);
    int err = errno;
    drain();
    if (rc == 0) return true;
    if (err != EAGAIN) {
      std::fprintf(stderr, "FLUSH: %s\n", std::strerror(err));
      return false;
    }
  }
  std::fprintf(stderr, "FLUSH: buffers still full after 1000 drains\n");
  return false;
}

#endif  // LCPI_TESTS_KMOD_LCPI_DEVICE_H
