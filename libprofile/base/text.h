// text.h - numbers read from text (kallsyms and /proc/modules fields, the
// addresses people type on lcpilist's command line), one parser each so
// every caller accepts and refuses the same spellings; and untrusted text
// made safe to print.
#ifndef LCPI_LIBPROFILE_BASE_TEXT_H
#define LCPI_LIBPROFILE_BASE_TEXT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lcpi {

// A 64-bit hexadecimal number, with or without a 0x/0X prefix: every
// character must be a hex digit, and the value must fit (so at most 16
// significant digits). nullopt otherwise, empty text included.
std::optional<uint64_t> ParseHex(std::string_view text);

// A 64-bit decimal number: digits only, no sign, no spaces; nullopt otherwise.
std::optional<uint64_t> ParseDecimal(std::string_view text);

// `text` safe to print on a terminal or in a log: every control character
// (below 0x20, and 0x7f) becomes \xNN, so a command name set with
// PR_SET_NAME or a file name chosen by another user cannot move the cursor,
// recolour the screen or forge a log line. Everything else is unchanged;
// with keep_newlines, so are line breaks (for a whole report, whose lines
// are its own).
std::string Printable(std::string_view text, bool keep_newlines = false);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_TEXT_H
