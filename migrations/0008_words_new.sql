-- D1 migration 0008: a new post's words wait in a small table and go into
-- the index of words 64 posts at a time (schema.sql, `words_new`): FTS5
-- writes a segment per transaction, which cost a create six pages more
-- than its post. Every post older than this file is the index's to hold
-- (0007, and `needhave d1-words` for those it lacks).
CREATE TABLE IF NOT EXISTS words_new (
  post  INTEGER PRIMARY KEY,
  words TEXT    NOT NULL
);
