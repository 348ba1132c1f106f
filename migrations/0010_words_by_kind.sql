-- D1 migration 0010: every term of a post's words begins with its kind's
-- mark (schema.sql, `post_words`), so that a search of one kind reads that
-- kind's lists alone: a kind and a word whose posts never meet were two
-- lists walked to their ends before the answer "none"
-- (docs/design/search-index.md, "What a note is indexed as"). The index is derived data: it is made again, with
-- prefix lists one character longer (the mark is the first) and the leaf
-- size of 0009, and `needhave d1-words` fills it (docs/finding.md,
-- "Upgrading a database"). Until it has run, posts older than this file
-- are listed but not found by words; the words waiting in `words_new` are
-- moved with their marks by the Worker of this release.
DROP TABLE IF EXISTS post_words;
CREATE VIRTUAL TABLE post_words USING fts5 (
  words, content = '', columnsize = 0, detail = none,
  tokenize = 'ascii', prefix = '2 3 4 5 6 7 8 9'
);
INSERT INTO post_words (post_words, rank) VALUES ('pgsz', 64);
