// stack_rings_test.cpp - the call-stack event on its own, as both sources
// use it: opened on one CPU, it hands this thread's stacks, spun on that
// CPU, to the sink as buffers of that CPU, with the user registers and
// stack copy the unwinder needs (x86-64), and counts what it handed out.
// Needs system-wide perf events (root); skipped, with a warning, where
// they are refused.
#include <sched.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

#include "libprofile/collect/stack_rings.h"

namespace {

// Runs this thread on `cpu` for `ms` of wall time, then lets it go anywhere.
void SpinOn(int cpu, int ms) {
  cpu_set_t old, one;
  REQUIRE(sched_getaffinity(0, sizeof old, &old) == 0);
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
  sched_setaffinity(0, sizeof old, &old);
}

}  // namespace

TEST_CASE("the stack event hands this thread's stacks on its CPU to the sink") {
  if (geteuid() != 0) {
    WARN("needs root (system-wide perf events): not run");
    return;
  }
  const int cpu = sched_getcpu();
  REQUIRE(cpu >= 0);
  lcpi::StackRings rings;
  // 250/s for 0.3 s: ~75 stacks of ~9 KiB, inside the 1 MiB ring unread.
  rings.Open({cpu}, 250);
  if (rings.PollFds().empty()) {  // root without perf events (a container, seccomp)
    WARN("perf refused the stack event (its warning says why): not run");
    return;
  }
  REQUIRE(rings.Enable());
  SpinOn(cpu, 300);
  rings.Disable();

  size_t buffers = 0, stacks = 0, ours = 0, with_copy = 0;
  rings.Read([&](lcpi::RecordBuffer&& b) {
    ++buffers;
    CHECK(b.header.cpu == static_cast<uint32_t>(cpu));
    CHECK(b.records.empty());
    CHECK(b.header.t_first <= b.header.t_last);
    for (const lcpi::StackSample& s : b.stacks) {
      ++stacks;
      CHECK(!s.pcs.empty());
      if (s.pid != static_cast<uint32_t>(getpid())) continue;
      ++ours;
      if (!s.user_stack.empty() && s.user_regs.Has(lcpi::kDwarfSp)) ++with_copy;
    }
  });
  INFO(stacks << " stacks, " << ours << " of this thread's, " << with_copy << " with a copy");
  CHECK(buffers == 1);
  CHECK(ours > 0);
#if defined(__x86_64__)
  CHECK(with_copy > 0);
#endif
  lcpi::SourceStats st;
  rings.FillStats(&st);
  CHECK(st.stacks == stacks);
}

TEST_CASE("no CPU opened, no descriptor, nothing read") {
  lcpi::StackRings rings;
  rings.Open({}, 100);
  CHECK(rings.PollFds().empty());
  CHECK(rings.Enable());
  size_t calls = 0;
  rings.Read([&](lcpi::RecordBuffer&&) { ++calls; });
  CHECK(calls == 0);
}
