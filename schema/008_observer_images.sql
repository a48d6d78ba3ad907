-- 008_observer_images.sql - lcpid's own executable per window, by image
-- identity (review round 15, finding 5): the reports file that image's
-- samples under "[lcpi: observer]" by identity, never by a file's name (a
-- user's ~/bin/lcpid is someone else's program). Windows written before
-- this migration have no row: there lcpid's executable is not matched at
-- all (docs/tools.md, "The observer line"). Identities are content-based
-- (image_id.h), so a rollup keeps the union of its windows'.
CREATE TABLE observer_images (
  epoch_id INTEGER NOT NULL REFERENCES epochs (id),
  identity TEXT NOT NULL CHECK (length(identity) > 0),
  PRIMARY KEY (epoch_id, identity)
) WITHOUT ROWID;
