-- 007_window_cost.sql - what each window's profile cost the host, and
-- which pids were lcpid (issue #27: the observer in the profile).
--
-- lcpid adds to its window's row at each merge, once a calibration has
-- measured what one sample costs (libprofile/budget). Every figure is a sum,
-- so merges, rollups (retention) and a report over many windows add rows
-- up and divide once: the per-sample figures come out weighted by samples,
-- the percentages by the CPU time covered. A window with no row (merged
-- before this migration, or before the first calibration) says "cost not
-- measured".
CREATE TABLE window_costs (
  epoch_id          INTEGER PRIMARY KEY REFERENCES epochs (id),
  samples           INTEGER NOT NULL CHECK (samples >= 0),  -- samples these sums cover
  cpu_ns            INTEGER NOT NULL CHECK (cpu_ns >= 0),   -- wall time x online CPUs, ns
  interrupt_ns      INTEGER NOT NULL CHECK (interrupt_ns >= 0),  -- sum of each sample's estimated cost
  interrupt_ci95_ns INTEGER NOT NULL CHECK (interrupt_ci95_ns >= 0),  -- sum of its 95 % half-widths
  daemon_ns         INTEGER NOT NULL CHECK (daemon_ns >= 0),  -- lcpid's own CPU, its threads
  module_samples    INTEGER NOT NULL DEFAULT 0 CHECK (module_samples >= 0),  -- lcpi.ko timed these
  module_handler_ns INTEGER NOT NULL DEFAULT 0 CHECK (module_handler_ns >= 0)  -- in its handler
);

-- lcpid's own pid in each window: the reports file its samples under
-- "[lcpi: observer]" (docs/tools.md). A rollup keeps every pid it merged.
CREATE TABLE observer_pids (
  epoch_id INTEGER NOT NULL REFERENCES epochs (id),
  pid      INTEGER NOT NULL CHECK (pid > 0),
  PRIMARY KEY (epoch_id, pid)
) WITHOUT ROWID;
