// pprof_test.cpp - the profile.proto encoder (pprof_encode.h), decoded here
// by hand: varints, keys (field number << 3 | wire type), length-delimited
// sub-messages and packed integers, the string table starting with "", and
// the gzip framing. `go tool pprof` reading real profiles is the interop
// test (tests/integration/pprof.cmake).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/report/pprof_encode.h"

using namespace lcpi::report::pprof;

namespace {

struct Field {
  int number = 0;
  int wire_type = 0;
  uint64_t varint = 0;  // wire type 0
  std::string bytes;    // wire type 2
};

uint64_t ReadVarint(const std::string& in, size_t* pos) {
  uint64_t v = 0;
  for (int shift = 0; *pos < in.size(); shift += 7) {
    auto b = static_cast<uint8_t>(in[(*pos)++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  FAIL("truncated varint");
  return 0;
}

std::vector<Field> Decode(const std::string& in) {
  std::vector<Field> out;
  size_t pos = 0;
  while (pos < in.size()) {
    uint64_t key = ReadVarint(in, &pos);
    Field f;
    f.number = static_cast<int>(key >> 3);
    f.wire_type = static_cast<int>(key & 7);
    if (f.wire_type == 0) {
      f.varint = ReadVarint(in, &pos);
    } else {
      REQUIRE(f.wire_type == 2);
      uint64_t len = ReadVarint(in, &pos);
      REQUIRE(pos + len <= in.size());
      f.bytes = in.substr(pos, len);
      pos += len;
    }
    out.push_back(f);
  }
  return out;
}

std::vector<Field> Fields(const std::vector<Field>& all, int number) {
  std::vector<Field> out;
  for (const Field& f : all) {
    if (f.number == number) out.push_back(f);
  }
  return out;
}

uint64_t Varint(const std::vector<Field>& msg, int number) {
  auto f = Fields(msg, number);
  REQUIRE(f.size() <= 1);
  if (f.empty()) return 0;  // proto3: absent is zero
  REQUIRE(f[0].wire_type == 0);
  return f[0].varint;
}

std::vector<uint64_t> Packed(const std::string& bytes) {
  std::vector<uint64_t> out;
  size_t pos = 0;
  while (pos < bytes.size()) out.push_back(ReadVarint(bytes, &pos));
  return out;
}

Profile Tiny() {
  Profile p;
  p.sample_types = {{"cycles_samples", "count"}, {"cycles", "nanoseconds"}};
  p.mappings.push_back({1, 0, 0x1235, 0, "/bin/prog", "abc123", true, false, false});
  p.functions.push_back({1, "hot_loop", "hot_loop", "prog.c", 3});
  p.locations.push_back({1, 1, 0x1234, {{1, 6}}});
  p.samples.push_back({{1}, {3, 300}});
  p.period_type = {"cycles", "nanoseconds"};
  p.period = 100;
  p.time_nanos = 1700000000LL * 1000000000LL;
  p.comments = {"lcpi"};
  p.default_sample_type = "cycles_samples";
  return p;
}

}  // namespace

TEST_CASE("pprof: the encoding decodes to the profile", "[pprof]") {
  const std::string bytes = EncodePprof(Tiny());
  auto top = Decode(bytes);

  // The string table (field 6): "" first, then each string once.
  std::vector<std::string> strings;
  for (const Field& f : Fields(top, 6)) strings.push_back(f.bytes);
  REQUIRE(!strings.empty());
  CHECK(strings[0].empty());
  auto str = [&](uint64_t i) -> std::string {
    REQUIRE(i < strings.size());
    return strings[i];
  };
  CHECK(std::count(strings.begin(), strings.end(), "cycles") == 1);

  // sample_type (1): ValueType{type 1, unit 2}
  auto types = Fields(top, 1);
  REQUIRE(types.size() == 2);
  auto t0 = Decode(types[0].bytes);
  CHECK(str(Varint(t0, 1)) == "cycles_samples");
  CHECK(str(Varint(t0, 2)) == "count");
  CHECK(str(Varint(Decode(types[1].bytes), 2)) == "nanoseconds");

  // sample (2): packed location ids (1) and values (2); 300 is 0xac 0x02.
  auto samples = Fields(top, 2);
  REQUIRE(samples.size() == 1);
  auto s = Decode(samples[0].bytes);
  REQUIRE(Fields(s, 1).size() == 1);
  CHECK(Packed(Fields(s, 1)[0].bytes) == std::vector<uint64_t>{1});
  CHECK(Fields(s, 2)[0].bytes == std::string("\x03\xac\x02"));

  // mapping (3)
  auto mappings = Fields(top, 3);
  REQUIRE(mappings.size() == 1);
  auto m = Decode(mappings[0].bytes);
  CHECK(Varint(m, 1) == 1);
  CHECK(Varint(m, 2) == 0);
  CHECK(Varint(m, 3) == 0x1235);
  CHECK(str(Varint(m, 5)) == "/bin/prog");
  CHECK(str(Varint(m, 6)) == "abc123");
  CHECK(Varint(m, 7) == 1);  // has_functions
  CHECK(Varint(m, 8) == 0);

  // location (4) with one line (4: function_id 1, line 2)
  auto locations = Fields(top, 4);
  REQUIRE(locations.size() == 1);
  auto l = Decode(locations[0].bytes);
  CHECK(Varint(l, 1) == 1);
  CHECK(Varint(l, 2) == 1);
  CHECK(Varint(l, 3) == 0x1234);
  REQUIRE(Fields(l, 4).size() == 1);
  auto line = Decode(Fields(l, 4)[0].bytes);
  CHECK(Varint(line, 1) == 1);
  CHECK(Varint(line, 2) == 6);

  // function (5)
  auto functions = Fields(top, 5);
  REQUIRE(functions.size() == 1);
  auto fn = Decode(functions[0].bytes);
  CHECK(Varint(fn, 1) == 1);
  CHECK(str(Varint(fn, 2)) == "hot_loop");
  CHECK(str(Varint(fn, 3)) == "hot_loop");
  CHECK(str(Varint(fn, 4)) == "prog.c");
  CHECK(Varint(fn, 5) == 3);

  // time_nanos (9), period_type (11), period (12), comment (13, packed), default (14)
  CHECK(Varint(top, 9) == 1700000000ULL * 1000000000ULL);
  CHECK(Varint(top, 10) == 0);
  REQUIRE(Fields(top, 11).size() == 1);
  CHECK(str(Varint(Decode(Fields(top, 11)[0].bytes), 1)) == "cycles");
  CHECK(Varint(top, 12) == 100);
  REQUIRE(Fields(top, 13).size() == 1);
  auto comments = Packed(Fields(top, 13)[0].bytes);
  REQUIRE(comments.size() == 1);
  CHECK(str(comments[0]) == "lcpi");
  CHECK(str(Varint(top, 14)) == "cycles_samples");
}

TEST_CASE("pprof: an empty profile is just the string table's \"\"", "[pprof]") {
  // Key 6 << 3 | 2 = 0x32, length 0.
  CHECK(EncodePprof(Profile{}) == std::string("\x32\x00", 2));
}

TEST_CASE("pprof: gzip framing", "[pprof]") {
  const std::string raw = EncodePprof(Tiny());
  auto gz = Gzip(raw);
  REQUIRE(gz);
  REQUIRE(gz->size() > 18);
  // RFC 1952: magic 1f 8b, method 8 (deflate); the trailer ends with the
  // input's size mod 2^32, little-endian.
  CHECK(static_cast<uint8_t>((*gz)[0]) == 0x1f);
  CHECK(static_cast<uint8_t>((*gz)[1]) == 0x8b);
  CHECK(static_cast<uint8_t>((*gz)[2]) == 8);
  uint32_t isize = 0;
  for (int i = 0; i < 4; ++i) {
    isize |= static_cast<uint32_t>(static_cast<uint8_t>((*gz)[gz->size() - 4 + i])) << (8 * i);
  }
  CHECK(isize == raw.size());
}
