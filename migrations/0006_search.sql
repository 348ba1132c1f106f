-- D1 migration 0006: finding posts by kind and by words.
-- The words of old posts cannot be computed in SQL (NFKC, and the pairs of
-- characters of Chinese, Japanese and Thai): after this file, run the
-- back-fill `needhave d1-words` (docs/finding.md). New posts get their words
-- in the batch that inserts them.
CREATE INDEX IF NOT EXISTS posts_kind ON posts (kind);
CREATE VIRTUAL TABLE IF NOT EXISTS post_words USING fts5 (
  words, content = '', columnsize = 0, detail = none,
  tokenize = 'ascii', prefix = '1 2 3 4 5 6 7 8'
);
