-- 003_windows.sql - time windows, and event facts per epoch.
--
-- lcpid now closes a time window on its own (lcpid --window): each window
-- is an epochs row of kind 'window'. `lcpictl epoch [TAG]` still starts a
-- row of kind 'epoch', which opens a span: a tag names its epoch and the
-- windows that follow it, up to the next 'epoch' row. Every epoch of a
-- database older than this migration is an 'epoch' (a span of its own), as
-- it was.
ALTER TABLE epochs ADD COLUMN kind TEXT NOT NULL DEFAULT 'epoch'
  CHECK (kind IN ('epoch', 'window'));

-- The tools select windows by time.
CREATE INDEX epochs_by_start ON epochs (started);

-- What each event was in each epoch: the name asked for is the events row;
-- what was really sampled and the mean period are kept here per epoch, so an
-- old window keeps its own period after the configuration changed (events
-- keeps the newest, as before). Epochs merged before this migration have no
-- rows here: their facts are the events row's.
CREATE TABLE epoch_events (
  epoch_id INTEGER NOT NULL REFERENCES epochs (id),
  event_id INTEGER NOT NULL REFERENCES events (id),
  used     TEXT NOT NULL,
  period   INTEGER NOT NULL CHECK (period >= 0),
  PRIMARY KEY (epoch_id, event_id)
) WITHOUT ROWID;
