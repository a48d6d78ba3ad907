// text.cpp - ParseHex and ParseDecimal, over std::from_chars (no locale, no
// whitespace, no sign: what a kernel file or an address argument holds), and
// Printable.
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

std::string Printable(std::string_view text, bool keep_newlines) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && !(keep_newlines && c == '\n')) || u == 0x7f) {
      out += "\\x";
      out += kDigits[u >> 4];
      out += kDigits[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace lcpi
