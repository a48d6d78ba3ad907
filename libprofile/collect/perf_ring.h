// perf_ring.h - one perf_event_open() event on one CPU with its mmap'ed ring
// buffer. Reads records with the consumer protocol of perf_event_mmap_page
// (load-acquire data_head, copy, store-release data_tail), copying records
// that wrap around the end of the ring into a scratch buffer, and checking
// every record's size against the ring before it is handed out.
#ifndef LCPI_LIBPROFILE_COLLECT_PERF_RING_H
#define LCPI_LIBPROFILE_COLLECT_PERF_RING_H

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

class PerfRing {
 public:
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
  // Hands out every complete record in the ring, oldest first, as
  // fn(const perf_event_header&, const uint8_t* body) with header.size - 8
  // body bytes; returns how many. A record whose size is impossible ends the
  // read and counts in bad_records(). (A template: this is the per-sample path.)
  template <class Fn>
  size_t Read(Fn&& fn);
  uint64_t bad_records() const { return bad_records_; }
  // (enabled, running) times in ns from read(): how long the event was
  // enabled and how long it really counted on the PMU (less when the PMU
  // multiplexed it). Needs the attr's read_format to be
  // PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING.
  Expected<std::pair<uint64_t, uint64_t>> ReadTimes() const;

 private:
  PerfRing(int fd, int cpu, void* base, size_t map_size, uint64_t data_size);

  int fd_;
  int cpu_;
  void* base_;
  size_t map_size_;
  uint64_t data_size_;
  uint64_t bad_records_ = 0;
  size_t page_size_;
  std::vector<uint8_t> scratch_;
};

// The records of a ring's data area (`data`, `data_size` bytes, a power of
// two) from `*tail` up to `head` (positions that only grow; the data wraps),
// each handed to fn(header, body) as PerfRing::Read says, records that wrap
// copied into `scratch`. A record whose size is impossible (smaller than its
// header, larger than what is left or than the ring) ends the walk: the rest
// cannot be framed, so *tail moves to head and *bad counts one. Returns how
// many records were handed out.
template <class Fn>
size_t WalkRingRecords(const uint8_t* data, uint64_t data_size, uint64_t head, uint64_t* tail,
                       std::vector<uint8_t>& scratch, uint64_t* bad, Fn&& fn) {
  size_t n = 0;
  // A mask, not %: the size is known only at run time, so % is a 64-bit
  // divide per record, on the path every sample takes.
  const uint64_t mask = data_size - 1;
  while (*tail < head) {
    uint64_t avail = head - *tail;
    if (avail < sizeof(perf_event_header)) {
      ++*bad;
      *tail = head;
      break;
    }
    perf_event_header hdr;
    uint64_t off = *tail & mask;
    const uint8_t* rec;
    // The header itself may wrap; copy it byte by byte.
    if (off + sizeof(hdr) <= data_size) {
      std::memcpy(&hdr, data + off, sizeof(hdr));
    } else {
      uint8_t tmp[sizeof(hdr)];
      for (size_t i = 0; i < sizeof(hdr); i++) tmp[i] = data[(off + i) & mask];
      std::memcpy(&hdr, tmp, sizeof(hdr));
    }
    if (hdr.size < sizeof(hdr) || hdr.size > avail || hdr.size > data_size) {
      ++*bad;
      *tail = head;
      break;
    }
    if (off + hdr.size <= data_size) {
      rec = data + off;
    } else {
      scratch.resize(hdr.size);
      uint64_t first = data_size - off;
      std::memcpy(scratch.data(), data + off, first);
      std::memcpy(scratch.data() + first, data, hdr.size - first);
      rec = scratch.data();
    }
    fn(hdr, rec + sizeof(hdr));
    *tail += hdr.size;
    n++;
  }
  return n;
}

template <class Fn>
size_t PerfRing::Read(Fn&& fn) {
  auto* meta = static_cast<perf_event_mmap_page*>(base_);
  const uint8_t* data = static_cast<const uint8_t*>(base_) + meta->data_offset;
  if (meta->data_offset == 0) data = static_cast<const uint8_t*>(base_) + page_size_;
  // Pairs with the kernel's store of data_head after writing the records.
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  size_t n = WalkRingRecords(data, data_size_, head, &tail, scratch_, &bad_records_, fn);
  // Tells the kernel the space is free only after the records were used.
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  return n;
}

// The CPUs that are online now (from /sys/devices/system/cpu/online).
std::vector<int> OnlineCpus();

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_COLLECT_PERF_RING_H
