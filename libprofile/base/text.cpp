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

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (RFC 3629: no
// overlong form, no surrogate, nothing beyond U+10FFFF), or 0.
size_t Utf8Length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = b(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (lead >= 0xc2 && lead <= 0xdf) {
    n = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    n = 3;
    if (lead == 0xe0) lo = 0xa0;  // overlong below
    if (lead == 0xed) hi = 0x9f;  // surrogates above
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    n = 4;
    if (lead == 0xf0) lo = 0x90;  // overlong below
    if (lead == 0xf4) hi = 0x8f;  // beyond U+10FFFF above
  } else {
    return 0;
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xbf) return 0;
  }
  return n;
}

void AppendEscaped(std::string* out, std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    *out += "\\x";
    *out += kDigits[u >> 4];
    *out += kDigits[u & 0xf];
  }
}

}  // namespace

std::string Printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x80) {
      if ((u < 0x20 && !(keep_newlines && u == '\n')) || u == 0x7f) {
        AppendEscaped(&out, text.substr(i, 1));
      } else {
        out += text[i];
      }
      ++i;
      continue;
    }
    const size_t n = Utf8Length(text.substr(i));
    // U+0080-U+009F (c2 80 - c2 9f) are the C1 controls: 9b is a CSI.
    if (n == 0 || (u == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0)) {
      AppendEscaped(&out, text.substr(i, n == 0 ? 1 : n));
      i += n == 0 ? 1 : n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace lcpi
