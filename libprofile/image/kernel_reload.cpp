// kernel_reload.cpp - KernelSymbolsReloader.
#include "libprofile/image/kernel_reload.h"

namespace lcpi {

KernelSymbolsReloader::KernelSymbolsReloader(std::string kallsyms_path, std::string modules_path,
                                             uint64_t interval_ns)
    : kallsyms_path_(std::move(kallsyms_path)),
      modules_path_(std::move(modules_path)),
      interval_ns_(interval_ns) {}

bool KernelSymbolsReloader::Due(uint64_t now) {
  // A clock that went backwards (buffers from CPUs read out of order) is
  // not a reason to read again.
  if (read_once_ && (now < last_read_ || now - last_read_ < interval_ns_)) {
    waited_++;
    return false;
  }
  read_once_ = true;
  last_read_ = now;
  return true;
}

bool KernelSymbolsReloader::Finish(Expected<KernelSymbols> fresh, KernelSymbols& symbols) {
  if (!fresh) {
    failures_++;
    last_error_ = fresh.error().message();
    return false;
  }
  symbols = std::move(*fresh);
  reloads_++;
  return true;
}

bool KernelSymbolsReloader::OnUnresolved(KernelSymbols& symbols, uint64_t now) {
  if (!Due(now)) return false;
  return Finish(KernelSymbols::Load(kallsyms_path_, modules_path_), symbols);
}

}  // namespace lcpi
