-- 006_stacks.sql - call stacks, deduplicated, counted per window.
--
-- lcpid takes call stacks at a rate of their own (--stack-frequency) and
-- keeps each distinct stack once: `stacks` holds its frames, `stack_counts`
-- how many samples each window (epoch row) took of it. A stack's frames are
-- one blob (libprofile/store/stack_codec.h): its end reason, then per frame,
-- leaf first, the image id and the offset as varints. The id is a hash of
-- the blob (a collision probes id + 1, ...), so a stack seen in many
-- windows costs one row and each window eight bytes of key and its count.
-- Tools older than this schema refuse the file (a newer schema), as for 005.
CREATE TABLE stacks (
  id     INTEGER PRIMARY KEY,
  frames BLOB NOT NULL CHECK (length(frames) > 1)
);

CREATE TABLE stack_counts (
  epoch_id INTEGER NOT NULL REFERENCES epochs (id),
  stack_id INTEGER NOT NULL REFERENCES stacks (id),
  count    INTEGER NOT NULL CHECK (count >= 0),
  PRIMARY KEY (epoch_id, stack_id)
) WITHOUT ROWID;
