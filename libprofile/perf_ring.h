// perf_ring.h - one perf_event_open() event on one CPU with its mmap'ed ring
// buffer. Reads records with the consumer protocol of perf_event_mmap_page
// (load-acquire data_head, copy, store-release data_tail), copying records
// that wrap around the end of the ring into a scratch buffer, and checking
// every record's size against the ring before it is handed out.
#ifndef LCPI_LIBPROFILE_PERF_RING_H
#define LCPI_LIBPROFILE_PERF_RING_H

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "libprofile/error.h"

namespace lcpi {

class PerfRing {
 public:
  // A record: its header and the bytes that follow it (header.size - 8 of them).
  using RecordFn = std::function<void(const perf_event_header& hdr, const uint8_t* body)>;

  // Opens attr on cpu for every process (pid -1), and maps 2^page_order data pages.
  static Expected<std::unique_ptr<PerfRing>> Open(perf_event_attr attr, int cpu, int page_order);
  ~PerfRing();
  PerfRing(const PerfRing&) = delete;
  PerfRing& operator=(const PerfRing&) = delete;

  int fd() const { return fd_; }
  int cpu() const { return cpu_; }
  Expected<void> Enable();
  Expected<void> Disable();
  // Changes the sample period (used to randomise it around its mean).
  Expected<void> SetPeriod(uint64_t period);
  // Hands out every complete record in the ring, oldest first; returns how many.
  // A record whose size is impossible ends the read and counts in bad_records().
  size_t Read(const RecordFn& fn);
  uint64_t bad_records() const { return bad_records_; }
  // (enabled, running) times in ns, for multiplexing scale.
  std::pair<uint64_t, uint64_t> Times() const;

 private:
  PerfRing(int fd, int cpu, void* base, size_t map_size, uint64_t data_size);

  int fd_;
  int cpu_;
  void* base_;
  size_t map_size_;
  uint64_t data_size_;
  uint64_t bad_records_ = 0;
  std::vector<uint8_t> scratch_;
};

// The CPUs that are online now (from /sys/devices/system/cpu/online).
std::vector<int> OnlineCpus();

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_PERF_RING_H
