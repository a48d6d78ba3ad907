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

// `text` as every tool shows a name (docs/tools.md, "Names in reports"):
// valid UTF-8 is kept, and each byte of anything else becomes \xNN: bytes
// that are not part of valid UTF-8, the C0 controls (below 0x20: newline
// and tab included), DEL (0x7f), the C1 controls (U+0080-U+009F, encoded
// c2 80 - c2 9f; 0x9b alone, the one-byte CSI, is not UTF-8 anyway), the
// BiDi controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069:
// Trojan Source, CVE-2021-42574), U+2028 and U+2029, the zero-width
// U+200B-U+200D, U+2060 and U+FEFF, and the backslash (\x5c), so every
// \xNN shown is an escape and the text can be read back byte for byte.
// So a command name set with PR_SET_NAME or a file name chosen by another
// user cannot move the cursor, recolour the screen, reorder a line, forge a
// row, pass for another name or break a strict UTF-8 reader. The result is
// valid UTF-8 without any of those characters.
// With keep_newlines, for a whole rendered report (whose lines are its own
// and whose names are Printable already), line breaks and backslashes stay:
// Printable(Printable(x), true) == Printable(x), so that pass is a
// backstop that changes nothing a renderer escaped.
std::string Printable(std::string_view text, bool keep_newlines = false);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_TEXT_H
