// lcpi_device.h - what the guest checkers (lcpi_kmod_check, lcpi_kmod_faults,
// lcpi_kmod_shares, lcpi_kmod_storm) share: CHECK, which counts a failed
// check and goes on; opening /dev/lcpi and reading its geometry, where a
// failure ends the checker with exit status 2 and the reason on stderr;
// walking the records of the buffers read() hands out; and flushing every
// table out.
#ifndef LCPI_TESTS_KMOD_LCPI_DEVICE_H
#define LCPI_TESTS_KMOD_LCPI_DEVICE_H

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

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

// The statistics of every possible CPU, summed (the counters; times and
// flags are left 0). GET_STATS fails for a CPU that is not possible.
inline lcpi_cpu_stats SumStats(int fd, uint32_t nr_cpus) {
  lcpi_cpu_stats sum{};
  for (uint32_t cpu = 0; cpu < nr_cpus; ++cpu) {
    lcpi_cpu_stats st{};
    st.size = sizeof(st);
    st.cpu = cpu;
    if (ioctl(fd, LCPI_IOC_GET_STATS, &st) != 0) continue;
    sum.table.samples += st.table.samples;
    sum.table.hits += st.table.hits;
    sum.table.misses += st.table.misses;
    sum.table.evictions += st.table.evictions;
    sum.table.saturations += st.table.saturations;
    sum.table.flushed += st.table.flushed;
    sum.table.swaps += st.table.swaps;
    sum.table.dropped += st.table.dropped;
    sum.nested += st.nested;
    sum.handler_ns_hit += st.handler_ns_hit;
    sum.handler_ns_miss += st.handler_ns_miss;
    sum.buffers_read += st.buffers_read;
    sum.throttle_events += st.throttle_events;
    sum.nmi_samples += st.nmi_samples;
  }
  return sum;
}

// Calls fn(cpu, record) for every record of one buffer as read() returned
// it (n bytes at p). False, with a failed CHECK, if the header is not sound
// (then no record is walked).
template <typename RecordFn>
bool ForEachRecord(const uint8_t* p, size_t n, RecordFn fn) {
  lcpi_buffer_header h;
  CHECK(n >= sizeof(h));
  if (n < sizeof(h)) return false;
  std::memcpy(&h, p, sizeof(h));
  bool sound = h.magic == LCPI_BUFFER_MAGIC && h.header_size == sizeof(h) &&
               sizeof(h) + uint64_t{h.nr_records} * sizeof(lcpi_record) == n;
  CHECK(sound);
  if (!sound) return false;
  for (uint32_t i = 0; i < h.nr_records; ++i) {
    lcpi_record r;
    std::memcpy(&r, p + sizeof(h) + i * sizeof(r), sizeof(r));
    fn(h.cpu, r);
  }
  return true;
}

// Reads every sealed buffer there is now (fd opened O_NONBLOCK) into buf
// and calls fn(cpu, record) for each record; returns how many buffers.
template <typename RecordFn>
int DrainRecords(int fd, std::vector<uint8_t>* buf, RecordFn fn) {
  for (int n = 0;; ++n) {
    ssize_t got = read(fd, buf->data(), buf->size());
    if (got < 0) {
      CHECK(errno == EAGAIN);
      return n;
    }
    ForEachRecord(buf->data(), static_cast<size_t>(got), fn);
  }
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
