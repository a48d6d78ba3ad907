// hashsim_test.cpp - the sample trace format of bench/hashsim
// (trace_format.h): round trips through memory, starting with the empty
// trace, and a clean, specific error for every kind of damaged file.
#include <catch2/catch.hpp>

#include "bench/hashsim/trace_format.h"

using namespace lcpi;
using namespace lcpi::trace;

namespace {

std::vector<TraceSample> Samples() {
  return {{0x401000, 42, 0, 0, 0},
          {0xffffffff81000000ull, 0, 1, 0, LCPI_RECORD_KERNEL},
          {0x7f0000001234ull, 43, 1, 1, 0}};
}

TraceHeader TwoCpus() {
  TraceHeader h;
  h.nr_cpus = 2;
  h.period_ns = 200000;
  return h;
}

Expected<Trace> Parse(const std::vector<uint8_t>& bytes) {
  return ParseTrace(bytes.data(), bytes.size(), "t.trace");
}

}  // namespace

TEST_CASE("an empty trace round-trips") {
  auto t = Parse(EncodeTrace(TwoCpus(), {}));
  REQUIRE(t);
  CHECK(t->header.nr_cpus == 2);
  CHECK(t->header.period_ns == 200000);
  CHECK(t->samples.empty());
}

TEST_CASE("samples round-trip in order") {
  auto t = Parse(EncodeTrace(TwoCpus(), Samples()));
  REQUIRE(t);
  REQUIRE(t->samples.size() == 3);
  CHECK(t->samples[1].pc == 0xffffffff81000000ull);
  CHECK(t->samples[1].flags == LCPI_RECORD_KERNEL);
  CHECK(t->samples[2].pid == 43);
  CHECK(t->samples[2].event == 1);
}

TEST_CASE("a file that is not a trace is refused by its magic") {
  std::vector<uint8_t> bytes = EncodeTrace(TwoCpus(), Samples());
  bytes[0] ^= 0xff;
  auto t = Parse(bytes);
  REQUIRE(!t);
  CHECK(t.error().code() == Errc::kNotADatabase);
}

TEST_CASE("a newer version is refused as such") {
  std::vector<uint8_t> bytes = EncodeTrace(TwoCpus(), Samples());
  bytes[4] = kTraceVersion + 1;
  auto t = Parse(bytes);
  REQUIRE(!t);
  CHECK(t.error().code() == Errc::kNewerSchema);
}

TEST_CASE("every truncation is a clean error") {
  std::vector<uint8_t> bytes = EncodeTrace(TwoCpus(), Samples());
  for (size_t n = 0; n < bytes.size(); n++) {
    auto t = ParseTrace(bytes.data(), n, "t.trace");
    REQUIRE(!t);
    CHECK(t.error().code() == Errc::kCorrupt);
  }
}

TEST_CASE("trailing bytes, bad header size, cpu count and sample fields are corrupt") {
  std::vector<uint8_t> bytes = EncodeTrace(TwoCpus(), Samples());
  SECTION("trailing bytes") { bytes.push_back(0); }
  SECTION("header size below 32") { bytes[6] = 16; }
  SECTION("no cpus") { bytes[8] = 0; }
  SECTION("a sample on a cpu beyond the header's") { bytes[32 + 16 + 12] = 7; }
  SECTION("a sample with an impossible event") { bytes[32 + 14] = LCPI_MAX_EVENTS; }
  auto t = Parse(bytes);
  REQUIRE(!t);
  CHECK(t.error().code() == Errc::kCorrupt);
}

TEST_CASE("flipping any header byte never crashes the reader") {
  std::vector<uint8_t> good = EncodeTrace(TwoCpus(), Samples());
  for (size_t i = 0; i < sizeof(TraceHeader); i++) {
    std::vector<uint8_t> bytes = good;
    bytes[i] ^= 0x80;
    auto t = Parse(bytes);
    if (t) CHECK(t->samples.size() <= 3);
  }
}

TEST_CASE("a missing file is kNotFound") {
  auto t = ReadTrace("/nonexistent/lcpi/t.trace");
  REQUIRE(!t);
  CHECK(t.error().code() == Errc::kNotFound);
}
