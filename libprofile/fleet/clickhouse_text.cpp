// clickhouse_text.cpp - escaping for ClickHouse's TabSeparated format and
// string literals (clickhouse_text.h).
#include "libprofile/fleet/clickhouse_text.h"

namespace lcpi::fleet {

namespace {
constexpr char kHex[] = "0123456789ABCDEF";
}  // namespace

void AppendTsvField(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\0':
        out += "\\0";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        out += c;
    }
  }
}

void AppendTsvField(std::string& out, uint64_t value) { out += std::to_string(value); }

std::string SqlString(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += c;
    } else if (b < 0x20 || b >= 0x7f) {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string UrlEncode(std::string_view value) {
  std::string out;
  for (char c : value) {
    const auto b = static_cast<unsigned char>(c);
    if ((b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
    }
  }
  return out;
}

}  // namespace lcpi::fleet
