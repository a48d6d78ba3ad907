// kmod_buffer_test.cpp - ParseKmodBuffer, the check KmodSource applies to
// every buffer read from /dev/lcpi: good buffers (empty first), truncated
// ones, lying counts and every single flipped byte of a header.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <vector>

#include "lcpi_hashtable.h"
#include "libprofile/collect/kmod_source.h"

namespace {

constexpr uint32_t kCpus = 4;

std::vector<uint8_t> MakeBuffer(uint32_t nr_records, uint32_t cpu = 1) {
  lcpi_buffer_header h{};
  h.magic = LCPI_BUFFER_MAGIC;
  h.version = LCPI_ABI_VERSION;
  h.header_size = sizeof(h);
  h.cpu = cpu;
  h.nr_records = nr_records;
  h.seq = 7;
  h.t_first = 1000;
  h.t_last = 2000;
  h.dropped = 3;
  std::vector<uint8_t> out(sizeof(h) + nr_records * sizeof(lcpi_record));
  std::memcpy(out.data(), &h, sizeof(h));
  for (uint32_t i = 0; i < nr_records; i++) {
    lcpi_record r{};
    r.pc = 0xffffffff81000000ull + i * 4;
    r.pid = 100 + i;
    r.count = static_cast<uint16_t>(1 + i);
    r.event = static_cast<uint8_t>(i % 2);
    r.flags = i % 3 == 0 ? LCPI_RECORD_KERNEL : 0;
    std::memcpy(out.data() + sizeof(h) + i * sizeof(r), &r, sizeof(r));
  }
  return out;
}

lcpi::Errc ErrorOf(const std::vector<uint8_t>& b, size_t len, uint32_t cpus = kCpus) {
  lcpi::Expected<lcpi::RecordBuffer> r = lcpi::ParseKmodBuffer(b.data(), len, cpus);
  REQUIRE_FALSE(r.has_value());
  return r.error().code();
}

}  // namespace

TEST_CASE("an empty buffer parses") {
  std::vector<uint8_t> b = MakeBuffer(0);
  lcpi::Expected<lcpi::RecordBuffer> r = lcpi::ParseKmodBuffer(b.data(), b.size(), kCpus);
  REQUIRE(r.has_value());
  CHECK(r->records.empty());
  CHECK(r->header.cpu == 1);
}

TEST_CASE("a good buffer round-trips every field") {
  std::vector<uint8_t> b = MakeBuffer(5, 3);
  lcpi::Expected<lcpi::RecordBuffer> r = lcpi::ParseKmodBuffer(b.data(), b.size(), kCpus);
  REQUIRE(r.has_value());
  CHECK(r->header.seq == 7);
  CHECK(r->header.t_first == 1000);
  CHECK(r->header.t_last == 2000);
  CHECK(r->header.dropped == 3);
  CHECK(r->header.cpu == 3);
  REQUIRE(r->records.size() == 5);
  CHECK(r->records[4].pc == 0xffffffff81000000ull + 16);
  CHECK(r->records[4].pid == 104);
  CHECK(r->records[4].count == 5);
  CHECK(r->records[4].event == 0);
  CHECK(r->records[3].flags == LCPI_RECORD_KERNEL);
}

TEST_CASE("a full-size buffer of the module's geometry parses") {
  std::vector<uint8_t> b = MakeBuffer(LCPI_HT_DEFAULT_BUFFER_RECORDS);
  CHECK(lcpi::ParseKmodBuffer(b.data(), b.size(), kCpus).has_value());
}

TEST_CASE("truncated buffers are corrupt") {
  std::vector<uint8_t> b = MakeBuffer(3);
  CHECK(ErrorOf(b, 0) == lcpi::Errc::kCorrupt);
  CHECK(ErrorOf(b, sizeof(lcpi_buffer_header) - 1) == lcpi::Errc::kCorrupt);
  CHECK(ErrorOf(b, b.size() - 1) == lcpi::Errc::kCorrupt);
  CHECK(ErrorOf(b, b.size() - sizeof(lcpi_record)) == lcpi::Errc::kCorrupt);
  CHECK(lcpi::ParseKmodBuffer(nullptr, 0, kCpus).error().code() == lcpi::Errc::kCorrupt);
}

TEST_CASE("a count that lies about the length is corrupt") {
  std::vector<uint8_t> b = MakeBuffer(3);
  lcpi_buffer_header h;
  for (uint32_t lie : {0u, 2u, 4u, 0x10000000u, 0xffffffffu}) {
    std::memcpy(&h, b.data(), sizeof(h));
    h.nr_records = lie;
    std::memcpy(b.data(), &h, sizeof(h));
    CHECK(ErrorOf(b, b.size()) == lcpi::Errc::kCorrupt);
  }
}

TEST_CASE("header fields out of range are corrupt") {
  std::vector<uint8_t> good = MakeBuffer(2);
  auto with = [&](auto mutate) {
    std::vector<uint8_t> b = good;
    lcpi_buffer_header h;
    std::memcpy(&h, b.data(), sizeof(h));
    mutate(h);
    std::memcpy(b.data(), &h, sizeof(h));
    return ErrorOf(b, b.size());
  };
  CHECK(with([](lcpi_buffer_header& h) { h.magic ^= 1; }) == lcpi::Errc::kCorrupt);
  CHECK(with([](lcpi_buffer_header& h) { h.version = LCPI_ABI_VERSION + 1; }) ==
        lcpi::Errc::kCorrupt);
  CHECK(with([](lcpi_buffer_header& h) { h.header_size = 40; }) == lcpi::Errc::kCorrupt);
  CHECK(with([](lcpi_buffer_header& h) { h.cpu = kCpus; }) == lcpi::Errc::kCorrupt);
  CHECK(with([](lcpi_buffer_header& h) { h.t_first = h.t_last + 1; }) == lcpi::Errc::kCorrupt);
  std::vector<uint8_t> b = MakeBuffer(2, 0);
  CHECK(ErrorOf(b, b.size(), 0) == lcpi::Errc::kCorrupt);  // no CPUs at all
}

TEST_CASE("bad records are corrupt") {
  auto with = [](auto mutate) {
    std::vector<uint8_t> b = MakeBuffer(2);
    lcpi_record r;
    uint8_t* p = b.data() + sizeof(lcpi_buffer_header) + sizeof(lcpi_record);
    std::memcpy(&r, p, sizeof(r));
    mutate(r);
    std::memcpy(p, &r, sizeof(r));
    return ErrorOf(b, b.size());
  };
  CHECK(with([](lcpi_record& r) { r.count = 0; }) == lcpi::Errc::kCorrupt);
  CHECK(with([](lcpi_record& r) { r.event = LCPI_MAX_EVENTS; }) == lcpi::Errc::kCorrupt);
  CHECK(with([](lcpi_record& r) { r.flags = 0x80; }) == lcpi::Errc::kCorrupt);
}

TEST_CASE("every flipped header byte is caught or harmless") {
  const std::vector<uint8_t> good = MakeBuffer(3);
  // bytes of magic, version, header_size, cpu and nr_records must be caught
  const size_t checked_end = offsetof(lcpi_buffer_header, seq);
  for (size_t i = 0; i < sizeof(lcpi_buffer_header); i++) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::vector<uint8_t> b = good;
      b[i] ^= mask;
      lcpi::Expected<lcpi::RecordBuffer> r = lcpi::ParseKmodBuffer(b.data(), b.size(), kCpus);
      if (i < checked_end) {
        INFO("byte " << i << " mask " << int(mask));
        // cpu 1 ^ 0x01 = cpu 0 is still a valid CPU
        if (!(i == offsetof(lcpi_buffer_header, cpu) && mask == 0x01)) CHECK_FALSE(r.has_value());
      }
      if (!r.has_value())
        CHECK(r.error().code() == lcpi::Errc::kCorrupt);
      else
        CHECK(r->records.size() == 3);
    }
  }
}
