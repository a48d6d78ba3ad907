// text.h - numbers read from text: kallsyms and /proc/modules fields, and
// the addresses people type on lcpilist's command line. One parser each, so
// every caller accepts and refuses the same spellings.
#ifndef LCPI_LIBPROFILE_BASE_TEXT_H
#define LCPI_LIBPROFILE_BASE_TEXT_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace lcpi {

// A 64-bit hexadecimal number, with or without a 0x/0X prefix: every
// character must be a hex digit, and the value must fit (so at most 16
// significant digits). nullopt otherwise, empty text included.
std::optional<uint64_t> ParseHex(std::string_view text);

// A 64-bit decimal number: digits only, no sign, no spaces; nullopt otherwise.
std::optional<uint64_t> ParseDecimal(std::string_view text);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_TEXT_H
