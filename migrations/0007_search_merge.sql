-- D1 migration 0007: the index of words merges any level of two segments
-- or more when asked to merge ('merge' with a positive count; FTS5's
-- default is four), so a merge leaves at most one segment a level. Kept
-- in the file, as FTS5 keeps its settings. Native files get the same on
-- open (needhave/src/store/migrate.rs), where the server's writer merges
-- in the moments no write waits (docs/finding.md, "Figures").
INSERT INTO post_words (post_words, rank) VALUES ('usermerge', 2);
