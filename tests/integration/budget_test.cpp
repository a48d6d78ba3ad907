// budget_test.cpp - lcpid's cost budget end to end, as root, on this host's
// perf events (issue #27): the calibration of what one sample costs runs at
// start and on request, and status carries its estimate, interval and own
// cost, and lcpid's CPU per sample. Nothing here asserts a speed (the CPUs
// are shared): only that the figures are there and agree with each other.
#include <catch2/catch.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>

#include "daemon_fixture.h"
#include "symbol_counts.h"

using lcpi::testing::DaemonFixture;
using lcpi::testing::Lcpid;
using lcpi::testing::PerSymbol;
using lcpi::testing::Run;

namespace {

const std::string kWorkloads = WORKLOAD_DIR;

// Status once calibration_state is no longer "running" and calibrations
// reached the number asked (or after a minute: then the checks fail).
std::map<std::string, std::string> SettledStatus(Lcpid& d, uint64_t calibrations) {
  std::map<std::string, std::string> st;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    st = d.Status();
    if (st["calibration_state"] != "running" && !st["calibrations"].empty() &&
        std::stoull(st["calibrations"]) >= calibrations)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return st;
}

double Number(std::map<std::string, std::string>& st, const std::string& key) {
  INFO("status " << key << ": '" << st[key] << "'");
  REQUIRE(!st[key].empty());
  return std::stod(st[key]);
}

// Whether the governed rate is where the governor's steps end: the rate
// the budget (less the calibrations' reserve) allows at the cost it holds,
// between the floor and the asked rate, within its hysteresis (RateSteps:
// 10 % of the rate in use). With the budget off, any rate: the steps back
// to the asked rate are checked one at a time.
bool AtHeldTarget(std::map<std::string, std::string>& st) {
  if (st["max_overhead_pct"] == "0") return true;
  for (const char* key : {"governed_rate_per_cpu", "asked_rate_per_cpu", "governor_cost_ns",
                          "max_overhead_pct", "calibration_reserved_pct", "stacks_reserved_pct"})
    if (st[key].empty()) return false;
  const double asked = std::stod(st["asked_rate_per_cpu"]);
  const double cost = std::stod(st["governor_cost_ns"]);
  const double budget = std::stod(st["max_overhead_pct"]) -
                        std::stod(st["calibration_reserved_pct"]) -
                        std::stod(st["stacks_reserved_pct"]);
  const double target =
      cost > 0 ? std::clamp(std::max(budget, 1e-9) * 1e7 / cost, std::min(asked, 100.0), asked)
               : asked;
  const double governed = std::stod(st["governed_rate_per_cpu"]);  // printed whole
  return std::abs(governed - target) <= 0.1 * governed + 1;
}

// Status once governor_changes reached `changes` (or after four minutes, as
// long as calibrations of ~5 s each, refused or disagreeing on a loaded
// host, can take to settle one; 150 s in the QEMU guest, LCPI_TEST_RATE_LOW
// set, where the first calibration under TCG took from under a minute to
// over one). Where the estimate still waits for a confirmation after lcpid
// made its own tries at once and its first two later ones (10 s, then 20 s
// after: calibration_retry.h), the test asks for one after 10 s idle, as
// an operator would (lcpictl calibrate): on a loaded host 6 of 8
// calibrations were refused for their interval, and lcpid's next try (40 s,
// then 80 s later) came after the two minutes this waited then.
std::map<std::string, std::string> GovernedStatus(Lcpid& d, uint64_t changes) {
  std::map<std::string, std::string> st;
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::seconds(std::getenv("LCPI_TEST_RATE_LOW") ? 150 : 240);
  auto idle_since = std::chrono::steady_clock::now();
  int asked = 0;
  while (std::chrono::steady_clock::now() < give_up) {
    st = d.Status();
    // and a second calibration confirmed the first (a step over x2 waits for it)
    if (!st["governor_changes"].empty() && std::stoull(st["governor_changes"]) >= changes &&
        st["estimate_confirmed"] == "1" && st["calibration_state"] != "running")
      break;
    const auto now = std::chrono::steady_clock::now();
    // its 10 s and 20 s tries made, the 40 s one scheduled
    const bool lcpid_tried =
        !st["calibration_later_tries"].empty() && std::stoi(st["calibration_later_tries"]) >= 3;
    if (st["calibration_state"] == "running" || st["estimate_confirmed"] == "1" || !lcpid_tried) {
      idle_since = now;
    } else if (now - idle_since > std::chrono::seconds(10)) {
      d.Ctl("calibrate");
      idle_since = now;
      asked++;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (asked) WARN("the test asked for " << asked << " calibrations after lcpid's own tries");
  // then settled: at the rate the budget allows at the cost held (within
  // the governor's hysteresis) and unchanged for 1.5 s. A confirmed
  // estimate may take more windows' steps than 1.5 s: on a loaded host a
  // calibration of 47 us a sample was read at 1,250/s, a step before 212/s.
  for (int still = 0; still < 15 && std::chrono::steady_clock::now() < give_up; ++still) {
    const std::string rate = st["governed_rate_per_cpu"];
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    st = d.Status();
    if (st["governed_rate_per_cpu"] != rate || !AtHeldTarget(st)) still = 0;
  }
  return st;
}

// Samples per second per CPU lcpid takes over `seconds`, by its counts.
// Every CPU is kept busy meanwhile: cpu-clock samples a CPU that idles
// less often (an idle host gave half the governed rate, a loaded one all of
// it).
double MeasuredRate(Lcpid& d, double seconds) {
  auto a = d.Status();
  {
    std::atomic<bool> stop{false};
    std::vector<std::thread> spinners;
    for (long i = 0; i < sysconf(_SC_NPROCESSORS_ONLN); ++i)
      spinners.emplace_back([&stop] {
        while (!stop.load(std::memory_order_relaxed)) {
        }
      });
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (std::thread& t : spinners) t.join();
  }
  auto b = d.Status();
  const double samples = Number(b, "samples") - Number(a, "samples");
  const double ns = Number(b, "samples_as_of_ns") - Number(a, "samples_as_of_ns");
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return ns > 0 ? samples / (ns / 1e9) / static_cast<double>(cpus) : 0;
}

// Each window's period of the first event, oldest first.
std::vector<uint64_t> WindowPeriods(lcpi::ProfileDb& db) {
  auto facts = db.EpochEvents(lcpi::EpochSet::All());
  REQUIRE(facts);
  std::vector<uint64_t> out;
  for (const lcpi::EpochEvent& f : *facts) out.push_back(f.period);
  return out;
}

}  // namespace

TEST_CASE("lcpid calibrates what a sample costs at start, with an interval and its own cost",
          "[calibration]") {
  DaemonFixture d({"--max-overhead", "1"});
  REQUIRE(d.running());
  auto st = SettledStatus(d, 1);
  INFO("calibration_error: " << st["calibration_error"]);
  REQUIRE(st["calibration_state"] == "done");
  // the one at start, the one that confirms it where it lowers the rate
  // by more than 2x (here: 5,000/s costs ~4 %), and up to three run again
  // after a refusal (an interval over 25 % of the slope, on a loaded host)
  CHECK(Number(st, "calibrations") >= 1);
  CHECK(Number(st, "calibrations") <= 5);
  const double cost = Number(st, "sample_cost_ns"), half = Number(st, "sample_cost_ci95_ns");
  CHECK(cost > 0);
  CHECK(std::isfinite(half));
  CHECK(half >= 0);
  CHECK(Number(st, "calibration_points") >= 6);
  CHECK(Number(st, "calibration_cpu") >= 0);
  // Its own cost: some CPU, and no more than its length (one thread).
  const double cpu_ms = Number(st, "calibration_cpu_ms"), wall_ms = Number(st, "calibration_ms");
  CHECK(cpu_ms > 0);
  CHECK(cpu_ms <= wall_ms + 1);
  CHECK(!st["calibration_at"].empty());
  CHECK(!st["calibration_rates"].empty());
  // cpu-clock here (no PMU): what the asked rate costs by this estimate, and
  // the rate a 1 % budget allows: never above the asked one, lower where
  // the asked one costs more than 1 %.
  if (st["event.0"].find("sampled-as cpu-clock") != std::string::npos) {
    const double rate = Number(st, "sampling_rate_per_cpu"), pct = Number(st, "sampling_cost_pct");
    CHECK(rate > 0);
    CHECK(pct == Approx(cost * rate / 1e7).epsilon(0.01));
    CHECK(Number(st, "sampling_cost_ci95_pct") ==
          Approx(half * rate / 1e7).epsilon(0.01).margin(1e-3));
    const double within = Number(st, "rate_within_budget");
    CHECK(within <= rate);
    if (pct > 1)
      CHECK(within == Approx(1e7 / cost).epsilon(0.01));
    else
      CHECK(within == Approx(rate).epsilon(0.01));
  }

  // lcpid's own CPU per sample, from its threads' schedstat.
  REQUIRE(Run({kWorkloads + "/shares", "1"}) == 0);
  st = SettledStatus(d, 1);  // no calibration half done: its CPU is in rusage
  CHECK(Number(st, "daemon_cpu_ms") > 0);
  const double samples = Number(st, "samples"), per = Number(st, "daemon_ns_per_sample");
  CHECK(samples > 0);
  CHECK(per > 0);
  // consistent: ns per sample x samples is the CPU (to the ms rounding)
  CHECK(per * samples / 1e6 == Approx(Number(st, "daemon_cpu_ms")).margin(2).epsilon(0.05));
  // and the whole process's CPU (rusage, daemon_cpu_ns_per_sample) is that
  // plus what the calibration used
  CHECK(Number(st, "daemon_cpu_ns_per_sample") * samples / 1e6 ==
        Approx(Number(st, "daemon_cpu_ms") + Number(st, "calibrations_cpu_ms"))
            .margin(20)
            .epsilon(0.1));
  const char* source = std::getenv("LCPI_TEST_SOURCE");
  if (source && std::string(source) == "kmod")
    CHECK(Number(st, "module_handler_ns_per_sample") > 0);
}

TEST_CASE("lcpictl calibrate measures again, and --calibrate off leaves it to the operator",
          "[calibration]") {
  DaemonFixture d;
  REQUIRE(d.running());
  auto st = SettledStatus(d, 1);
  REQUIRE(st["calibration_state"] == "done");
  std::string reply = d.Ctl("calibrate");
  INFO("reply: " << reply);
  CHECK(reply.find("calibrating") != std::string::npos);
  st = SettledStatus(d, 2);
  CHECK(st["calibration_state"] == "done");
  CHECK(Number(st, "calibrations") == 2);
  CHECK(Number(st, "sample_cost_ns") > 0);

  DaemonFixture off({"--calibrate-every", "0"});
  REQUIRE(off.running());
  st = off.Status();
  CHECK(st["calibration_state"] == "off");
  CHECK(Number(st, "calibrations") == 0);
  CHECK(st.count("sample_cost_ns") == 0);
  off.Ctl("calibrate");  // on request even so
  st = SettledStatus(off, 1);
  CHECK(st["calibration_state"] == "done");
  CHECK(Number(st, "sample_cost_ns") > 0);
}

// The budget of the first governed test: 1 %, or LCPI_TEST_BUDGET_PCT (the
// QEMU guest, where a sample costs ~170 us under TCG and 1 % would sit at
// the floor of 100/s); LCPI_TEST_RATE_LOW, the least share of the governed
// rate the guest's late hrtimers are held to.
double TestBudgetPct() {
  const char* pct = std::getenv("LCPI_TEST_BUDGET_PCT");
  return pct ? std::stod(pct) : 1;
}

// The cost per sample the governed tests give lcpid (--sample-cost) where
// they test the governor, not the calibration: what this VM measures
// (bench/results/cost.md: 7.8 us), or LCPI_TEST_SAMPLE_COST_NS (the guest).
std::string KnownSampleCostNs() {
  const char* cost = std::getenv("LCPI_TEST_SAMPLE_COST_NS");
  return cost ? cost : "8000";
}

TEST_CASE("a budget the asked rate exceeds lowers the rate, and status and the windows say so",
          "[calibration]") {
  // cpu-clock at the default 5,000/s/CPU costs ~4 % of a CPU here (7.8 us a
  // sample): a budget of 1 % allows ~1,300/s
  const double budget = TestBudgetPct();
  DaemonFixture d({"--max-overhead", std::to_string(budget)});
  REQUIRE(d.running());
  auto st = GovernedStatus(d, 1);
  INFO("calibration_error: " << st["calibration_error"]
                             << " governor_error: " << st["governor_error"]);
  INFO("estimate_confirmed " << st["estimate_confirmed"] << ", calibrations " << st["calibrations"]
                             << ", calibrations_refused " << st["calibrations_refused"]
                             << ", calibrations_confirming " << st["calibrations_confirming"]
                             << ", calibration_reserved_pct " << st["calibration_reserved_pct"]);
  const double asked = Number(st, "asked_rate_per_cpu");
  // The test needs a host where the asked rate costs more than the budget.
  INFO("the asked rate costs " << st["sampling_cost_pct"] << " % here");
  REQUIRE(Number(st, "sampling_cost_pct") > 1.2 * budget);
  CHECK(Number(st, "max_overhead_pct") == Approx(budget));
  CHECK(Number(st, "governor_changes") >= 1);
  const double governed = Number(st, "governed_rate_per_cpu");
  CHECK(governed < asked);
  // by the estimate the governor holds to the budget (the last calibration
  // it took: a refused one leaves the one before)
  const double held = Number(st, "governor_cost_ns");
  CHECK(held > 0);
  const double left = budget - Number(st, "governor_reserved_pct");  // calibrations held back
  CHECK(governed == Approx(std::max(100.0, left * 1e7 / held)).epsilon(0.12));
  // where the governor takes the rate: exactly there, by the same figures
  CHECK(
      Number(st, "governor_target_per_cpu") ==
      Approx(std::clamp(left * 1e7 / held, std::min(100.0, asked), asked)).epsilon(0.01).margin(1));
  CHECK(Number(st, "governed_cost_pct") <= 1.1 * budget);
  CHECK(st["budget_exceeded"] == "0");
  // the rate really taken (idle CPUs are sampled too: cpu-clock)
  const double measured = MeasuredRate(d, 2);
  INFO("measured " << measured << "/s/CPU, governed " << governed << ", asked " << asked);
  if (const char* low = std::getenv("LCPI_TEST_RATE_LOW")) {
    // QEMU TCG on a loaded host: the guest's hrtimers fire late, so
    // cpu-clock delivers only part of any rate (asked 5,000: ~900/s);
    // never more than the governed one, and at least this share of it
    CHECK(measured <= governed * 1.25);
    CHECK(measured >= governed * std::stod(low));
  } else {
    CHECK(measured == Approx(governed).epsilon(0.25));
  }

  // The known shares at the governed rate, within 2 points of the truth:
  // ~8,000 samples (6 s at ~1,300/s here; on a host where a sample costs
  // 46 us, 250/s, 6 s gave 1,500, and work60's share a binomial error of
  // 1.3 points: 4.8 off once), at most 40 s.
  const int seconds = static_cast<int>(std::clamp(std::ceil(8000 / governed), 6.0, 40.0));
  INFO("the workload ran " << seconds << " s");
  REQUIRE(Run({kWorkloads + "/shares", std::to_string(seconds)}) == 0);
  REQUIRE(d.Stop() == 0);
  auto db = d.OpenDb();
  REQUIRE(db);
  std::map<std::string, uint64_t> sym = PerSymbol(*db, kWorkloads + "/shares");
  const double total = sym["work60"] + sym["work30"] + sym["work10"];
  INFO("work60 " << sym["work60"] << " work30 " << sym["work30"] << " work10 " << sym["work10"]);
  REQUIRE(total > 1000);
  CHECK(total < seconds * asked * 0.6);  // fewer than the asked rate would take
  CHECK(std::abs(100 * sym["work60"] / total - 60) < 2);
  CHECK(std::abs(100 * sym["work30"] / total - 30) < 2);
  CHECK(std::abs(100 * sym["work10"] / total - 10) < 2);
  // Each window stores the period it was sampled at: the first the asked
  // one (200,000 ns: 5,000/s), the later ones the governed one.
  std::vector<uint64_t> periods = WindowPeriods(*db);
  REQUIRE(periods.size() >= 2);
  CHECK(periods.front() == Approx(1e9 / asked).epsilon(0.01));
  CHECK(periods.back() == Approx(1e9 / governed).epsilon(0.01));
}

// Whatever the source (perf, or lcpi.ko in the QEMU guest, LCPI_TEST_SOURCE=
// kmod): the governor's period reaches the source, which samples at it, and
// each window stores the period it was sampled at. No figure of the cost
// estimate is asserted (under TCG it wandered from 170 to 920 us a sample
// between boots, and a step moves the rate by at most x10).
TEST_CASE("the governed period reaches the source and every window stores its own") {
  const double budget = TestBudgetPct();
  std::vector<std::string> args = {"--max-overhead", std::to_string(budget)};
  // The cost is given, as an operator would for a host where calibrating
  // cannot measure (lcpid --sample-cost): in the guest (TCG's timers:
  // slopes of -280 to +180 us +- 130-570 us, every one refused) and under
  // ASan (slopes of 0.4 to 8 us +- 2.5-4.8 us on a loaded host).
  args.insert(args.end(), {"--sample-cost", KnownSampleCostNs()});
  DaemonFixture d(args);
  REQUIRE(d.running());
  auto st = GovernedStatus(d, 1);
  INFO("calibration_error: " << st["calibration_error"]
                             << " governor_error: " << st["governor_error"]);

  CHECK(st["governor_error"].empty());
  REQUIRE(Number(st, "governor_changes") >= 1);
  const double asked = Number(st, "asked_rate_per_cpu");
  const double governed = Number(st, "governed_rate_per_cpu");
  CHECK(governed < asked);
  const double measured = MeasuredRate(d, 2);
  st = d.Status();
  const double now = Number(st, "governed_rate_per_cpu");  // a second step may have come
  INFO("measured " << measured << "/s/CPU, governed " << governed << " then " << now << ", asked "
                   << asked);
  const char* low = std::getenv("LCPI_TEST_RATE_LOW");
  CHECK(measured <= std::max(governed, now) * 1.25);
  CHECK(measured >= std::min(governed, now) * (low ? std::stod(low) : 0.75));
  REQUIRE(d.Stop() == 0);
  auto db = d.OpenDb();
  REQUIRE(db);
  std::vector<uint64_t> periods = WindowPeriods(*db);
  REQUIRE(periods.size() >= 2);
  CHECK(periods.front() == Approx(1e9 / asked).epsilon(0.01));
  CHECK(periods.back() > periods.front());
  bool stored = false;
  for (uint64_t p : periods) stored = stored || p == Approx(1e9 / governed).epsilon(0.01);
  CHECK(stored);
}

TEST_CASE("lcpictl budget changes the budget at run time, and the rate follows") {
  // the cost given (as the test above): the rate follows the budget alone
  DaemonFixture d({"--max-overhead", "1", "--sample-cost", KnownSampleCostNs()});
  REQUIRE(d.running());
  auto st = GovernedStatus(d, 1);
  // the governor holds the cost given, confirmed (the asked 5,000/s costs
  // 4 % by it: over the budget)
  const double cost = std::stod(KnownSampleCostNs());
  REQUIRE(Number(st, "governor_cost_ns") == Approx(cost));
  CHECK(st["estimate_confirmed"] == "1");
  const double first = Number(st, "governed_rate_per_cpu");
  CHECK(first == Approx(std::max(100.0, 1e7 / cost)).epsilon(0.12));
  // a quarter of the budget: a quarter of the rate, in one step (at most x10)
  std::string reply = d.Ctl("budget 0.25");
  INFO("reply: " << reply);
  CHECK(reply.find("max_overhead_pct 0.25") != std::string::npos);
  st = GovernedStatus(d, 2);
  CHECK(Number(st, "max_overhead_pct") == 0.25);
  const double quarter = Number(st, "governed_rate_per_cpu");
  CHECK(quarter < first);
  CHECK(quarter == Approx(std::max(100.0, 0.25e7 / cost)).epsilon(0.12));
  const double measured = MeasuredRate(d, 2);
  INFO("measured " << measured << "/s/CPU, governed " << quarter);
  CHECK(measured == Approx(quarter).epsilon(0.25));
  // bad budgets are refused, the budget stays
  for (const char* bad : {"budget abc", "budget 101", "budget -1", "budget 1e3", "budget nan"}) {
    INFO(bad);
    const std::string said = lcpi::testing::Capture(std::string(LCPICTL_PATH) + " --socket " +
                                                    d.socket_path() + " " + bad + " 2>&1");
    INFO(said);
    CHECK(said.find("a budget is a percent") != std::string::npos);
  }
  CHECK(Number(st = d.Status(), "max_overhead_pct") == 0.25);
  // off: back up toward the asked rate (a step of at most x2)
  CHECK(d.Ctl("budget 0").find("max_overhead_pct 0") != std::string::npos);
  st = GovernedStatus(d, 3);
  CHECK(Number(st, "max_overhead_pct") == 0);
  CHECK(Number(st, "governed_rate_per_cpu") ==
        Approx(std::min(Number(st, "asked_rate_per_cpu"), quarter * 2)).epsilon(0.02));
  REQUIRE(d.Stop() == 0);
  auto db = d.OpenDb();
  REQUIRE(db);
  // one window per rate, each with its own period
  std::vector<uint64_t> periods = WindowPeriods(*db);
  REQUIRE(periods.size() >= 4);
  const size_t n = periods.size();
  CHECK(periods[n - 2] == Approx(1e9 / quarter).epsilon(0.01));
  CHECK(periods[n - 2] > periods[n - 3]);
  CHECK(periods[n - 1] < periods[n - 2]);
}

// Call stacks are counted in the budget (issue #29): what the last window's
// stacks cost (each at the interrupt's estimate, and lcpid's CPU unwinding
// them) is held back, and the flat rate is governed to what is left.
TEST_CASE("call stacks are held back from the budget, and the flat rate gives way") {
  lcpi::testing::TempDir dir("lcpi-budget-stacks");
  const double cost = std::stod(KnownSampleCostNs());
  // windows of 4 s, each measuring the unwinding; 200 stacks/s/CPU at 8 us
  // a stack: 0.16 % of each CPU, and their unwinding on top
  Lcpid d(dir.path, 2,
          {"--max-overhead", "1", "--sample-cost", KnownSampleCostNs(), "--stack-frequency", "200",
           "--window", "4s"});
  REQUIRE(d.running());
  // user code on a CPU, whose stacks are unwound, over two windows and the
  // status read after them
  struct Workload {  // killed on any exit
    pid_t pid = -1;
    Workload() {
      std::string path = kWorkloads + "/shares", seconds = "600";
      char* argv[] = {path.data(), seconds.data(), nullptr};
      if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv, environ) != 0) pid = -1;
    }
    ~Workload() {
      if (pid > 0 && kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
    }
  } work;
  REQUIRE(work.pid > 0);
  std::this_thread::sleep_for(std::chrono::seconds(9));
  auto st = GovernedStatus(d, 1);
  // A process's first walks open its images' unwind tables, milliseconds
  // of CPU each and more on a loaded host, which can leave its user in
  // debt to the unwinding's allowance for a few windows: a window whose
  // walks were all over it measures no unwinding. Until one that has some
  // (fresh run 36: none in the window read at 9 s, with build-san/ built
  // beside it at SCHED_IDLE).
  for (int i = 0; i < 12 && Number(st, "stacks_unwind_ns_per_s") == 0; i++) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    st = GovernedStatus(d, 1);
  }
  INFO("governor_error: " << st["governor_error"] << ", unwound " << st["unwind_stacks"]
                          << ", unwind_over_cpu " << st["unwind_over_cpu"]);
  CHECK(Number(st, "stacks") > 0);
  const double stacks = Number(st, "stacks_cost_pct"), held = Number(st, "stacks_reserved_pct");
  const double unwind = Number(st, "stacks_unwind_ns_per_s"), cpus = Number(st, "cpus_online");
  const double calibrations = Number(st, "calibration_reserved_pct");
  INFO("stacks cost " << stacks << " % (unwinding " << unwind << " ns/s), held back " << held
                      << " %, calibrations " << calibrations << " %");
  // the window's unwinding was measured, and the stacks priced as the flat
  // rate is: the asked rate at the sample's cost, per CPU
  CHECK(unwind > 0);
  CHECK(stacks == Approx((200 * cost + unwind / cpus) / 1e7));
  // held back: the cost, at most half the budget
  CHECK(held == Approx(std::min(stacks, 0.5)));
  CHECK(st["stacks_share_capped"] == (stacks > 0.5 ? "1" : "0"));
  CHECK(Number(st, "governor_reserved_pct") == Approx(calibrations + held));
  // the flat rate is what the budget left, within the governor's
  // hysteresis, and well below what it allows without stacks (>= 0.16 of
  // the 1 % held back)
  const double governed = Number(st, "governed_rate_per_cpu");
  CHECK(governed == Approx((1 - calibrations - held) * 1e7 / cost).epsilon(0.11));
  CHECK(governed < 0.95 * (1 - calibrations) * 1e7 / cost);
  // all of it counts against the budget: kept where the stacks cost no
  // more than their share (on a loaded host every process's stacks are
  // unwound, and may cost more: then the budget is exceeded by that)
  CHECK(Number(st, "budget_cost_pct") ==
        Approx(Number(st, "governed_cost_pct") + calibrations + stacks));
  if (stacks <= 0.5) CHECK(st["budget_exceeded"] == "0");
  // the walks' CPU is bounded by the stacks' half of the budget on every
  // CPU, 0.5 % of a CPU being 5 ms a second (unwind_allowance.h); whether
  // these walks stay within it depends on the host's load
  CHECK(Number(st, "unwind_cpu_allowance_ns_per_s") == Approx(0.5 * 1e7 * cpus));
  INFO("unwind_over_cpu " << st["unwind_over_cpu"]);
  CHECK(st.count("unwind_over_cpu") == 1);
  REQUIRE(d.Stop() == 0);
  // and the windows' cost counts the stacks' interrupts (schema 9)
  auto db = d.OpenDb();
  REQUIRE(db);
  auto stored = db->Cost(lcpi::EpochSet::All());
  REQUIRE(stored);
  REQUIRE(stored->has_value());
  const lcpi::WindowCost& w = **stored;
  CHECK(w.stack_samples > 0);
}

TEST_CASE("lcpid --max-overhead refuses what is not a percent of a CPU") {
  for (const char* bad : {"abc", "-1", "101", "nan", "inf", ""}) {
    INFO("--max-overhead '" << bad << "'");
    const std::string said =
        lcpi::testing::Capture(std::string(LCPID_PATH) + " -f --db /nonexistent/p.db " +
                               "--max-overhead '" + bad + "' 2>&1; echo \"exit $?\"");
    INFO(said);
    CHECK(said.find("--max-overhead") != std::string::npos);
    CHECK(said.find("exit 0") == std::string::npos);
  }
}
