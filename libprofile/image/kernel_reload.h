// kernel_reload.h - kernel code that appears after start-up: a module
// loaded, a BPF program attached. lcpid reads kallsyms once at start; a
// kernel pc that falls outside everything it read then makes it read
// /proc/kallsyms and /proc/modules again, at most once per interval (a
// full read costs tens of milliseconds and ~120,000 symbols), so the new
// code is named instead of filed as "[kernel]" unresolved. Between reads,
// unresolved pcs stay on the kernel side, counted.
#ifndef LCPI_LIBPROFILE_IMAGE_KERNEL_RELOAD_H
#define LCPI_LIBPROFILE_IMAGE_KERNEL_RELOAD_H

#include <cstdint>
#include <string>

#include "libprofile/image/kernel_symbols.h"

namespace lcpi {

class KernelSymbolsReloader {
 public:
  static constexpr uint64_t kDefaultIntervalNs = 10ull * 1000000000ull;

  explicit KernelSymbolsReloader(std::string kallsyms_path = "/proc/kallsyms",
                                 std::string modules_path = "/proc/modules",
                                 uint64_t interval_ns = kDefaultIntervalNs);

  // A kernel pc was not located in `symbols` at `now` (perf clock, ns):
  // reads the files again if the last read is at least an interval old (the
  // first time, at once) and replaces `symbols` when the read succeeds.
  // True when `symbols` was replaced: locate the pc again. A failed read
  // leaves `symbols` as it was. (Due, a read, then Finish.)
  bool OnUnresolved(KernelSymbols& symbols, uint64_t now);

  // The same in two steps, for a read made elsewhere (lcpid reads on a
  // thread of its own, lookup_worker.h): whether a read is due at `now`
  // (counted as started when it is), and its result, which replaces
  // `symbols` when it succeeded (true).
  bool Due(uint64_t now);
  bool Finish(Expected<KernelSymbols> fresh, KernelSymbols& symbols);
  const std::string& kallsyms_path() const { return kallsyms_path_; }
  const std::string& modules_path() const { return modules_path_; }

  uint64_t reloads() const { return reloads_; }    // successful reads
  uint64_t failures() const { return failures_; }  // reads that failed: last_error() says why
  uint64_t waited() const { return waited_; }      // unresolved pcs seen before a read was due
  const std::string& last_error() const { return last_error_; }

 private:
  std::string kallsyms_path_, modules_path_;
  uint64_t interval_ns_;
  bool read_once_ = false;
  uint64_t last_read_ = 0;
  uint64_t reloads_ = 0, failures_ = 0, waited_ = 0;
  std::string last_error_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_KERNEL_RELOAD_H
