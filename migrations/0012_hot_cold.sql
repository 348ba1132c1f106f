-- D1 migration 0012: the index of words in two parts, so that a post of
-- words no other note holds stays within the disk bound (docs/finding.md,
-- "An index that fits the bound"). post_words keeps every moved post's
-- words with every prefix list, and becomes the hot part: a post moved
-- from now on writes there only its words' hot prefixes (store::hot_cold).
-- post_cold holds every moved post's words exactly, for a query word no
-- list of its own answers; the posts moved before this migration get
-- theirs from `needhave d1-words` (the native upgrade writes them itself).
-- words_full_until says up to which post post_words holds every prefix.
CREATE VIRTUAL TABLE IF NOT EXISTS post_cold USING fts5 (
  words, content = '', columnsize = 0, detail = none, tokenize = 'ascii'
);
CREATE TABLE IF NOT EXISTS hot_prefixes (p TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS hot_fresh (p TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS words_full_until (post INTEGER NOT NULL);
INSERT INTO words_full_until (post)
SELECT coalesce((SELECT min(post) FROM words_new) - 1, (SELECT max(rowid) FROM posts), 0)
WHERE NOT EXISTS (SELECT 1 FROM words_full_until);
ALTER TABLE words_new ADD COLUMN tokens TEXT;
ALTER TABLE words_new ADD COLUMN candidates TEXT;
ALTER TABLE words_new ADD COLUMN version INTEGER;
ALTER TABLE words_new ADD COLUMN cold TEXT;
