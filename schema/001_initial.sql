-- 001_initial.sql - the first lcpi profile database schema.
--
-- Migrations are the numbered files NNN_name.sql in this folder. They are
-- compiled into libprofile (schema/embed.cmake) and applied in order by
-- ProfileDb::Open in read-write mode, each inside the same transaction that
-- sets PRAGMA user_version = NNN, so a database is at one version or the
-- previous one, never in between. Never edit a published migration: add the
-- next number instead. Do not set user_version or application_id here; the
-- runner owns them.
--
-- Counts are the bulk of the data: they use WITHOUT ROWID tables whose
-- primary key is the lookup key, with small integer ids for images, events
-- and epochs, so a row is a few varints and the key order is the order the
-- tools read (one image, one event, offsets ascending).

-- A profiling period. The daemon merges into the newest epoch; lcpictl starts
-- a new one (optionally tagged, e.g. "before-upgrade") so runs can be compared.
CREATE TABLE epochs (
  id      INTEGER PRIMARY KEY,
  tag     TEXT UNIQUE,                   -- NULL: untagged; never all digits
  started INTEGER NOT NULL,              -- unix seconds
  ended   INTEGER                        -- NULL while current
);

-- An executable image, identified by content, not by path: a binary replaced
-- on disk gets a new row and old profiles stay attributable to the old one.
CREATE TABLE images (
  id         INTEGER PRIMARY KEY,
  identity   TEXT NOT NULL UNIQUE,       -- "build-id:<hex>", "elf-hash:<hex>",
                                         -- "kernel:<build-id>", "unknown:<comm>"
  path       TEXT NOT NULL,              -- last path seen; a hint for the tools
  kind       TEXT NOT NULL CHECK (kind IN ('user', 'kernel', 'module', 'unknown')),
  first_seen INTEGER NOT NULL            -- unix seconds
);

-- A sampled event: the name the user asked for ("cycles") and what this host
-- really sampled ("cpu-clock" after a fallback), with its mean period.
CREATE TABLE events (
  id     INTEGER PRIMARY KEY,
  name   TEXT NOT NULL UNIQUE,
  used   TEXT NOT NULL,
  period INTEGER NOT NULL CHECK (period >= 0)
);

-- The profile: per epoch, image and event, file offset in the image (kernel:
-- offset from _text) -> samples.
CREATE TABLE counts (
  epoch_id     INTEGER NOT NULL REFERENCES epochs (id),
  image_id     INTEGER NOT NULL REFERENCES images (id),
  event_id     INTEGER NOT NULL REFERENCES events (id),
  image_offset INTEGER NOT NULL CHECK (image_offset >= 0),
  count        INTEGER NOT NULL CHECK (count >= 0),
  PRIMARY KEY (epoch_id, image_id, event_id, image_offset)
) WITHOUT ROWID;

-- Per-process totals, for "which processes ran this image" summaries.
CREATE TABLE process_counts (
  epoch_id INTEGER NOT NULL REFERENCES epochs (id),
  pid      INTEGER NOT NULL,
  comm     TEXT NOT NULL,
  image_id INTEGER NOT NULL REFERENCES images (id),
  event_id INTEGER NOT NULL REFERENCES events (id),
  count    INTEGER NOT NULL CHECK (count >= 0),
  PRIMARY KEY (epoch_id, pid, comm, image_id, event_id)
) WITHOUT ROWID;

-- Daemon statistics (samples, hits, misses, lost, unknown, ...), summed over
-- the merges of an epoch.
CREATE TABLE stats (
  epoch_id INTEGER NOT NULL REFERENCES epochs (id),
  name     TEXT NOT NULL,
  value    INTEGER NOT NULL,
  PRIMARY KEY (epoch_id, name)
) WITHOUT ROWID;

-- Symbols of images users cannot read as ELF files (the kernel, modules),
-- stored by the daemon so the tools can symbolize without root. An image is
-- identified by content, so its symbols never change once stored.
-- The key columns come first, in key order, as in every WITHOUT ROWID table
-- here: SQLite 3.40's integrity_check reports false "NULL value in ..."
-- findings for a non-key column declared before a key column.
CREATE TABLE symbols (
  image_id     INTEGER NOT NULL REFERENCES images (id),
  image_offset INTEGER NOT NULL CHECK (image_offset >= 0),
  name         TEXT NOT NULL,
  size         INTEGER NOT NULL CHECK (size >= 0),
  PRIMARY KEY (image_id, image_offset, name)
) WITHOUT ROWID;
