// saturating.h - sums of counts that stop at 2^64-1 instead of wrapping: a
// fleet's counts are whatever its hosts shipped, and two hostile rows of
// 2^63 must not add up to an honest-looking number.
#ifndef LCPI_LIBPROFILE_BASE_SATURATING_H
#define LCPI_LIBPROFILE_BASE_SATURATING_H

#include <cstdint>

namespace lcpi {

// a + b, or 2^64-1 beyond it.
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// a + b, or INT64_MAX (INT64_MIN) beyond it: a statistic is an int64.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_SATURATING_H
