// perf_ring.cpp - perf_event_open(), mmap, and the ring-buffer reader.
#include "libprofile/perf_ring.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace lcpi {

Expected<std::unique_ptr<PerfRing>> PerfRing::Open(perf_event_attr attr, int cpu, int page_order) {
  attr.size = sizeof(attr);
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) {
    int err = errno;
    return ErrnoError("perf_event_open(type " + std::to_string(attr.type) + ", config " +
                          std::to_string(attr.config) + ", cpu " + std::to_string(cpu) + ")",
                      err);
  }
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  uint64_t data_size = static_cast<uint64_t>(page) << page_order;
  size_t map_size = page + data_size;
  void* base = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int err = errno;
    close(fd);
    return ErrnoError("mmap of the perf ring for cpu " + std::to_string(cpu), err);
  }
  return std::unique_ptr<PerfRing>(new PerfRing(fd, cpu, base, map_size, data_size));
}

PerfRing::PerfRing(int fd, int cpu, void* base, size_t map_size, uint64_t data_size)
    : fd_(fd), cpu_(cpu), base_(base), map_size_(map_size), data_size_(data_size) {}

PerfRing::~PerfRing() {
  munmap(base_, map_size_);
  close(fd_);
}

Expected<void> PerfRing::Enable() {
  if (ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0) < 0) return ErrnoError("PERF_EVENT_IOC_ENABLE", errno);
  return {};
}

Expected<void> PerfRing::Disable() {
  if (ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0) < 0) return ErrnoError("PERF_EVENT_IOC_DISABLE", errno);
  return {};
}

Expected<void> PerfRing::SetPeriod(uint64_t period) {
  if (ioctl(fd_, PERF_EVENT_IOC_PERIOD, &period) < 0)
    return ErrnoError("PERF_EVENT_IOC_PERIOD", errno);
  return {};
}

std::pair<uint64_t, uint64_t> PerfRing::Times() const {
  auto* meta = static_cast<const perf_event_mmap_page*>(base_);
  return {__atomic_load_n(&meta->time_enabled, __ATOMIC_RELAXED),
          __atomic_load_n(&meta->time_running, __ATOMIC_RELAXED)};
}

size_t PerfRing::Read(const RecordFn& fn) {
  auto* meta = static_cast<perf_event_mmap_page*>(base_);
  const uint8_t* data = static_cast<const uint8_t*>(base_) + meta->data_offset;
  if (meta->data_offset == 0) data = static_cast<const uint8_t*>(base_) + sysconf(_SC_PAGESIZE);
  // Pairs with the kernel's store of data_head after writing the records.
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  size_t n = 0;
  while (tail < head) {
    uint64_t avail = head - tail;
    if (avail < sizeof(perf_event_header)) {
      bad_records_++;
      tail = head;
      break;
    }
    perf_event_header hdr;
    uint64_t off = tail % data_size_;
    const uint8_t* rec;
    // The header itself may wrap; copy it byte by byte through scratch.
    if (off + sizeof(hdr) <= data_size_) {
      std::memcpy(&hdr, data + off, sizeof(hdr));
    } else {
      uint8_t tmp[sizeof(hdr)];
      for (size_t i = 0; i < sizeof(hdr); i++) tmp[i] = data[(off + i) % data_size_];
      std::memcpy(&hdr, tmp, sizeof(hdr));
    }
    if (hdr.size < sizeof(hdr) || hdr.size > avail || hdr.size > data_size_) {
      bad_records_++;
      tail = head;
      break;
    }
    if (off + hdr.size <= data_size_) {
      rec = data + off;
    } else {
      scratch_.resize(hdr.size);
      uint64_t first = data_size_ - off;
      std::memcpy(scratch_.data(), data + off, first);
      std::memcpy(scratch_.data() + first, data, hdr.size - first);
      rec = scratch_.data();
    }
    fn(hdr, rec + sizeof(hdr));
    tail += hdr.size;
    n++;
  }
  // Tells the kernel the space is free only after the records were used.
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  return n;
}

std::vector<int> OnlineCpus() {
  std::vector<int> cpus;
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string list;
  if (!std::getline(in, list)) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 0; i < n; i++) cpus.push_back(i);
    return cpus;
  }
  std::stringstream ss(list);
  std::string range;
  while (std::getline(ss, range, ',')) {
    int lo = 0, hi = 0;
    if (std::sscanf(range.c_str(), "%d-%d", &lo, &hi) == 2) {
      for (int c = lo; c <= hi; c++) cpus.push_back(c);
    } else if (std::sscanf(range.c_str(), "%d", &lo) == 1) {
      cpus.push_back(lo);
    }
  }
  return cpus;
}

}  // namespace lcpi
