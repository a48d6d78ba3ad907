// time_spec_test.cpp - durations, sizes and times as the command lines read them.
#include "libprofile/base/time_spec.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>

using namespace lcpi;

namespace {
// 2026-11-23T14:00:00Z
constexpr int64_t kNow = 1795442400;

// Runs the body with TZ set, restoring the old value.
struct WithTz {
  explicit WithTz(const char* tz) {
    const char* old = std::getenv("TZ");
    if (old) old_ = old, had_ = true;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~WithTz() {
    if (had_)
      setenv("TZ", old_.c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  std::string old_;
  bool had_ = false;
};
}  // namespace

TEST_CASE("durations: units, sums, bare seconds") {
  CHECK(*ParseDuration("30s") == 30);
  CHECK(*ParseDuration("10m") == 600);
  CHECK(*ParseDuration("1h") == 3600);
  CHECK(*ParseDuration("1h30m") == 5400);
  CHECK(*ParseDuration("30d") == 30 * 86400);
  CHECK(*ParseDuration("2w") == 14 * 86400);
  CHECK(*ParseDuration("45") == 45);
}

TEST_CASE("durations: bad input is refused with the forms that work") {
  for (const char* bad : {"", "0", "0s", "-1h", "1x", "h", "1h30", "1.5h", "1 h", "99999999999d"}) {
    auto d = ParseDuration(bad);
    INFO(bad);
    REQUIRE_FALSE(d);
    CHECK(d.error().code() == Errc::kInvalidArgument);
    CHECK(d.error().message().find("such as 30s, 10m, 1h") != std::string::npos);
  }
}

TEST_CASE("durations print in the spelling they are read in") {
  for (int64_t s : {1, 45, 600, 3600, 5400, 86400, 30 * 86400, 14 * 86400, 90061}) {
    INFO(s);
    CHECK(*ParseDuration(FormatDuration(s)) == s);
  }
  CHECK(FormatDuration(3600) == "1h");
  CHECK(FormatDuration(30 * 86400) == "30d");
  CHECK(FormatDuration(14 * 86400) == "2w");
}

TEST_CASE("sizes: binary units") {
  CHECK(*ParseSize("1000") == 1000);
  CHECK(*ParseSize("4K") == 4096);
  CHECK(*ParseSize("512M") == 512ull << 20);
  CHECK(*ParseSize("2G") == 2ull << 30);
  CHECK(*ParseSize("2GiB") == 2ull << 30);
  CHECK(*ParseSize("1t") == 1ull << 40);
  CHECK(FormatSize(2ull << 30) == "2G");
  CHECK(FormatSize(1536 * 1024) == "1536K");
  for (const char* bad : {"", "G", "2X", "-1G", "1.5G", "99999999T"}) {
    INFO(bad);
    auto s = ParseSize(bad);
    REQUIRE_FALSE(s);
    CHECK(s.error().code() == Errc::kInvalidArgument);
  }
}

TEST_CASE("times: relative, now, unix seconds") {
  CHECK(*ParseTimeSpec("now", kNow) == kNow);
  CHECK(*ParseTimeSpec("2h", kNow) == kNow - 7200);
  CHECK(*ParseTimeSpec("1d", kNow) == kNow - 86400);
  CHECK(*ParseTimeSpec("@1700000000", kNow) == 1700000000);
}

TEST_CASE("times: ISO 8601 in UTC and at offsets") {
  CHECK(*ParseTimeSpec("2026-11-23T14:00:00Z", 0) == kNow);
  CHECK(*ParseTimeSpec("2026-11-23T14:00Z", 0) == kNow);
  CHECK(*ParseTimeSpec("2026-11-23 15:00:00+01:00", 0) == kNow);
  CHECK(*ParseTimeSpec("2026-11-23T15:00+0100", 0) == kNow);
  CHECK(*ParseTimeSpec("2026-11-23T09:30-04:30", 0) == kNow);
  CHECK(ParseTimeSpec("2026-11-23T16+02", 0).error().code() == Errc::kInvalidArgument);
  CHECK(FormatUtc(kNow) == "2026-11-23T14:00:00Z");
}

TEST_CASE("times: ISO 8601 without a zone is local time") {
  {
    WithTz tz("UTC0");
    CHECK(*ParseTimeSpec("2026-11-23T14:00", 0) == kNow);
    CHECK(*ParseTimeSpec("2026-11-23", 0) == kNow - 14 * 3600);
  }
  {
    WithTz tz("CET-1CEST,M3.5.0,M10.5.0/3");  // UTC+1 in November, +2 in July
    CHECK(*ParseTimeSpec("2026-11-23T15:00", 0) == kNow);
    CHECK(*ParseTimeSpec("2026-07-01T02:00", 0) == *ParseTimeSpec("2026-07-01T00:00Z", 0));
  }
}

TEST_CASE("times: bad input is refused, impossible dates too") {
  for (const char* bad : {"", "yesterday", "2026-13-01", "2026-02-30", "2026-11-23T24:00",
                          "2026-11-23T14:60", "2026-11-23T14", "2026/11/23", "2026-11-23X",
                          "2026-11-23T14:00+25:00", "@", "@12x", "-2h"}) {
    INFO(bad);
    auto t = ParseTimeSpec(bad, kNow);
    REQUIRE_FALSE(t);
    CHECK(t.error().code() == Errc::kInvalidArgument);
    CHECK(t.error().message().find("2026-11-23T14:00") != std::string::npos);
  }
}
