// perf_ring.cpp - perf_event_open(), mmap, and the ring-buffer reader.
#include "libprofile/collect/perf_ring.h"

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
    : fd_(fd),
      cpu_(cpu),
      base_(base),
      map_size_(map_size),
      data_size_(data_size),
      page_size_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {}

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

Expected<std::pair<uint64_t, uint64_t>> PerfRing::ReadTimes() const {
  // The mmap page's time_enabled/time_running are only brought up to date
  // when the event is scheduled in or out; read() asks the kernel for now.
  uint64_t values[3];  // value, time_enabled, time_running
  ssize_t got = read(fd_, values, sizeof(values));
  if (got < 0) return ErrnoError("read of a perf event on cpu " + std::to_string(cpu_), errno);
  if (got != static_cast<ssize_t>(sizeof(values)))
    return Error(Errc::kIo, "short read of a perf event on cpu " + std::to_string(cpu_));
  return std::pair<uint64_t, uint64_t>{values[1], values[2]};
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
