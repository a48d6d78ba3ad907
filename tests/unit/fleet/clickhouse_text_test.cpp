// clickhouse_text_test.cpp - names with any bytes escaped for ClickHouse's
// TabSeparated input and string literals (libprofile/fleet/clickhouse_text.h).
// That ClickHouse reads them back byte for byte is the fleet-ship test's.
#include "libprofile/fleet/clickhouse_text.h"

#include <catch2/catch.hpp>

using lcpi::fleet::AppendTsvField;
using lcpi::fleet::SqlString;
using lcpi::fleet::UrlEncode;

TEST_CASE("a TabSeparated field never holds a raw tab, newline or lone backslash") {
  std::string out;
  AppendTsvField(out, std::string("a\tb\nc\\d\re\0f\xff", 12));
  CHECK(out == std::string("a\\tb\\nc\\\\d\\re\\0f\xff"));
  out.clear();
  AppendTsvField(out, uint64_t{18446744073709551615ull});
  CHECK(out == "18446744073709551615");
}

TEST_CASE("a string literal is ASCII with quote, backslash and other bytes escaped") {
  CHECK(SqlString("it's") == "'it\\'s'");
  CHECK(SqlString("a\\b") == "'a\\\\b'");
  CHECK(SqlString(std::string("\t\n\xff\0", 4)) == "'\\x09\\x0A\\xFF\\x00'");
  CHECK(SqlString("") == "''");
}

TEST_CASE("a query parameter is percent-encoded") {
  CHECK(UrlEncode("INSERT INTO a.b (x) FORMAT TabSeparated") ==
        "INSERT%20INTO%20a.b%20%28x%29%20FORMAT%20TabSeparated");
  CHECK(UrlEncode("a-b_c.d~&=?#") == "a-b_c.d~%26%3D%3F%23");
}
