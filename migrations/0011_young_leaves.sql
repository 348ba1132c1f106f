-- D1 migration 0011: a list of fewer than 10,000 posts writes its index of
-- words in FTS5's own leaves (4,050 bytes); the create that brings it to
-- 10,000 sets the leaves of 0009 (store::SMALL_LEAVES). Small leaves
-- are for deep pages, which a list that small does not have (a 100th page
-- needs 9,901 posts); what they cost is a row of post_words_data a leaf,
-- about twice the bytes for a word no other note holds, and in a young
-- list most words are new to it, so its posts cost more on disk than the
-- bound allows (docs/design/search-costs.md, "The disk bound"). A setting, as 0009's:
-- segments written before it keep their leaves until FTS5 merges them.
INSERT INTO post_words (post_words, rank)
SELECT 'pgsz', 4050 WHERE coalesce((SELECT max(rowid) FROM posts), 0) < 10000;
