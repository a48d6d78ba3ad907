// sled.h - the perf bench's workload: one child per online CPU, pinned to
// it, spinning through a "sled" of N distinct instructions (N - 1 adds and
// a jump back to the first), so that each cpu-clock sample lands on one of
// N pcs and the per-CPU hash table's miss rate follows N: 1 is a jump to
// itself (a busy loop on one pc, almost no misses); as N passes the table's
// 16K entries most samples miss. The suite's miss rates (stream 1 % to
// compile 50-90 %, bench/results/hashsim.md) are chosen by N, not by hoping
// a real program has them.
#ifndef LCPI_BENCH_DAEMON_SLED_H
#define LCPI_BENCH_DAEMON_SLED_H

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi::bench {

class Sled {
 public:
  // Writes a sled of `pcs` instructions (>= 1) into executable memory and
  // forks one child per CPU in `cpus` running it; x86-64 only.
  static Expected<Sled> Start(uint32_t pcs, const std::vector<int>& cpus);
  Sled(Sled&& other) noexcept;
  Sled& operator=(Sled&&) = delete;
  Sled(const Sled&) = delete;
  ~Sled();  // kills and reaps the children, unmaps the code

  const std::vector<pid_t>& children() const { return children_; }
  // The code's address range, the same in every child (mapped before fork).
  uint64_t start() const { return reinterpret_cast<uint64_t>(code_); }
  uint64_t end() const { return start() + size_; }

 private:
  Sled(void* code, size_t size) : code_(code), size_(size) {}

  void* code_ = nullptr;
  size_t size_ = 0;
  std::vector<pid_t> children_;
};

}  // namespace lcpi::bench

#endif  // LCPI_BENCH_DAEMON_SLED_H
