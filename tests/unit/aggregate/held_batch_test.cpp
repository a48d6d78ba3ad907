// held_batch_test.cpp - dropping a held batch's counts keeps its accounting:
// the samples it counted move from attributed/unknown to pending_dropped
// (its call stacks' to pending_dropped_stacks; a refused batch's to refused
// and refused_stacks), its other statistics and event times stay, and a
// newer batch folded into it adds its statistics and event times.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "libprofile/aggregate/held_batch.h"

namespace {

using namespace lcpi;

MergeBatch Batch(uint64_t a, uint64_t b, int64_t attributed, int64_t unknown) {
  MergeBatch m;
  m.epoch = 3;
  m.images.push_back({"build-id:aa", "/bin/prog", ImageKind::kUser});
  m.events.push_back({"cycles", "cpu-clock", 100000, 1000, 1000, 0});
  m.counts.push_back({0, 0, 16, a});
  m.counts.push_back({0, 0, 32, b});
  m.processes.push_back({7, "prog", 0, 0, a + b});
  m.symbols.push_back({0, 16, 16, "hot"});
  m.stacks.push_back({0, {{0, 16}, {0, 32}}, 7});
  m.stats = {{"samples", attributed + unknown + 5}, {"lost", 5}};
  if (attributed) m.stats.emplace_back("attributed", attributed);
  if (unknown) m.stats.emplace_back("unknown", unknown);
  return m;
}

std::map<std::string, int64_t> Stats(const MergeBatch& b) {
  std::map<std::string, int64_t> out;
  for (const auto& [name, value] : b.stats) out[name] += value;
  return out;
}

}  // namespace

TEST_CASE("a dropped batch keeps its accounting, not its counts", "[aggregate]") {
  MergeBatch held = Batch(600, 400, 900, 100);
  CHECK(DropCounts(held) == 1000);
  CHECK(held.counts.empty());
  CHECK(held.processes.empty());
  CHECK(held.images.empty());  // quick to write again: nothing but statistics
  CHECK(held.symbols.empty());
  CHECK(held.stacks.empty());  // they name the images by their place in the batch
  CHECK(held.events.size() == 1);
  auto s = Stats(held);
  CHECK(s == std::map<std::string, int64_t>{{"samples", 1005},
                                            {"lost", 5},
                                            {"pending_dropped", 1000},
                                            {"pending_dropped_stacks", 7}});
  CHECK(DropCounts(held) == 0);  // nothing more to drop
  CHECK(Stats(held) == s);
}

TEST_CASE("a batch refused for its content is dropped as refused, its statistics kept",
          "[aggregate]") {
  MergeBatch refused = Batch(600, 400, 900, 100);
  CHECK(HoldsRows(refused));
  CHECK(DropCounts(refused, kDroppedAsRefused) == 1000);
  CHECK_FALSE(HoldsRows(refused));  // written again alone, not refused again
  CHECK(Stats(refused) ==
        std::map<std::string, int64_t>{
            {"samples", 1005}, {"lost", 5}, {"refused", 1000}, {"refused_stacks", 7}});
}

TEST_CASE("the samples of a batch's counts are summed without wrapping", "[aggregate]") {
  MergeBatch held = Batch(UINT64_MAX - 1, 2, 0, 0);
  CHECK(DropCounts(held) == UINT64_MAX);
}

TEST_CASE("a newer batch dropped into the held one adds its statistics and times", "[aggregate]") {
  MergeBatch held = Batch(600, 400, 1000, 0);
  DropCounts(held);
  MergeBatch newer = Batch(30, 20, 40, 10);
  CHECK(DropCounts(newer) == 50);
  FoldInto(held, newer);
  CHECK(held.counts.empty());
  CHECK(Stats(held) == std::map<std::string, int64_t>{{"samples", 1005 + 55},
                                                      {"lost", 10},
                                                      {"pending_dropped", 1050},
                                                      {"pending_dropped_stacks", 14}});
  CHECK(held.events[0].time_enabled == 2000);
  CHECK(held.events[0].time_running == 2000);
}

TEST_CASE("a newer batch dropped into the held one adds its cost and keeps lcpid's pid",
          "[aggregate]") {
  MergeBatch held, newer;
  newer.cost = WindowCost{100, 1'000, 2'000, 300, 400, 5, 60, 7};
  newer.observer_pid = 42;
  FoldInto(held, newer);  // the held batch measured nothing: the newer's cost
  REQUIRE(held.cost.has_value());
  CHECK(held.cost->samples == 100);
  CHECK(held.observer_pid == 42);
  FoldInto(held, newer);  // then the sums add
  CHECK(held.cost->samples == 200);
  CHECK(held.cost->cpu_ns == 2'000);
  CHECK(held.cost->interrupt_ns == 4'000);
  CHECK(held.cost->interrupt_ci95_ns == 600);
  CHECK(held.cost->daemon_ns == 800);
  CHECK(held.cost->module_samples == 10);
  CHECK(held.cost->module_handler_ns == 120);
  CHECK(held.cost->stack_samples == 14);
}
