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

// The code point of the valid UTF-8 sequence `s` (Utf8Length(s) == s.size()).
uint32_t CodePoint(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i])); };
  if (s.size() == 2) return (b(0) & 0x1f) << 6 | (b(1) & 0x3f);
  if (s.size() == 3) return (b(0) & 0x0f) << 12 | (b(1) & 0x3f) << 6 | (b(2) & 0x3f);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3f) << 12 | (b(2) & 0x3f) << 6 | (b(3) & 0x3f);
}

// Valid UTF-8 that still must not reach a reader raw: the C1 controls
// (U+009B is a CSI); the BiDi controls, which reorder what follows
// (Trojan Source, CVE-2021-42574: "/opt/x<U+202E>6.os.cbil/tnega" reads
// "/opt/xagent/libc.so.6"); the line and paragraph separators; and the
// zero-width characters, which make two different names look alike.
bool Hidden(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
         (cp >= 0x2028 && cp <= 0x202e) || cp == 0x2060 || (cp >= 0x2066 && cp <= 0x2069) ||
         cp == 0xfeff;
}

}  // namespace

std::string Printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x80) {
      // A backslash is escaped in a name, so every \xNN shown is an escape;
      // a whole report (keep_newlines) holds names escaped already.
      if ((u < 0x20 && !(keep_newlines && u == '\n')) || u == 0x7f ||
          (u == '\\' && !keep_newlines)) {
        AppendEscaped(&out, text.substr(i, 1));
      } else {
        out += text[i];
      }
      ++i;
      continue;
    }
    const size_t n = Utf8Length(text.substr(i));
    if (n == 0 || Hidden(CodePoint(text.substr(i, n)))) {
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
