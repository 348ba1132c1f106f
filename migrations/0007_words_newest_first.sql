-- D1 migration 0007: the index of words holds each post under its row
-- number reversed (268435456 - rowid), so that a page, newest first, is
-- FTS5's own rising order (docs/design/search-index.md, "Newest first:
-- row numbers reversed").
-- The index of 0006 held the
-- row numbers as they are; it is derived data, so it is made again: after
-- this file, run the back-fill `needhave d1-words` (docs/finding.md), which
-- writes every post's words under the new numbers. Until it has run, posts
-- older than this file are listed but not found by words.
DROP TABLE IF EXISTS post_words;
CREATE VIRTUAL TABLE post_words USING fts5 (
  words, content = '', columnsize = 0, detail = none,
  tokenize = 'ascii', prefix = '1 2 3 4 5 6 7 8'
);
