// clickhouse_text.cpp - escaping for ClickHouse's TabSeparated format and
// string literals (clickhouse_text.h).
#include "libprofile/fleet/clickhouse_text.h"

#include <algorithm>

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

std::vector<std::string> SqlInLists(const std::vector<std::string>& values, size_t max_bytes) {
  std::vector<std::string> lists;
  std::string list;
  for (const std::string& v : values) {
    const std::string literal = SqlString(v);
    if (!list.empty() && list.size() + 2 + literal.size() > max_bytes) {
      lists.push_back(std::move(list));
      list.clear();
    }
    if (!list.empty()) list += ", ";
    list += literal;
  }
  if (!list.empty()) lists.push_back(std::move(list));
  return lists;
}

std::vector<std::string_view> TsvChunks(std::string_view rows, size_t max_bytes) {
  std::vector<std::string_view> chunks;
  max_bytes = std::max<size_t>(max_bytes, 1);
  while (!rows.empty()) {
    size_t end = rows.size();
    if (end > max_bytes) {
      // the last row's end within max_bytes, or the first row's end
      const size_t nl = rows.rfind('\n', max_bytes - 1);
      end = nl != std::string_view::npos ? nl + 1 : std::min(rows.find('\n'), rows.size() - 1) + 1;
    }
    chunks.push_back(rows.substr(0, end));
    rows.remove_prefix(end);
  }
  return chunks;
}

std::string WithoutUserinfo(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t end = std::min(url.find_first_of("/?#", start), url.size());
  // The last '@' of the authority ends the userinfo (a password may hold '@').
  const size_t at = url.substr(start, end - start).rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, start)) + std::string(url.substr(start + at + 1));
}

}  // namespace lcpi::fleet
