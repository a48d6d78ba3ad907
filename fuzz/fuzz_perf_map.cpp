// fuzz_perf_map.cpp - fuzz target for ParsePerfMap, the parser of the JIT
// map files (/tmp/perf-PID.map) that other users' processes write. Whatever
// the bytes, it returns symbols that keep its promises: a non-empty name no
// longer than the limit, a non-zero size, and a range that ends below 2^63 (what the
// store accepts), and never more symbols than lines.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "libprofile/attribute/perf_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lcpi::PerfMapLimits limits;
  limits.max_lines = 64;
  limits.max_name = 32;
  lcpi::PerfMapParse p = lcpi::ParsePerfMap(text, limits);
  if (p.symbols.size() > limits.max_lines) std::abort();
  for (const lcpi::PerfMapSymbol& s : p.symbols) {
    if (s.name.empty() || s.name.size() > limits.max_name || s.size == 0) std::abort();
    if (!lcpi::StorableRange(s.start, s.size)) std::abort();
  }
  return 0;
}
