-- 004_event_times.sql - time enabled and running per epoch and event, and
-- the precise_ip an event was opened with.
--
-- A PMU with fewer counters than events time-shares them (multiplexing): an
-- event then counts only while it runs, and its samples undercount by
-- running/enabled. lcpid adds each merge's share of both times (ns, summed
-- over CPUs) here; reports scale an event's counts by enabled/running and
-- say so. 0 and 0 is "not known" (epochs merged before this migration):
-- such counts are shown as stored, unscaled.
ALTER TABLE epoch_events ADD COLUMN time_enabled INTEGER NOT NULL DEFAULT 0
  CHECK (time_enabled >= 0);
ALTER TABLE epoch_events ADD COLUMN time_running INTEGER NOT NULL DEFAULT 0
  CHECK (time_running >= 0);
-- perf_event_attr.precise_ip the event was opened with (0..3; 0: it may
-- skid, and the only value for software events and older epochs).
ALTER TABLE epoch_events ADD COLUMN precise INTEGER NOT NULL DEFAULT 0
  CHECK (precise BETWEEN 0 AND 3);
