-- D1 migration 0012: the index of words in two parts, so that a post of
-- words no other note holds stays within the disk bound
-- (docs/design/search-index.md, "Two parts: hot and cold"). post_words, the hot part, is made again without prefix
-- lists: it holds each moved post's kind's term and every prefix of its
-- words that is hot (hot_prefixes: shared by enough posts), each a term of
-- its own. post_cold, the cold part, holds every moved post's words
-- exactly, for a query word that is not hot. Both are derived data:
-- `needhave d1-words` counts the hot set of the posts older than this file
-- and fills both parts (docs/finding.md, "Upgrading a database"). Until it
-- has run, those posts are listed but not found by words, and the move
-- out of `words_new` waits (words_filling): a prefix d1-words counts hot
-- must reach every post moved before it. New posts are found all along,
-- in `words_new`; its file's last statement lets the move go on, and the
-- move finds the waiting posts' hot prefixes itself
-- (store::hot_cold::BEHIND).
DROP TABLE IF EXISTS post_words;
CREATE VIRTUAL TABLE post_words USING fts5 (
  words, content = '', columnsize = 0, detail = none, tokenize = 'ascii'
);
-- Leaves as 0009 and 0011 set them: 64 bytes from 10,000 posts.
INSERT INTO post_words (post_words, rank)
SELECT 'pgsz', CASE WHEN coalesce((SELECT max(rowid) FROM posts), 0) >= 10000 THEN 64 ELSE 4050 END;
CREATE VIRTUAL TABLE IF NOT EXISTS post_cold USING fts5 (
  words, content = '', columnsize = 0, detail = none, tokenize = 'ascii'
);
CREATE TABLE IF NOT EXISTS hot_prefixes (p TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS words_filling (one INTEGER PRIMARY KEY CHECK (one = 1));
INSERT OR IGNORE INTO words_filling (one) SELECT 1
WHERE EXISTS (SELECT 1 FROM posts WHERE rowid NOT IN (SELECT post FROM words_new));
CREATE TABLE IF NOT EXISTS hot_fresh (p TEXT PRIMARY KEY) WITHOUT ROWID;
ALTER TABLE words_new ADD COLUMN tokens TEXT;
ALTER TABLE words_new ADD COLUMN candidates TEXT;
ALTER TABLE words_new ADD COLUMN version INTEGER;
ALTER TABLE words_new ADD COLUMN cold TEXT;
-- The move of 64 posts' words into the index, run by the insert that
-- makes 64 (the statements of store::hot_cold, in order; a test checks
-- this text against them).
CREATE TRIGGER IF NOT EXISTS words_move AFTER INSERT ON words_new
WHEN (SELECT count(*) FROM words_new) >= 64 AND NOT EXISTS (SELECT 1 FROM words_filling) BEGIN
UPDATE words_new SET tokens = tokens || coalesce((SELECT group_concat(' ' || h.p, '') FROM hot_prefixes h WHERE h.rowid > words_new.version AND instr(' ' || CASE substr(words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || replace(words, ' ', ' ' || CASE substr(words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END), ' ' || h.p) > 0), ''), version = (SELECT max(rowid) FROM hot_prefixes) WHERE tokens IS NOT NULL AND version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) AND version >= (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64;
UPDATE words_new SET tokens = CASE substr(words_new.words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || substr(words_new.words, 1, instr(words_new.words || ' ', ' ') - 1) || coalesce((SELECT group_concat(CASE WHEN y.d >= 2 THEN ' ' || substr(y.v, 1, 2) ELSE '' END || CASE WHEN y.d >= 3 THEN ' ' || substr(y.v, 1, 3) ELSE '' END || CASE WHEN y.d >= 4 THEN ' ' || substr(y.v, 1, 4) ELSE '' END || CASE WHEN y.d >= 5 THEN ' ' || substr(y.v, 1, 5) ELSE '' END || CASE WHEN y.d >= 6 THEN ' ' || substr(y.v, 1, 6) ELSE '' END || CASE WHEN y.d >= 7 THEN ' ' || substr(y.v, 1, 7) ELSE '' END || CASE WHEN y.d >= 8 THEN ' ' || substr(y.v, 1, 8) ELSE '' END || CASE WHEN y.d >= 9 THEN ' ' || substr(y.v, 1, 9) ELSE '' END, '') FROM (SELECT x.v AS v, CASE WHEN x.s IS NULL THEN 0 WHEN substr(x.v, 1, length(x.s)) = x.s THEN length(x.s) WHEN substr(x.s, 1, 8) = substr(x.v, 1, 8) THEN 8 WHEN substr(x.s, 1, 7) = substr(x.v, 1, 7) THEN 7 WHEN substr(x.s, 1, 6) = substr(x.v, 1, 6) THEN 6 WHEN substr(x.s, 1, 5) = substr(x.v, 1, 5) THEN 5 WHEN substr(x.s, 1, 4) = substr(x.v, 1, 4) THEN 4 WHEN substr(x.s, 1, 3) = substr(x.v, 1, 3) THEN 3 WHEN substr(x.s, 1, 2) = substr(x.v, 1, 2) THEN 2 ELSE 0 END AS d FROM (SELECT w.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= w.v ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT CASE substr(words_new.words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || j.value AS v FROM json_each('["' || replace(substr(words_new.words, instr(words_new.words || ' ', ' ') + 1), ' ', '","') || '"]') j WHERE j.value <> '') w LIMIT -1) x LIMIT -1) y), ''), candidates = (SELECT json_group_array(substr(y.v, 1, max(y.d, 1) + 1)) FROM (SELECT x.v AS v, CASE WHEN x.s IS NULL THEN 0 WHEN substr(x.v, 1, length(x.s)) = x.s THEN length(x.s) WHEN substr(x.s, 1, 8) = substr(x.v, 1, 8) THEN 8 WHEN substr(x.s, 1, 7) = substr(x.v, 1, 7) THEN 7 WHEN substr(x.s, 1, 6) = substr(x.v, 1, 6) THEN 6 WHEN substr(x.s, 1, 5) = substr(x.v, 1, 5) THEN 5 WHEN substr(x.s, 1, 4) = substr(x.v, 1, 4) THEN 4 WHEN substr(x.s, 1, 3) = substr(x.v, 1, 3) THEN 3 WHEN substr(x.s, 1, 2) = substr(x.v, 1, 2) THEN 2 ELSE 0 END AS d FROM (SELECT w.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= w.v ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT CASE substr(words_new.words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || j.value AS v FROM json_each('["' || replace(substr(words_new.words, instr(words_new.words || ' ', ' ') + 1), ' ', '","') || '"]') j WHERE j.value <> '') w LIMIT -1) x LIMIT -1) y WHERE max(y.d, 1) + 1 <= min(length(y.v), 9) AND abs(random()) % 16 = 0), version = (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) WHERE tokens IS NULL OR version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64;
INSERT INTO post_cold (rowid, words) SELECT 268435456 - post, coalesce(cold, replace(words, ' ', ' ' || CASE substr(words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END)) FROM words_new ORDER BY post DESC;
INSERT OR IGNORE INTO hot_fresh (p) SELECT c.p FROM (SELECT DISTINCT j.value AS p FROM words_new n, json_each(n.candidates) j WHERE length(j.value) BETWEEN 2 AND 9 AND NOT EXISTS (SELECT 1 FROM hot_prefixes h WHERE h.p = j.value) AND (length(j.value) = 2 OR EXISTS (SELECT 1 FROM hot_prefixes h WHERE h.p = substr(j.value, 1, length(j.value) - 1))) LIMIT 64) c WHERE (SELECT count(*) FROM (SELECT 1 FROM post_cold WHERE post_cold MATCH '"' || c.p || '"*' LIMIT 8)) >= 8;
INSERT INTO post_words (rowid, words) SELECT r, group_concat(t, ' ') FROM (SELECT 268435456 - post AS r, tokens AS t FROM words_new UNION ALL SELECT c.rowid, fresh.p FROM hot_fresh fresh, post_cold c WHERE c.post_cold MATCH ('"' || fresh.p || '"*')) GROUP BY r ORDER BY r;
INSERT INTO hot_prefixes (p) SELECT p FROM hot_fresh ORDER BY p;
DELETE FROM hot_fresh;
DELETE FROM words_new;
END;
