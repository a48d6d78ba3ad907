// clickhouse_url_test.cpp - a URL refused by ClickHouseHttp::Create is named
// in its message without user or password: messages go to the journal.
#include <catch2/catch.hpp>

#include <string>

#include "libprofile/fleet/clickhouse_http.h"

using lcpi::fleet::ClickHouseHttp;

TEST_CASE("a refused URL's message holds no password") {
  for (const char* url : {"http://u:s3cret@h:1/?x", "ftp://u:s3cret@h:1", "http://u:s3cret@/",
                          "http://u:s3cret@h:1/#f"}) {
    auto ch = ClickHouseHttp::Create(url);
    REQUIRE_FALSE(ch.has_value());
    INFO(ch.error().message());
    CHECK(ch.error().message().find("s3cret") == std::string::npos);
  }
  auto ok = ClickHouseHttp::Create("http://u:s3cret@h:1");
  REQUIRE(ok.has_value());
  CHECK((*ok)->shown_url() == "http://h:1");
}
