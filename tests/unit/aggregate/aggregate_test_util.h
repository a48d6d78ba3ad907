// aggregate_test_util.h - what the aggregate tests (aggregator_test,
// process_cap_test, pending_image_test) build their input from: the event
// list a batch names, and overflow buffers of chosen records.
#ifndef LCPI_TESTS_UNIT_AGGREGATE_AGGREGATE_TEST_UTIL_H
#define LCPI_TESTS_UNIT_AGGREGATE_AGGREGATE_TEST_UTIL_H

#include <cstdint>
#include <vector>

#include "libprofile/collect/event_spec.h"
#include "libprofile/collect/source.h"

namespace lcpi::testing {

// One event: cycles, sampled as cpu-clock (this host has no PMU).
inline std::vector<RealEvent> Cycles() {
  RealEvent e;
  e.requested.name = "cycles";
  e.used = "cpu-clock";
  e.period = 200000;
  return {e};
}

// One record of a buffer: `count` samples of `pid` at `pc`, of event 0.
struct TestRecord {
  uint32_t pid = 0;
  uint64_t pc = 0;
  uint16_t count = 1;
  bool kernel = false;
};

// A buffer of those records, sampled within [10, 20] (perf clock).
inline RecordBuffer Buffer(const std::vector<TestRecord>& records) {
  RecordBuffer b;
  b.header.t_first = 10;
  b.header.t_last = 20;
  for (const TestRecord& t : records) {
    lcpi_record r{};
    r.pc = t.pc;
    r.pid = t.pid;
    r.count = t.count;
    r.event = 0;
    r.flags = t.kernel ? LCPI_RECORD_KERNEL : 0;
    b.records.push_back(r);
  }
  return b;
}

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_AGGREGATE_AGGREGATE_TEST_UTIL_H
