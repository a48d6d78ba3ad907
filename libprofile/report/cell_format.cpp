// cell_format.cpp - each format's way of writing a cell (see cell_format.h).
#include "libprofile/report/cell_format.h"

#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string_view>

#include "libprofile/base/text.h"

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
  // The text report's display string (Printable: valid UTF-8, no control
  // character), quoted: a strict JSON parser reads what the text report shows.
  const std::string shown = Printable(text);
  std::string out = "\"";
  for (char ch : shown) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string CsvField(const std::string& text, bool spreadsheet_safe) {
  std::string shown = Printable(text);
  // OWASP's rule for CSV injection: a spreadsheet evaluates a cell that
  // starts with = + - @ (or tab or CR, which Printable has escaped already)
  // as a formula; a leading ' makes it text.
  if (spreadsheet_safe && !shown.empty() &&
      std::string_view("=+-@\t\r").find(shown[0]) != std::string_view::npos) {
    shown.insert(shown.begin(), '\'');
  }
  // RFC 4180: a field holding a comma, a quote or a line break is quoted,
  // its quotes doubled (a line break cannot be left after Printable).
  if (shown.find_first_of(",\"\r\n") == std::string::npos) return shown;
  std::string quoted = "\"";
  for (char ch : shown) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + "\"";
}

std::string CellText(const Column& column, const Cell& cell, Format format) {
  const bool json = format == Format::kJson;
  if (std::holds_alternative<std::monostate>(cell)) return json ? "null" : "";
  switch (column.type) {
    case CellType::kText:
    case CellType::kName:
    case CellType::kPath:
      return json ? JsonString(std::get<std::string>(cell))
                  : Printable(std::get<std::string>(cell));
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

// Cut to `width` bytes, never inside a UTF-8 character or a \xNN escape
// (the text is Printable: valid UTF-8, and a backslash only starts an
// escape). A path keeps its head and its tail with "..." between: cut from
// the front alone, /home/evil/aaa.../usr/lib/x86_64-linux-gnu/libc.so.6
// would read as the system's libc, and the head says whose file it is. A
// name keeps both too: a Rust or C++ name's head says whose type, its end
// which function ("<addr2line::lookup::Loo...::new_lookup"). Other text
// keeps its head.
std::string CutText(const std::string& s, size_t width, bool both_ends) {
  if (s.size() <= width) return s;
  const auto continuation = [&](size_t i) {
    return i < s.size() && (static_cast<unsigned char>(s[i]) & 0xc0) == 0x80;
  };
  // The start of the escape that holds byte i, if i is inside one.
  const auto in_escape = [&](size_t i) -> std::optional<size_t> {
    for (size_t back = 1; back <= 3 && back <= i; ++back) {
      if (s[i - back] == '\\') return i - back;
    }
    return std::nullopt;
  };
  // A boundary at or before `to` (for a head) / at or after `from` (a tail).
  const auto head_end = [&](size_t to) {
    while (to > 0 && continuation(to)) --to;
    if (auto e = in_escape(to)) to = *e;
    return to;
  };
  const auto tail_start = [&](size_t from) {
    while (continuation(from)) ++from;
    if (auto e = in_escape(from)) from = std::min(s.size(), *e + 4);
    return from;
  };
  if (width <= 3) return s.substr(0, head_end(width));
  const size_t keep = width - 3;
  if (!both_ends) return s.substr(0, head_end(keep)) + "...";
  const size_t head = head_end(keep / 2);
  // The tail takes what the head left, so a head shortened to a boundary
  // gives its bytes to the tail.
  return s.substr(0, head) + "..." + s.substr(tail_start(s.size() - (keep - head)));
}

}  // namespace lcpi::report
