-- 002_jit_images.sql - a fifth kind of image, 'jit': code a JIT runtime
-- (Node.js, a JVM, ...) wrote into anonymous memory and named in perf's map
-- file /tmp/perf-PID.map. One image per process; its offsets are the
-- process's addresses and its names are stored in `symbols`, since the map
-- file goes with the process.
--
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt
-- as https://sqlite.org/lang_altertable.html#otheralter describes (the
-- runner turns foreign keys off around migrations; the rows of `counts`,
-- `process_counts` and `symbols` keep referring to the same ids).
CREATE TABLE images_new (
  id         INTEGER PRIMARY KEY,
  identity   TEXT NOT NULL UNIQUE,       -- "build-id:<hex>", "elf-hash:<hex>",
                                         -- "kernel:<build-id>", "unknown:<comm>",
                                         -- "jit:<boot-id>:<pid>:<start-ticks>"
  path       TEXT NOT NULL,              -- last path seen; a hint for the tools
  kind       TEXT NOT NULL CHECK (kind IN ('user', 'kernel', 'module', 'unknown', 'jit')),
  first_seen INTEGER NOT NULL            -- unix seconds
);
INSERT INTO images_new (id, identity, path, kind, first_seen)
  SELECT id, identity, path, kind, first_seen FROM images;
DROP TABLE images;
ALTER TABLE images_new RENAME TO images;
