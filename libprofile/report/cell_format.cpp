// cell_format.cpp - each format's way of writing a cell (see cell_format.h).
#include "libprofile/report/cell_format.h"

#include <cinttypes>
#include <cstdio>

namespace lcpi::report {

std::string Hex(uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, value);
  return buf;
}

std::string Fixed(double value, int decimals, bool sign) {
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, value);
  return buf;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char ch : text) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

std::string CellText(const Column& column, const Cell& cell, Format format) {
  const bool json = format == Format::kJson;
  if (std::holds_alternative<std::monostate>(cell)) return json ? "null" : "";
  switch (column.type) {
    case CellType::kText:
    case CellType::kPath:
      return json ? JsonString(std::get<std::string>(cell)) : std::get<std::string>(cell);
    case CellType::kCount:
      return std::to_string(std::get<uint64_t>(cell));
    case CellType::kPercent:
    case CellType::kDelta: {
      const double value = std::get<double>(cell);
      if (format == Format::kText) return Fixed(value, 2, column.type == CellType::kDelta);
      return Fixed(value, json ? 4 : column.csv_decimals);
    }
    case CellType::kHex:
      return json ? std::to_string(std::get<uint64_t>(cell)) : Hex(std::get<uint64_t>(cell));
    case CellType::kInteger:
      return std::to_string(std::get<int64_t>(cell));
    case CellType::kBool:
      return std::get<bool>(cell) ? "true" : "false";
  }
  return "";
}

}  // namespace lcpi::report
