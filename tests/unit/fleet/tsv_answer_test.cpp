// tsv_answer_test.cpp - a ClickHouse answer read row by row, bounded
// (libprofile/fleet/tsv_answer.h): fake answers, no server.
#include "libprofile/fleet/tsv_answer.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using lcpi::Errc;
using lcpi::Expected;
using lcpi::fleet::ForEachTsvRow;
using Fields = std::vector<std::string_view>;

TEST_CASE("rows are handed over with their fields, an empty answer has none") {
  std::vector<std::vector<std::string>> got;
  auto ok = ForEachTsvRow("a\tb\n\t\n", 2, 10, [&](const Fields& f) -> Expected<void> {
    got.push_back({std::string(f[0]), std::string(f[1])});
    return {};
  });
  REQUIRE(ok);
  CHECK(got == std::vector<std::vector<std::string>>{{"a", "b"}, {"", ""}});
  size_t calls = 0;
  REQUIRE(ForEachTsvRow("", 3, 10, [&](const Fields&) -> Expected<void> {
    ++calls;
    return {};
  }));
  CHECK(calls == 0);
}

TEST_CASE("an answer of more rows than the cap is refused before the row past it") {
  // a hostile server's answer of empty lines: one-field rows, each cheap in
  // text and dear once parsed
  const std::string answer(2000, '\n');
  size_t calls = 0;
  auto ok = ForEachTsvRow(answer, 1, 1000, [&](const Fields&) -> Expected<void> {
    ++calls;
    return {};
  });
  REQUIRE_FALSE(ok);
  CHECK(ok.error().code() == Errc::kCorrupt);
  CHECK_THAT(ok.error().message(), Catch::Contains("more than 1000 rows"));
  CHECK(calls <= 1000);
}

TEST_CASE("a row of the wrong width ends the reading at that row") {
  // the bad row first, then a long tail that is never parsed
  std::string answer = "a\tb\tc\n";
  for (int i = 0; i < 100000; ++i) answer += "x\ty\n";
  size_t calls = 0;
  auto ok = ForEachTsvRow(answer, 2, 1'000'000, [&](const Fields&) -> Expected<void> {
    ++calls;
    return {};
  });
  REQUIRE_FALSE(ok);
  CHECK_THAT(ok.error().message(), Catch::Contains("row 1 of 3 fields, not 2"));
  CHECK(calls == 0);
}

TEST_CASE("an error of the caller's ends the reading") {
  size_t calls = 0;
  auto ok = ForEachTsvRow("1\n2\n3\n", 1, 10, [&](const Fields& f) -> Expected<void> {
    ++calls;
    if (f[0] == "2") return lcpi::Error(Errc::kInvalidArgument, "stop");
    return {};
  });
  REQUIRE_FALSE(ok);
  CHECK(ok.error().message() == "stop");
  CHECK(calls == 2);
}
