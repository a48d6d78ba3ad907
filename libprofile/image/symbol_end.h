// symbol_end.h - where a symbol ends: one rule for ELF symbols, for kernel
// symbols (kallsyms gives no sizes) and for the symbols lcpid stores for the
// tools, so that the daemon that stores a symbol and the report that looks
// an offset up in it agree by construction.
#ifndef LCPI_LIBPROFILE_IMAGE_SYMBOL_END_H
#define LCPI_LIBPROFILE_IMAGE_SYMBOL_END_H

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

namespace lcpi {

// The exclusive end of a symbol starting at `start`:
// - with a size, start + size;
// - without one (hand-written assembly, PLT stubs, every kallsyms entry), up
//   to the next symbol's start, but not past `limit` (the end of the segment
//   or image that holds it);
// - at least start + 1: every symbol covers its first byte.
// Saturates at the largest address instead of wrapping.
inline uint64_t SymbolEnd(uint64_t start, uint64_t size, std::optional<uint64_t> next_start,
                          uint64_t limit) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (size > 0) return size > kMax - start ? kMax : start + size;
  uint64_t end = next_start ? std::min(*next_start, limit) : limit;
  return std::max(end, start == kMax ? kMax : start + 1);
}

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_IMAGE_SYMBOL_END_H
