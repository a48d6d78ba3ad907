// clickhouse_text_test.cpp - names with any bytes escaped for ClickHouse's
// TabSeparated input and string literals (libprofile/fleet/clickhouse_text.h).
// That ClickHouse reads them back byte for byte is the fleet-ship test's.
#include "libprofile/fleet/clickhouse_text.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

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

TEST_CASE("IN lists are cut so that no query passes a size") {
  using lcpi::fleet::SqlInLists;
  CHECK(SqlInLists({}, 100).empty());
  CHECK(SqlInLists({"a", "b'c"}, 100) == std::vector<std::string>{"'a', 'b\\'c'"});
  // 5,000 identities of 72 characters: ~380 KiB as one list (ClickHouse's
  // max_query_size is 256 KiB), each list here at most 64 KiB.
  std::vector<std::string> ids;
  for (int i = 0; i < 5000; i++) ids.push_back(std::string(64, 'a') + std::to_string(10000000 + i));
  auto lists = SqlInLists(ids, 64 * 1024);
  REQUIRE(lists.size() > 5);
  size_t values = 0;
  for (const std::string& l : lists) {
    CHECK(l.size() <= 64 * 1024);
    values += static_cast<size_t>(std::count(l.begin(), l.end(), '\'')) / 2;
  }
  CHECK(values == ids.size());
  // One value longer than the size is a list of its own, never dropped.
  auto big = SqlInLists({"x", std::string(200, 'y'), "z"}, 100);
  REQUIRE(big.size() == 3);
  CHECK(big[1].size() == 202);
}

TEST_CASE("a URL shown in a message has no user or password") {
  using lcpi::fleet::WithoutUserinfo;
  CHECK(WithoutUserinfo("http://u:s3cret@h:1/?x") == "http://h:1/?x");
  CHECK(WithoutUserinfo("https://shipper:p%40ss@ch.example:8443/db") ==
        "https://ch.example:8443/db");
  CHECK(WithoutUserinfo("http://h:8123") == "http://h:8123");
  CHECK(WithoutUserinfo("http://h:8123/a@b") == "http://h:8123/a@b");
  // Not a URL at all (the messages that say so): still no password.
  CHECK(WithoutUserinfo("ftp://u:pw@h") == "ftp://h");
  CHECK(WithoutUserinfo("u:pw@h:8123") == "h:8123");
  CHECK(WithoutUserinfo("http://a:b@c@d/") == "http://d/");
  CHECK(WithoutUserinfo("") == "");
}

TEST_CASE("a window's rows are sent in parts of whole rows, none over the size") {
  using lcpi::fleet::TsvChunks;
  std::string rows;
  for (int i = 0; i < 1000; ++i)
    rows += "host\t" + std::to_string(i) + "\t" + std::string(i % 37, 'x') + "\n";
  for (size_t max : {1u, 17u, 64u, 1000u, 4096u, 1u << 20}) {
    INFO("max " << max);
    std::vector<std::string_view> parts = TsvChunks(rows, max);
    std::string joined;
    for (std::string_view p : parts) {
      REQUIRE(!p.empty());
      CHECK(p.back() == '\n');  // whole rows
      // at most max, or one row alone where a row is longer
      CHECK((p.size() <= max || std::count(p.begin(), p.end(), '\n') == 1));
      joined += p;
    }
    CHECK(joined == rows);  // every byte, in order, once
  }
  CHECK(TsvChunks(rows, 1u << 20).size() == 1);
  CHECK(TsvChunks("", 10).empty());
  // a last row without its newline (not what lcpi-ship sends) is still sent
  auto cut = TsvChunks("a\tb\nccccccccc", 5);
  REQUIRE(cut.size() == 2);
  CHECK(cut[1] == "ccccccccc");
}
