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
// and tab included), DEL (0x7f) and the C1 controls (U+0080-U+009F,
// encoded c2 80 - c2 9f; 0x9b alone, the one-byte CSI, is not UTF-8
// anyway). So a command name set with PR_SET_NAME or a file name chosen by
// another user cannot move the cursor, recolour the screen, forge a row or
// break a strict UTF-8 reader. The result is valid UTF-8 without a control
// character, and Printable(Printable(x)) == Printable(x), so renderers may
// apply it again. A backslash is kept: the text is for reading, and a name
// that spells "\xff" itself reads like the byte. With keep_newlines, line
// breaks stay (for a whole report, whose lines are its own).
std::string Printable(std::string_view text, bool keep_newlines = false);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_TEXT_H
