// text_test.cpp - tests of the one hex and decimal parser (libprofile/base/text.h)
// that kallsyms, /proc/modules and lcpilist's --range share.
#include "libprofile/base/text.h"

#include <catch2/catch.hpp>

using lcpi::ParseDecimal;
using lcpi::ParseHex;

TEST_CASE("ParseHex reads hex with or without 0x, the whole text or nothing") {
  CHECK(ParseHex("ffffffff81000000") == 0xffffffff81000000ULL);
  CHECK(ParseHex("0x1130") == 0x1130u);
  CHECK(ParseHex("0XaBc") == 0xabcu);
  CHECK(ParseHex("0") == 0u);
  CHECK(ParseHex("ffffffffffffffff") == UINT64_MAX);

  CHECK_FALSE(ParseHex(""));
  CHECK_FALSE(ParseHex("0x"));
  CHECK_FALSE(ParseHex("0x0x1"));
  CHECK_FALSE(ParseHex("12g"));
  CHECK_FALSE(ParseHex(" 12"));
  CHECK_FALSE(ParseHex("12 "));
  CHECK_FALSE(ParseHex("-1"));
  CHECK_FALSE(ParseHex("+1"));
  CHECK_FALSE(ParseHex("10000000000000000"));  // 2^64: does not fit
}

TEST_CASE("ParseDecimal reads digits only") {
  CHECK(ParseDecimal("16384") == 16384u);
  CHECK(ParseDecimal("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(ParseDecimal(""));
  CHECK_FALSE(ParseDecimal("0x10"));
  CHECK_FALSE(ParseDecimal("-5"));
  CHECK_FALSE(ParseDecimal("18446744073709551616"));
  CHECK_FALSE(ParseDecimal("12a"));
}

TEST_CASE("Printable escapes control characters and nothing else") {
  using lcpi::Printable;
  CHECK(Printable("") == "");
  CHECK(Printable("/usr/bin/xz") == "/usr/bin/xz");
  CHECK(Printable("caf\xc3\xa9 b\\c") == "caf\xc3\xa9 b\\c");  // UTF-8 and backslashes kept
  // A comm set with PR_SET_NAME to clear the screen and forge a line.
  CHECK(Printable("\x1b[2J\rok\n") == "\\x1b[2J\\x0dok\\x0a");
  CHECK(Printable(std::string_view("a\0b", 3)) == "a\\x00b");
  CHECK(Printable("\x7f\x01") == "\\x7f\\x01");
}

TEST_CASE("Printable can keep a report's line breaks") {
  using lcpi::Printable;
  CHECK(Printable("a\nb\x1b", true) == "a\nb\\x1b");
  CHECK(Printable("a\nb", false) == "a\\x0ab");
  CHECK(Printable("\r\n", true) == "\\x0d\n");
}

// The one convention every renderer shows a name by (docs/tools.md, "Names
// in reports"): valid UTF-8 stays, every other byte, every C0 control, DEL
// and every C1 control (U+0080-U+009F, raw or UTF-8 encoded) is \xNN per byte.
TEST_CASE("Printable escapes invalid UTF-8 and C1 controls byte by byte") {
  using lcpi::Printable;
  CHECK(Printable("a\xff\xfe"
                  "b") == "a\\xff\\xfeb");
  // The one-byte CSI, raw and UTF-8 encoded (U+009B): both reach a terminal.
  CHECK(Printable("\x9b"
                  "31m") == "\\x9b31m");
  CHECK(Printable("\xc2\x9b"
                  "31m") == "\\xc2\\x9b31m");
  CHECK(Printable("\xc2\x80\xc2\x9f\xc2\xa0") == "\\xc2\\x80\\xc2\\x9f\xc2\xa0");  // NBSP kept
  // Tab is a C0 control too: it would shift a text report's columns.
  CHECK(Printable("a\tb") == "a\\x09b");
  // Truncated, overlong, surrogate and beyond-U+10FFFF sequences.
  CHECK(Printable("\xe2\x82") == "\\xe2\\x82");
  CHECK(Printable("\xc0\xaf") == "\\xc0\\xaf");
  CHECK(Printable("\xe0\x80\xaf") == "\\xe0\\x80\\xaf");
  CHECK(Printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");
  CHECK(Printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");
  CHECK(Printable("\xe2\x82\xac \xf0\x9f\x98\x80") == "\xe2\x82\xac \xf0\x9f\x98\x80");
  // A lead byte followed by an ASCII byte: only the lead byte is escaped.
  CHECK(Printable("\xe2"
                  "ab") == "\\xe2ab");
  // Shown once or twice, the same: every renderer may apply it again.
  const std::string hostile = "evil\n 77777  99.99  fake-line\xff\x9b\xc2\x9b\x7f";
  CHECK(Printable(Printable(hostile)) == Printable(hostile));
}
