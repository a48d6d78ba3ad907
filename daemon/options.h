// options.h - lcpid's command line: what to sample, where to keep it, how
// often to flush, and how to run.
#ifndef LCPI_DAEMON_OPTIONS_H
#define LCPI_DAEMON_OPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/aggregate/stack_table.h"
#include "libprofile/base/control_protocol.h"
#include "libprofile/budget/rate_governor.h"
#include "libprofile/collect/event_spec.h"
#include "libprofile/store/retention.h"

namespace lcpi {

struct DaemonOptions {
  std::string db = kDefaultDatabase;
  std::string group = "lcpi";   // who besides root may read the database
  std::string source = "auto";  // auto | perf | kmod
  std::vector<EventSpec> events;
  uint64_t period = 0;
  uint64_t frequency = 0;
  uint32_t jitter_pct = 10;
  // Call stacks per second per CPU (perf source), beside the flat profile; 0: none.
  uint64_t stack_frequency = 0;  // off until stacks are bounded in bytes (docs/operators.md)
  uint64_t max_stacks = kMaxStacksPerWindow;  // distinct call stacks a window keeps
  int flush_interval = 300;                   // seconds
  // Distinct (image, event, offset) counts pending before a merge starts
  // early; one more batch may be in flight, so memory holds up to twice this.
  uint64_t max_pending_entries = 2000000;
  uint64_t image_cache_mb = 1024;  // copies of profiled images; 0: none
  int64_t window = 3600;           // seconds: each time window is one epoch row
  RetentionPolicy retention;       // --retain, --retain-tagged, --max-db-size
  std::string ship_mark;           // --hold-unshipped: lcpi-ship's mark; empty: none
  uint64_t max_processes = 1000;   // pids with rows of their own per window; 0: no cap
  // seconds between calibrations of what a sample costs (the first at
  // start); 0: only on request (lcpictl calibrate)
  int64_t calibrate_every = 3600;
  // What one sample costs, given (ns; 0: calibrated): the governor holds it
  // to the budget instead of the calibrations' estimate.
  double sample_cost_ns = 0;
  // The cost budget, percent of each CPU the sampling may cost (by the
  // calibration's estimate); 0: off, the asked rate whatever it costs.
  double max_overhead_pct = kDefaultMaxOverheadPct;
  bool foreground = false;
  std::string log_level = "info";
  std::string log_file;  // daemon mode: empty means syslog
  std::string socket = kDefaultControlSocket;
  std::string pid_file = kDefaultPidFile;
};

// Parses argv. Returns the exit status to leave with (0 after --help) when
// the daemon should not run, else -1 with *out filled.
int ParseDaemonOptions(int argc, char** argv, DaemonOptions* out);

}  // namespace lcpi

#endif  // LCPI_DAEMON_OPTIONS_H
