// cell_format.h - how each format writes a cell of the table model: the one
// place that knows a share has two decimals in text and four in CSV and
// JSON, that an address is hex in text and CSV and a decimal integer in
// JSON, and how JSON quotes a string. Internal to the renderers.
#ifndef LCPI_LIBPROFILE_REPORT_CELL_FORMAT_H
#define LCPI_LIBPROFILE_REPORT_CELL_FORMAT_H

#include <string>

#include "libprofile/report/table.h"

namespace lcpi::report {

// The cell as `format` writes it; for JSON a value ("text" quoted, null when
// absent). Not for per-event counts (a JSON object: see render_json.cpp).
std::string CellText(const Column& column, const Cell& cell, Format format);

// A JSON string literal, quotes included.
std::string JsonString(const std::string& text);

// "0x1f".
std::string Hex(uint64_t value);

// `value` with `decimals` decimals; `sign` adds "+" to positive values.
std::string Fixed(double value, int decimals, bool sign = false);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_CELL_FORMAT_H
