// attr_test.cpp - the rules by which lcpi.ko turns a requested event into
// a perf_event_attr and asks again when the PMU refuses
// (kmod/include/lcpi_attr.h), where there is no PMU: one interrupt per
// sample (no AUTO_RELOAD, LARGE_PEBS or sched callback on Intel PEBS),
// precise_ip only for hardware cycles and instructions, exclude_guest,
// the period floors, and the lowering order (exclude_guest dropped once
// after EINVAL at a precise level, precise_ip on any error before the
// cpu-clock fallback, which only cycles take). The drivers'
// choices are modelled from the kernel lines docs/kmod.md cites.
#include <catch2/catch.hpp>

#include <cerrno>
#include <functional>
#include <utility>
#include <vector>

#include "lcpi_attr.h"

namespace {

lcpi_event_config Event(uint32_t type, uint64_t config, uint64_t period = 1000000,
                        uint32_t flags = 0) {
  lcpi_event_config ev{};
  ev.type = type;
  ev.config = config;
  ev.period = period;
  ev.flags = flags;
  return ev;
}

std::vector<lcpi_event_config> AllKinds() {
  return {
      Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
      Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
      Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES),
      Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES),
      Event(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                                    (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)),
      Event(PERF_TYPE_RAW, 0x01c2),
      Event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 100000),
      Event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 100000),
  };
}

// intel_pmu_hw_config() (6.1 arch/x86/events/intel/core.c:3962-3968, 6.12
// :4083-4089): with precise_ip set and neither freq nor wakeup_events
// without watermark, the event gets AUTO_RELOAD, and with sample_type 0
// LARGE_PEBS and PERF_ATTACH_SCHED_CB.
bool IntelAutoReload(const perf_event_attr& a) {
  return a.precise_ip && !(a.freq || (a.wakeup_events && !a.watermark));
}

// The creation loop of lcpi_cpu_create() against a modelled driver: asks
// at lcpi_attr_precise_first(), then as lcpi_attr_retry() says. Returns
// the error it gives up with (0: created) and leaves the event and level.
int Create(lcpi_event_config* ev, uint8_t* precise,
           const std::function<int(const perf_event_attr&)>& driver) {
  uint8_t level = 0;
  if (!precise) precise = &level;
  *precise = lcpi_attr_precise_first(ev);
  uint8_t guest = 0;
  for (int tries = 0; tries < 16; ++tries) {
    perf_event_attr attr;
    lcpi_attr_build(&attr, ev, *precise, guest);
    int err = driver(attr);
    if (!err) return 0;
    if (lcpi_attr_retry(ev, precise, &guest, -err) == LCPI_ATTR_GIVE_UP) return err;
  }
  FAIL("the lowering does not end");
  return -1;
}

// AMD with IBS (6.1 and 6.12 arch/x86/events/amd/core.c amd_pmu_hw_config,
// amd/ibs.c:236-248 forward_event_to_ibs, core_pmu_ibs_config): precise
// above 2 is EOPNOTSUPP; at 1-2 cycles (or raw 0x76, 0xc1) go to the IBS op
// PMU, everything else is ENOENT; at 0 the core PMU takes every event. The
// IBS PMUs declare PERF_PMU_CAP_NO_EXCLUDE (6.1 amd/ibs.c:641,665), so
// perf_try_init_event() refuses exclude_guest with EINVAL (6.1
// kernel/events/core.c:11640; mainline perf_ibs_init() checks it itself).
int AmdIbs(const perf_event_attr& a) {
  if (a.type == PERF_TYPE_SOFTWARE) return 0;
  if (!a.precise_ip) return 0;
  if (a.precise_ip > 2) return EOPNOTSUPP;
  if (a.type == PERF_TYPE_HARDWARE && a.config == PERF_COUNT_HW_CPU_CYCLES)
    return a.exclude_guest ? EINVAL : 0;
  return ENOENT;
}

// A PMU-less machine (the x86 guests): no PMU knows a hardware event.
int NoPmu(const perf_event_attr& a) { return a.type == PERF_TYPE_SOFTWARE ? 0 : ENOENT; }

}  // namespace

TEST_CASE("every event gets one overflow interrupt per sample: no AUTO_RELOAD or LARGE_PEBS") {
  for (const lcpi_event_config& ev : AllKinds())
    for (uint8_t precise = 0; precise <= LCPI_PRECISE_MAX; ++precise) {
      perf_event_attr a;
      lcpi_attr_build(&a, &ev, precise, 0);
      INFO("type " << ev.type << " config " << ev.config << " precise " << int(precise));
      CHECK(a.freq == 0);
      CHECK(a.sample_period == ev.period);
      CHECK(a.wakeup_events == 1);
      CHECK(a.watermark == 0);
      CHECK_FALSE(IntelAutoReload(a));
      CHECK(a.precise_ip == precise);
      CHECK(a.size == sizeof(a));
      CHECK(a.type == ev.type);
      CHECK(a.config == ev.config);
    }
}

TEST_CASE("every event excludes the guest, and nothing else") {
  for (const lcpi_event_config& ev : AllKinds()) {
    perf_event_attr a;
    lcpi_attr_build(&a, &ev, lcpi_attr_precise_first(&ev), 0);
    CHECK(a.exclude_guest == 1);
    CHECK(a.exclude_host == 0);
    CHECK(a.exclude_user == 0);
    CHECK(a.exclude_kernel == 0);
    CHECK(a.exclude_idle == 0);
    CHECK(a.pinned == 0);
  }
}

TEST_CASE("precise_ip is asked only for hardware cycles and instructions") {
  for (const lcpi_event_config& ev : AllKinds()) {
    bool want = ev.type == PERF_TYPE_HARDWARE &&
                (ev.config == PERF_COUNT_HW_CPU_CYCLES || ev.config == PERF_COUNT_HW_INSTRUCTIONS);
    INFO("type " << ev.type << " config " << ev.config);
    CHECK(lcpi_attr_precise_first(&ev) == (want ? LCPI_PRECISE_MAX : 0));
  }
}

TEST_CASE("precise_ip is lowered one level on any creation error, before any fallback") {
  for (int err : {ENOENT, EINVAL, EOPNOTSUPP, EBUSY, ENOMEM, EACCES}) {
    INFO("errno " << err);
    lcpi_event_config ev =
        Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1000000, LCPI_EVENT_FALLBACK_CPU_CLOCK);
    uint8_t precise = 3;
    uint8_t guest = 1;  // EINVAL's retry with guest mode counted already asked
    CHECK(lcpi_attr_retry(&ev, &precise, &guest, -err) == LCPI_ATTR_LOWERED);
    CHECK(precise == 2);
    CHECK(guest == 0);                     // excluded again at the lower level
    CHECK(ev.type == PERF_TYPE_HARDWARE);  // still cycles
  }
}

TEST_CASE("AMD IBS: cycles go to IBS at precise 2, every other PMU event to the core PMU at 0") {
  for (const lcpi_event_config& kind : AllKinds()) {
    lcpi_event_config ev = kind;
    ev.flags = LCPI_EVENT_FALLBACK_CPU_CLOCK;
    uint8_t precise = 0;
    INFO("type " << kind.type << " config " << kind.config);
    CHECK(Create(&ev, &precise, AmdIbs) == 0);
    CHECK(ev.type == kind.type);  // never the cpu-clock fallback
    CHECK(ev.config == kind.config);
    bool cycles = kind.type == PERF_TYPE_HARDWARE && kind.config == PERF_COUNT_HW_CPU_CYCLES;
    CHECK(precise == (cycles ? 2 : 0));
  }
}

TEST_CASE("AMD IBS: cycles reach IBS at precise 2 with exclude_guest cleared, only there") {
  for (const lcpi_event_config& kind : AllKinds()) {
    lcpi_event_config ev = kind;
    ev.flags = LCPI_EVENT_FALLBACK_CPU_CLOCK;
    uint8_t precise = 0;
    perf_event_attr got{};
    INFO("type " << kind.type << " config " << kind.config);
    CHECK(Create(&ev, &precise, [&got](const perf_event_attr& a) {
            int err = AmdIbs(a);
            if (!err) got = a;
            return err;
          }) == 0);
    bool cycles = kind.type == PERF_TYPE_HARDWARE && kind.config == PERF_COUNT_HW_CPU_CYCLES;
    CHECK(got.precise_ip == (cycles ? 2 : 0));
    CHECK(got.exclude_guest == (cycles ? 0 : 1));
  }
}

TEST_CASE("exclude_guest is cleared once, after EINVAL at precise above 0, before lowering") {
  lcpi_event_config ev = Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
  std::vector<std::pair<int, int>> asked;  // precise_ip, exclude_guest
  CHECK(Create(&ev, nullptr, [&asked](const perf_event_attr& a) {
          asked.emplace_back(a.precise_ip, a.exclude_guest);
          return a.precise_ip ? EINVAL : 0;
        }) == 0);
  std::vector<std::pair<int, int>> want = {{3, 1}, {3, 0}, {2, 1}, {2, 0}, {1, 1}, {1, 0}, {0, 1}};
  CHECK(asked == want);
  SECTION("any other error lowers precise with exclude_guest kept") {
    asked.clear();
    CHECK(Create(&ev, nullptr, [&asked](const perf_event_attr& a) {
            asked.emplace_back(a.precise_ip, a.exclude_guest);
            return a.precise_ip ? EOPNOTSUPP : 0;
          }) == 0);
    want = {{3, 1}, {2, 1}, {1, 1}, {0, 1}};
    CHECK(asked == want);
  }
}

TEST_CASE(
    "the cpu-clock fallback: only cycles, only once precise is 0, only when the PMU lacks it") {
  SECTION("cycles on a PMU-less machine sample cpu-clock at the same rate, precise 0") {
    lcpi_event_config ev =
        Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1000000, LCPI_EVENT_FALLBACK_CPU_CLOCK);
    uint8_t precise = 0;
    CHECK(Create(&ev, &precise, NoPmu) == 0);
    CHECK(ev.type == PERF_TYPE_SOFTWARE);
    CHECK(ev.config == PERF_COUNT_SW_CPU_CLOCK);
    CHECK(ev.period == 1000000 / LCPI_ASSUMED_CYCLES_PER_NS);
    CHECK(precise == 0);
  }
  SECTION("a fallen-back period never goes below the clock's floor") {
    lcpi_event_config ev = Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
                                 LCPI_MIN_PERIOD_EVENTS, LCPI_EVENT_FALLBACK_CPU_CLOCK);
    uint8_t precise = 0;
    uint8_t guest = 0;
    CHECK(lcpi_attr_retry(&ev, &precise, &guest, -ENOENT) == LCPI_ATTR_FELL_BACK);
    CHECK(ev.period == LCPI_MIN_PERIOD_CLOCK_NS);
    CHECK(lcpi_attr_check(&ev) == 0);
  }
  SECTION("without the flag, or for another event, the error is reported") {
    lcpi_event_config cycles = Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    uint8_t precise = 0;
    CHECK(Create(&cycles, &precise, NoPmu) == ENOENT);
    for (const lcpi_event_config& kind : AllKinds()) {
      if (kind.type == PERF_TYPE_SOFTWARE ||
          (kind.type == PERF_TYPE_HARDWARE && kind.config == PERF_COUNT_HW_CPU_CYCLES))
        continue;
      lcpi_event_config ev = kind;
      ev.flags = LCPI_EVENT_FALLBACK_CPU_CLOCK;
      INFO("type " << kind.type << " config " << kind.config);
      CHECK(Create(&ev, &precise, NoPmu) == ENOENT);
      CHECK(ev.type == kind.type);
    }
  }
  SECTION("an error that is not a missing event is reported, at precise 0") {
    for (int err : {EBUSY, ENOMEM, EINVAL, EAGAIN}) {
      lcpi_event_config ev = Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1000000,
                                   LCPI_EVENT_FALLBACK_CPU_CLOCK);
      uint8_t precise = 0;
      INFO("errno " << err);
      CHECK(Create(&ev, &precise, [err](const perf_event_attr&) { return err; }) == err);
      CHECK(ev.type == PERF_TYPE_HARDWARE);
    }
  }
}

TEST_CASE("the period floors: a clock from 10 us, a PMU event from 10,000 events") {
  lcpi_event_config clock =
      Event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, LCPI_MIN_PERIOD_CLOCK_NS);
  CHECK(lcpi_attr_check(&clock) == 0);
  clock.period = LCPI_MIN_PERIOD_CLOCK_NS - 1;
  CHECK(lcpi_attr_check(&clock) == -EINVAL);
  lcpi_event_config cycles =
      Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, LCPI_MIN_PERIOD_EVENTS);
  CHECK(lcpi_attr_check(&cycles) == 0);
  cycles.period = LCPI_MIN_PERIOD_EVENTS - 1;
  CHECK(lcpi_attr_check(&cycles) == -EINVAL);
  cycles.period = 1ULL << 62;
  CHECK(lcpi_attr_check(&cycles) == -EINVAL);
  // other software events, unknown types, flags and the reserved field
  lcpi_event_config faults = Event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
  CHECK(lcpi_attr_check(&faults) == -EINVAL);
  lcpi_event_config tracepoint = Event(PERF_TYPE_TRACEPOINT, 1);
  CHECK(lcpi_attr_check(&tracepoint) == -EINVAL);
  lcpi_event_config bad = Event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
  bad.flags = LCPI_EVENT_INFO_EXCLUDE_GUEST;
  CHECK(lcpi_attr_check(&bad) == -EINVAL);
  bad.flags = 0;
  bad.jitter_pct = 51;
  CHECK(lcpi_attr_check(&bad) == -EINVAL);
  bad.jitter_pct = 0;
  bad.reserved = 1;
  CHECK(lcpi_attr_check(&bad) == -EINVAL);
}
