// text.cpp - ParseHex and ParseDecimal, over std::from_chars (no locale, no
// whitespace, no sign: what a kernel file or an address argument holds).
#include "libprofile/base/text.h"

#include <charconv>

namespace lcpi {
namespace {

std::optional<uint64_t> ParseWhole(std::string_view text, int base) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<uint64_t> ParseHex(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  return ParseWhole(text, 16);
}

std::optional<uint64_t> ParseDecimal(std::string_view text) { return ParseWhole(text, 10); }

}  // namespace lcpi
