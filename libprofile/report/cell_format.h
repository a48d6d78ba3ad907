// cell_format.h - how each format writes a cell of the table model: the one
// place that knows a share has two decimals in text and four in CSV and
// JSON, that an address is hex in text and CSV and a decimal integer in
// JSON, and how JSON quotes a string. Internal to the renderers.
#ifndef LCPI_LIBPROFILE_REPORT_CELL_FORMAT_H
#define LCPI_LIBPROFILE_REPORT_CELL_FORMAT_H

#include <string>

#include "libprofile/report/table.h"

namespace lcpi::report {

// The cell as `format` writes it, text cells Printable; for JSON a value
// ("text" quoted, null when absent). Not for per-event counts (a JSON object: see render_json.cpp).
std::string CellText(const Column& column, const Cell& cell, Format format);

// Every renderer shows a name by one convention (Printable, base/text.h;
// docs/tools.md, "Names in reports"); text cells are Printable already.

// A JSON string literal, quotes included, of Printable(text): valid UTF-8,
// and what it reads as is what the text report shows.
std::string JsonString(const std::string& text);

// A CSV field (RFC 4180) of Printable(text). With spreadsheet_safe (text
// cells, not numbers: "-1.5" stays a number), a leading ' when it starts
// with = + - @ (OWASP's rule for CSV injection).
std::string CsvField(const std::string& text, bool spreadsheet_safe);

// Printable text cut to `width` bytes with "..." where it was cut, never
// inside a UTF-8 character or a \xNN escape; both_ends keeps the head and the
// tail (names and paths), else the head (render_text.cpp says why).
std::string CutText(const std::string& s, size_t width, bool both_ends);

// "0x1f".
std::string Hex(uint64_t value);

// `value` with `decimals` decimals; `sign` adds "+" to positive values.
std::string Fixed(double value, int decimals, bool sign = false);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_CELL_FORMAT_H
