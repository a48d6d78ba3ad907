// options.cpp - lcpid's command line, with CLI11.
#include "daemon/options.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>

#include "libprofile/base/command_line.h"
#include "libprofile/base/time_spec.h"

namespace lcpi {

int ParseDaemonOptions(int argc, char** argv, DaemonOptions* out) {
  DaemonOptions o;
  std::string events = "cycles";
  std::string window = FormatDuration(o.window);
  std::string calibrate_every = FormatDuration(o.calibrate_every);
  std::string rollup = FormatDuration(o.retention.rollup_after);
  std::string retain = FormatDuration(o.retention.retain);
  std::string retain_tagged = FormatDuration(o.retention.retain_tagged);
  std::string max_size = FormatSize(o.retention.max_bytes);
  CLI::App app{
      "lcpid - the lcpi daemon: samples every CPU continuously and keeps per-image\n"
      "profiles in an SQLite database. Needs root (perf events for the whole\n"
      "machine, /dev/lcpi, the control socket)."};
  app.add_option("--db", o.db, "profile database (created if missing)")->capture_default_str();
  app.add_option("--group", o.group,
                 "group whose members may read the database with the tools: the database is "
                 "created 0640 root:GROUP (0600, root only, when the group does not exist)")
      ->capture_default_str();
  app.add_option("--source", o.source,
                 "where samples come from: kmod (/dev/lcpi), perf (perf_event_open), or auto "
                 "(kmod when /dev/lcpi exists)")
      ->check(CLI::IsMember({"auto", "perf", "kmod"}))
      ->capture_default_str();
  app.add_option("--events", events,
                 "comma-separated events: cycles, imiss, instructions, branch-misses, "
                 "cache-misses, dmiss, cpu-clock, task-clock, or r:TYPE:CONFIG. Where the PMU "
                 "lacks cycles, cpu-clock is sampled for it (labelled as such in lcpictl "
                 "status and the reports); any other event it lacks is refused by name, and "
                 "lcpid runs with the rest (or exits, if none is left)")
      ->capture_default_str();
  auto* period = app.add_option("--period", o.period,
                                "mean events between samples (ns for cpu-clock); randomised by "
                                "+-jitter%. Default: 5000 samples/s/CPU");
  auto* freq = app.add_option("--frequency", o.frequency, "samples per second per CPU instead");
  period->excludes(freq);
  period->check(CLI::PositiveNumber);
  freq->check(CLI::Range(1, 100000));
  app.add_option("--stack-frequency", o.stack_frequency,
                 "call stacks per second per CPU, a cpu-clock perf event of their own beside the "
                 "flat profile, with either source (user stacks unwound through .eh_frame on "
                 "x86-64, by frame pointers elsewhere), e.g. 100, counted in the cost budget (the "
                 "flat rate gives way, down to half the budget; what stacks cost beyond shows as "
                 "the budget exceeded: lcpictl status's stacks_cost_pct); 0 (the default for now): "
                 "none")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
  app.add_option("--max-stacks", o.max_stacks,
                 "distinct call stacks a window keeps (in memory: up to ~2 KiB each); the "
                 "samples of further stacks are counted in stacks_over_limit")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--jitter", o.jitter_pct, "randomise each period by +- this percent")
      ->check(CLI::Range(0, 50))
      ->capture_default_str();
  app.add_option("--flush-interval", o.flush_interval, "seconds between merges into the database")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_option("--max-pending-entries", o.max_pending_entries,
                 "distinct (image, event, offset) counts kept in memory before a merge starts "
                 "early instead of waiting for the flush interval (merges run on their own "
                 "thread, one at a time: while one is written the next fills, so up to twice "
                 "this many are in memory; while the database refuses merges, what is held "
                 "beyond this is dropped, the oldest first, and counted as pending_dropped)")
      ->check(CLI::Range(uint64_t{1000}, uint64_t{1} << 32))
      ->capture_default_str();
  app.add_option("--image-cache-size", o.image_cache_mb,
                 "MiB of copies of profiled programs and libraries kept in images/ beside the "
                 "database, so the tools name their code after the files are deleted, replaced "
                 "or gone with their container; least recently used go first; 0: no copies")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--calibrate-every", calibrate_every,
                 "measure what one sample costs this host's code (about 0.5 s of one CPU, on a "
                 "thread of lcpid's own) at start and then this often (e.g. 1h; 0: only on "
                 "request, lcpictl calibrate); lcpictl status shows the estimate")
      ->capture_default_str();
  app.add_option("--sample-cost", o.sample_cost_ns,
                 "what one sample costs this host's code, in ns, measured elsewhere (bench/cost "
                 "on the same kind of host): the budget is held to it instead of the "
                 "calibration's estimate, for hosts where calibrating cannot measure (an "
                 "emulated CPU); 0: calibrate")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  app.add_option("--max-overhead", o.max_overhead_pct,
                 "the cost budget: percent of each CPU sampling may cost, by the calibration's "
                 "estimate of a sample's cost; over it, lcpid samples less often (from the next "
                 "window on, in steps, never under 100 samples/s/CPU: then lcpictl status says "
                 "budget_exceeded); 0: off, the asked rate whatever it costs")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  app.add_option("--window", window,
                 "close a time window this often (30s, 10m, 1h, 1d; aligned to the clock in "
                 "UTC): each window is an epoch the tools select by time (--since/--until)")
      ->capture_default_str();
  app.add_option("--rollup-after", rollup,
                 "merge the windows of a day into one epoch this long after they ended "
                 "(0: never); windows of different spans or periods are not merged")
      ->capture_default_str();
  app.add_option("--retain", retain,
                 "drop windows and epochs this long after they ended (e.g. 30d, 12h)")
      ->capture_default_str();
  app.add_option("--keep-windows", o.retention.keep_newest,
                 "the newest windows and epochs never dropped for their age, whatever the "
                 "wall clock says (a clock stepping forward by more than --retain would "
                 "otherwise drop all history); only --max-db-size drops them")
      ->capture_default_str();
  app.add_option("--retain-tagged", retain_tagged,
                 "the same for the epochs of a tagged span (lcpictl epoch --tag)")
      ->capture_default_str();
  app.add_option("--max-db-size", max_size,
                 "cap on the database file (e.g. 2G, 500M; 0: none): over it, the oldest "
                 "windows are dropped first (untagged before tagged) and the file shrinks")
      ->capture_default_str();
  app.add_option("--hold-unshipped", o.ship_mark,
                 "lcpi-ship's mark file (its --state path with .mark added, e.g. "
                 "/var/lib/lcpi-ship/state.db.mark): windows it has not sent are kept past "
                 "--retain and never rolled up; only --max-db-size drops them, counted in "
                 "status (unshipped_dropped_epochs). Without a mark every window is held. The path "
                 "must have no symbolic link in any component; needs a --max-db-size");
  app.add_option("--max-processes", o.max_processes,
                 "pids per window whose samples are stored per process; the samples of later "
                 "pids are summed by command into one row of pid -1 ('[rolled up]' in lcpiprof "
                 "-P); 0: no cap. Image and offset counts are never capped")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 22))
      ->capture_default_str();
  app.add_flag("--foreground,-f", o.foreground, "stay in the foreground, log to stderr");
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  app.add_option("--log-file", o.log_file, "log here in daemon mode (default: syslog)");
  app.add_option("--socket", o.socket, "control socket (root only)")->capture_default_str();
  app.add_option("--pid-file", o.pid_file, "pid file in daemon mode")->capture_default_str();
  app.footer(
      "Examples:\n"
      "  lcpid                                  daemon, all defaults\n"
      "  lcpid -f --db /tmp/p.db --flush-interval 10 --events cycles,imiss\n"
      "  lcpid --window 10m --retain 7d --max-db-size 500M\n"
      "  lcpictl status                         what the daemon is doing\n"
      "  lcpiprof                               per-image report of the newest epoch");
  if (std::optional<int> status = ParseCommandLine(app, argc, argv)) return *status;
  Expected<std::vector<EventSpec>> parsed = ParseEventList(events);
  if (!parsed) {
    std::cerr << "lcpid: " << parsed.error().message() << "\n";
    return 2;
  }
  o.events = *parsed;
  Expected<int64_t> every =
      calibrate_every == "0" ? Expected<int64_t>(0) : ParseDuration(calibrate_every);
  if (!every) {
    std::cerr << "lcpid: --calibrate-every: " << every.error().message() << "\n";
    return 2;
  }
  if (*every != 0 && *every < 60) {  // each costs ~0.5 s of a CPU: at most ~1 % of one
    std::cerr << "lcpid: --calibrate-every: at least 1m (or 0: only on request)\n";
    return 2;
  }
  o.calibrate_every = *every;
  if (!std::isfinite(o.sample_cost_ns)) {  // CLI11's range lets NaN through
    std::cerr << "lcpid: --sample-cost: ns from 0 (calibrate) to 1e9\n";
    return 2;
  }
  if (!std::isfinite(o.max_overhead_pct)) {  // CLI11's range lets NaN through
    std::cerr << "lcpid: --max-overhead: a percent of each CPU from 0 (off) to 100\n";
    return 2;
  }
  Expected<int64_t> w = ParseDuration(window);
  if (!w) {
    std::cerr << "lcpid: --window: " << w.error().message() << "\n";
    return 2;
  }
  o.window = *w;
  Expected<int64_t> r = ParseDuration(retain), rt = ParseDuration(retain_tagged);
  Expected<int64_t> ru = rollup == "0" ? Expected<int64_t>(0) : ParseDuration(rollup);
  Expected<uint64_t> cap = max_size == "0" ? Expected<uint64_t>(0) : ParseSize(max_size);
  for (auto [flag, error] : {std::pair{"--retain", r ? nullptr : &r.error()},
                             std::pair{"--retain-tagged", rt ? nullptr : &rt.error()},
                             std::pair{"--max-db-size", cap ? nullptr : &cap.error()},
                             std::pair{"--rollup-after", ru ? nullptr : &ru.error()}}) {
    if (error) {
      std::cerr << "lcpid: " << flag << ": " << error->message() << "\n";
      return 2;
    }
  }
  o.retention.retain = *r;
  o.retention.retain_tagged = *rt;
  o.retention.max_bytes = *cap;
  // Without a mark every window is held, and only the size cap drops held
  // windows: with no cap a shipper that never marks (or a mark deleted)
  // would grow the database without bound.
  if (!o.ship_mark.empty() && o.retention.max_bytes == 0) {
    std::cerr << "lcpid: --hold-unshipped needs a --max-db-size (not 0): only the size cap "
                 "drops windows the shipper has not sent\n";
    return 2;
  }
  o.retention.rollup_after = *ru;
  *out = o;
  return -1;
}

}  // namespace lcpi
