// fleet_window_facts_test.cpp - a window's statistics and cost as the fleet
// ships them, and their sums back into a fleet header.
#include "libprofile/report/fleet_window_facts.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

using lcpi::WindowCost;
using lcpi::report::FactNamesRead;
using lcpi::report::FactSumsInto;
using lcpi::report::Header;
using lcpi::report::WindowFact;
using lcpi::report::WindowFacts;

namespace {

// Sums of facts as the fleet header's query makes them: per name, of the
// values above 0.
std::map<std::string, double> Sums(const std::vector<std::vector<WindowFact>>& windows) {
  std::map<std::string, double> out;
  for (const auto& facts : windows)
    for (const WindowFact& f : facts) out[f.name] += f.value > 0 ? static_cast<double>(f.value) : 0;
  return out;
}

}  // namespace

TEST_CASE("two windows' statistics and costs, shipped and summed, give the local header's") {
  WindowCost a{1000, 2'000'000'000, 8'000'000, 900'000, 500'000, 64, 6400, 100};
  WindowCost b{3000, 2'000'000'000, 24'000'000, 1'800'000, 700'000, 0, 0, 200};
  std::vector<WindowFact> fa = WindowFacts({{"attributed", 900}, {"unknown", 100}, {"lost", 5}}, a);
  std::vector<WindowFact> fb = WindowFacts({{"attributed", 2700}, {"unknown", 300}}, b);
  Header h;
  FactSumsInto(Sums({fa, fb}), h);
  CHECK(h.stats["attributed"] == 3600);
  CHECK(h.stats["unknown"] == 400);
  CHECK(h.stats["lost"] == 5);
  CHECK(h.unknown_percent == Approx(10.0));
  CHECK(h.lost_percent == Approx(100.0 * 5 / 4005));
  REQUIRE(h.cost);
  CHECK(h.cost->samples == 4000);
  CHECK(h.cost->cpu_ns == 4'000'000'000);
  CHECK(h.cost->interrupt_ns == 32'000'000);
  CHECK(h.cost->interrupt_ci95_ns == 2'700'000);
  CHECK(h.cost->daemon_ns == 1'200'000);
  CHECK(h.cost->module_samples == 64);
  CHECK(h.cost->module_handler_ns == 6400);
  CHECK(h.cost->stack_samples == 300);
  // every name the header reads is one a window ships
  for (const std::string& name : FactNamesRead()) {
    INFO(name);
    const bool shipped =
        std::any_of(fa.begin(), fa.end(), [&](const WindowFact& f) { return f.name == name; });
    if (name.rfind("cost.", 0) == 0) CHECK(shipped);
  }
}

TEST_CASE("windows that shipped no cost leave the header's cost unmeasured") {
  Header h;
  FactSumsInto(Sums({WindowFacts({{"attributed", 10}}, std::nullopt)}), h);
  CHECK_FALSE(h.cost);
  CHECK(h.stats["attributed"] == 10);
  CHECK(h.unknown_percent == 0);
}

TEST_CASE("a hostile host's figures are clamped, never wrapped") {
  Header h;
  std::map<std::string, double> sums{{"stat.attributed", 1e30},
                                     {"stat.unknown", -5},
                                     {"stat.lost", std::numeric_limits<double>::quiet_NaN()},
                                     {"cost.samples", 1e300},
                                     {"cost.cpu_ns", std::numeric_limits<double>::infinity()},
                                     {"stat.no-such-name", 3}};
  FactSumsInto(sums, h);
  CHECK(h.stats["attributed"] == std::numeric_limits<int64_t>::max());
  CHECK(h.stats["unknown"] == 0);
  CHECK(h.stats["lost"] == 0);
  CHECK(h.unknown_percent == 0);
  REQUIRE(h.cost);
  CHECK(h.cost->samples == std::numeric_limits<uint64_t>::max());
  CHECK(h.cost->cpu_ns == std::numeric_limits<uint64_t>::max());
  // a cost figure beyond int64 is shipped as its largest
  WindowCost huge{std::numeric_limits<uint64_t>::max(), 1, 0, 0, 0, 0, 0};
  std::vector<WindowFact> f = WindowFacts({}, huge);
  REQUIRE(!f.empty());
  CHECK(f[0].name == "cost.samples");
  CHECK(f[0].value == std::numeric_limits<int64_t>::max());
}
