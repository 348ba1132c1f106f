-- D1 migration 0009: the index of words writes leaves of 64 bytes, not
-- FTS5's 4,050 (schema.sql, `post_words`; store::WORDS_LEAF). FTS5 moves
-- a word's list to a page's cursor in one seek only through a doclist
-- index, which it writes for a list spanning four leaves or more; with
-- small leaves a common word's list has one in every segment but the
-- smallest, so a deep page no longer steps through the newest posts one
-- at a time (docs/finding.md, "Deep pages"). A setting FTS5 keeps in
-- post_words_config: segments written before it keep their leaves until
-- FTS5 merges them.
INSERT INTO post_words (post_words, rank) VALUES ('pgsz', 64);
