-- D1 migration 0008: a new post's words go into its own row, and into the
-- index of words 64 posts at a time (schema.sql, `words_mark`): FTS5 writes
-- a segment per transaction, which cost a create six pages more than its
-- post. Every post older than this file is the index's to hold (0007, and
-- `needhave d1-words` for those it lacks), so the mark starts at the newest.
ALTER TABLE posts ADD COLUMN words TEXT;
CREATE TABLE IF NOT EXISTS words_mark (
  upto INTEGER NOT NULL
);
INSERT INTO words_mark (upto) SELECT coalesce(max(rowid), 0) FROM posts
  WHERE NOT EXISTS (SELECT 1 FROM words_mark);
