// symbol_end_test.cpp - the one rule for where a symbol ends
// (libprofile/image/symbol_end.h), shared by ELF symbols, the kernel symbols
// lcpid stores and the reports that look offsets up in them.
#include "libprofile/image/symbol_end.h"

#include <catch2/catch.hpp>
#include <limits>

using lcpi::SymbolEnd;

namespace {
constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
}

TEST_CASE("a sized symbol ends at start + size, whatever follows it") {
  CHECK(SymbolEnd(0x1000, 0x20, 0x1010, 0x2000) == 0x1020);  // overlaps the next: its own size wins
  CHECK(SymbolEnd(0x1000, 0x20, std::nullopt, 0x1001) == 0x1020);
  CHECK(SymbolEnd(kMax - 4, 100, std::nullopt, kMax) == kMax);  // saturates, never wraps
}

TEST_CASE("an unsized symbol runs to the next symbol, but not past its limit") {
  CHECK(SymbolEnd(0x1000, 0, 0x1040, 0x2000) == 0x1040);
  CHECK(SymbolEnd(0x1000, 0, 0x3000, 0x2000) == 0x2000);        // the segment ends first
  CHECK(SymbolEnd(0x1000, 0, std::nullopt, 0x2000) == 0x2000);  // the last one: to the limit
}

TEST_CASE("every symbol covers at least its first byte") {
  CHECK(SymbolEnd(0x1000, 0, 0x1000, 0x2000) == 0x1001);  // an alias at the same address
  CHECK(SymbolEnd(0x1000, 0, std::nullopt, 0x1000) == 0x1001);
  CHECK(SymbolEnd(0x1000, 0, std::nullopt, 0) == 0x1001);  // a limit below the start
  CHECK(SymbolEnd(kMax, 0, std::nullopt, kMax) == kMax);
}
