-- 005_process_cgroups.sql - each process row carries its process's cgroup.
--
-- lcpid reads /proc/PID/cgroup when a process execs (and at its /proc scan)
-- and files the path with the process's counts; the tools turn it into the
-- labels operators use (the systemd unit, a container's id, a pod's uid:
-- libprofile/base/cgroup_label.h) and group and filter by them. The paths
-- are kept once each in `cgroups` (a kubepods path is over 200 bytes, and a
-- window has up to --max-processes pids times their images and events);
-- process_counts names one by id, 0 for none (not read, refused, or a row
-- merged before this migration). Rows unused after a drop are deleted.
CREATE TABLE cgroups (
  id   INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE CHECK (path <> '')
);

-- The cgroup is part of the key: the rolled-up rows (pid -1, one per
-- command) stay apart per cgroup, so a label filter keeps its processes
-- past --max-processes too. SQLite cannot change a primary key in place:
-- the table is rebuilt as 002 did for images.
CREATE TABLE process_counts_new (
  epoch_id  INTEGER NOT NULL REFERENCES epochs (id),
  pid       INTEGER NOT NULL,
  comm      TEXT NOT NULL,
  cgroup_id INTEGER NOT NULL DEFAULT 0,  -- cgroups.id; 0: not known
  image_id  INTEGER NOT NULL REFERENCES images (id),
  event_id  INTEGER NOT NULL REFERENCES events (id),
  count     INTEGER NOT NULL CHECK (count >= 0),
  PRIMARY KEY (epoch_id, pid, comm, cgroup_id, image_id, event_id)
) WITHOUT ROWID;
INSERT INTO process_counts_new (epoch_id, pid, comm, cgroup_id, image_id, event_id, count)
  SELECT epoch_id, pid, comm, 0, image_id, event_id, count FROM process_counts;
DROP TABLE process_counts;
ALTER TABLE process_counts_new RENAME TO process_counts;
