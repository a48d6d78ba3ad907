// perf_ring_test.cpp - the walk over a perf ring's records (WalkRingRecords,
// what PerfRing::Read does on the mmap'ed ring): records are framed by their
// headers across the ring's end, and a record of impossible size ends the
// walk, skips the rest and is counted, so that lcpid reports it
// (bad_records) instead of misreading the bytes after it.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "libprofile/collect/perf_ring.h"

namespace {

using lcpi::WalkRingRecords;

constexpr uint64_t kRing = 64;  // bytes: small, so records wrap

// Writes a record of `size` bytes (header included) of type `type` at ring
// position `pos`, its body bytes set to `fill`.
void Put(std::vector<uint8_t>& ring, uint64_t pos, uint16_t size, uint32_t type, uint8_t fill) {
  perf_event_header h{};
  h.type = type;
  h.size = size;
  std::vector<uint8_t> rec(size < sizeof(h) ? sizeof(h) : size, fill);
  std::memcpy(rec.data(), &h, sizeof(h));
  for (size_t i = 0; i < rec.size(); i++) ring[(pos + i) % kRing] = rec[i];
}

struct Seen {
  std::vector<uint32_t> types;
  std::vector<uint8_t> first_body_byte;
};

}  // namespace

TEST_CASE("records are framed across the end of the ring") {
  std::vector<uint8_t> ring(kRing, 0);
  uint64_t tail = 40;  // the second record wraps
  Put(ring, 40, 16, 9, 0xa1);
  Put(ring, 56, 24, 10, 0xb2);
  std::vector<uint8_t> scratch;
  uint64_t bad = 0;
  Seen s;
  size_t n = WalkRingRecords(ring.data(), kRing, 80, &tail, scratch, &bad,
                             [&](const perf_event_header& h, const uint8_t* body) {
                               s.types.push_back(h.type);
                               s.first_body_byte.push_back(body[0]);
                             });
  CHECK(n == 2);
  CHECK(tail == 80);
  CHECK(bad == 0);
  CHECK(s.types == std::vector<uint32_t>{9, 10});
  CHECK(s.first_body_byte == std::vector<uint8_t>{0xa1, 0xb2});
}

TEST_CASE("a record of impossible size ends the read, skips the rest, and is counted") {
  std::vector<uint8_t> scratch;
  SECTION("size 0") {
    std::vector<uint8_t> ring(kRing, 0);
    Put(ring, 0, 16, 9, 0xa1);
    Put(ring, 16, 0, 9, 0);  // then a header claiming no size
    Put(ring, 24, 16, 9, 0xc3);
    uint64_t tail = 0, bad = 0;
    size_t n = WalkRingRecords(ring.data(), kRing, 40, &tail, scratch, &bad,
                               [](const perf_event_header&, const uint8_t*) {});
    CHECK(n == 1);
    CHECK(bad == 1);
    CHECK(tail == 40);  // the rest cannot be framed: skipped
  }
  SECTION("larger than what is left") {
    std::vector<uint8_t> ring(kRing, 0);
    Put(ring, 0, 48, 9, 0xa1);
    uint64_t tail = 0, bad = 0;
    CHECK(WalkRingRecords(ring.data(), kRing, 32, &tail, scratch, &bad,
                          [](const perf_event_header&, const uint8_t*) {}) == 0);
    CHECK(bad == 1);
    CHECK(tail == 32);
  }
  SECTION("less than a header left") {
    std::vector<uint8_t> ring(kRing, 0);
    Put(ring, 0, 16, 9, 0xa1);
    uint64_t tail = 0, bad = 0;
    CHECK(WalkRingRecords(ring.data(), kRing, 20, &tail, scratch, &bad,
                          [](const perf_event_header&, const uint8_t*) {}) == 1);
    CHECK(bad == 1);
    CHECK(tail == 20);
  }
}
