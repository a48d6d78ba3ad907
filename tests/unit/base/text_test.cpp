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
  CHECK(Printable("caf\xc3\xa9 b") == "caf\xc3\xa9 b");  // UTF-8 kept
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
  // A rendered report passed again (keep_newlines: the backstop over a
  // whole report) is unchanged: its names are escaped already.
  const std::string hostile = "evil\n 77777  99.99  fake-line\xff\x9b\xc2\x9b\x7f\\x0a\xe2\x80\xae";
  CHECK(Printable(Printable(hostile), true) == Printable(hostile));
}

// Trojan Source (CVE-2021-42574): a name holding U+202E displays reversed,
// "/opt/x<RLO>6.os.cbil/tnega" as "/opt/xagent/libc.so.6". Every BiDi
// control, the line and paragraph separators and the zero-width characters
// are escaped byte by byte like any other control.
TEST_CASE("Printable escapes BiDi controls, line separators and zero-width characters") {
  using lcpi::Printable;
  CHECK(Printable("/opt/x\xe2\x80\xae"
                  "6.os.cbil/tnega") == "/opt/x\\xe2\\x80\\xae6.os.cbil/tnega");
  CHECK(Printable("\xd8\x9c") == "\\xd8\\x9c");  // U+061C ARABIC LETTER MARK
  const char* const escaped[] = {
      "\xe2\x80\x8b", "\xe2\x80\x8c", "\xe2\x80\x8d",                  // U+200B-U+200D zero-width
      "\xe2\x80\x8e", "\xe2\x80\x8f",                                  // U+200E LRM, U+200F RLM
      "\xe2\x80\xa8", "\xe2\x80\xa9",                                  // U+2028, U+2029 separators
      "\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac",                  // U+202A-U+202C
      "\xe2\x80\xad", "\xe2\x80\xae",                                  // U+202D, U+202E
      "\xe2\x81\xa0",                                                  // U+2060 WORD JOINER
      "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9",  // U+2066-U+2069
      "\xef\xbb\xbf",                                                  // U+FEFF
  };
  for (const char* c : escaped) {
    INFO("code point bytes " << Printable(c));
    const std::string s(c);
    std::string want;
    for (unsigned char b : s) {
      static constexpr char kHex[] = "0123456789abcdef";
      want += std::string("\\x") + kHex[b >> 4] + kHex[b & 0xf];
    }
    CHECK(Printable(s) == want);
    CHECK(Printable(s, true) == want);
  }
  // Their neighbours are ordinary text and stay.
  for (const char* kept :
       {"\xe2\x80\x8a", "\xe2\x80\x90", "\xe2\x80\xa7", "\xe2\x80\xaf", "\xe2\x81\x9f",
        "\xe2\x81\xa1", "\xe2\x81\xa5", "\xe2\x81\xaa", "\xef\xbb\xbe", "\xd8\x9b", "\xd8\x9d"}) {
    CHECK(Printable(kept) == kept);
  }
}

// A backslash is escaped too, so the convention is reversible: a name that
// spells "\x0a" itself no longer prints like a name holding a newline.
TEST_CASE("Printable escapes a backslash, so an escape is never ambiguous") {
  using lcpi::Printable;
  CHECK(Printable("a\\b") == "a\\x5cb");
  CHECK(Printable("evil\\x0a") == "evil\\x5cx0a");
  CHECK(Printable("evil\\x0a") != Printable("evil\n"));
  // A whole report (keep_newlines) is made of names escaped already: its
  // backslashes are those escapes, kept.
  CHECK(Printable("a\\x0ab\n", true) == "a\\x0ab\n");
}
