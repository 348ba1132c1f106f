-- D1 migration 0014: the hot set keeps prefixes of up to a hundred
-- characters after the kind's mark (rules::hot::DEEPEST) where it kept
-- eight, so that a query word that many notes' words begin with has a list
-- of its own in the hot part however long it is, rather than a merge of
-- every such post in the cold part (docs/finding.md, "The index"). The
-- move is written again: it finds prefixes that deep, writes them as
-- terms, and promotes them. The index is kept and stays searchable: a
-- prefix of more than eight characters is promoted as new posts offer it,
-- and the move writes it for every moved post that holds it, as any
-- promotion does.
--
-- The duplicate key and the words fold case further (rules::key::fold:
-- the Greek final sigma is sigma, the Turkish dotted capital I is i). SQL
-- cannot compute either: `needhave d1-keys` gives the posts whose notes
-- hold one of the characters that changes (rules::key::REFOLDED) their
-- new key's digest, and `needhave d1-words` their words as the new fold
-- reads them, beside the ones they had (docs/finding.md, "Upgrading a
-- database").
DROP TRIGGER IF EXISTS words_move;
-- The move of 64 posts' words into the index, run by the insert that
-- makes 64 (the statements of store::hot_cold, in order; a test checks
-- this text against them).
CREATE TRIGGER IF NOT EXISTS words_move AFTER INSERT ON words_new
WHEN (SELECT count(*) FROM words_new) >= 64 AND NOT EXISTS (SELECT 1 FROM words_filling) BEGIN
UPDATE words_new SET words = (SELECT group_concat(CASE WHEN substr(j.value, 1, 1) = '~' THEN substr(j.value, k.key + 2, 2) ELSE j.value END, ' ') FROM json_each('["' || replace(words, ' ', '","') || '"]') j, json_each('[' || replace(hex(zeroblob(CASE WHEN substr(j.value, 1, 1) = '~' THEN length(j.value) - 3 ELSE 0 END)), '00', '0,') || '0]') k) WHERE instr(words, '~') > 0;
UPDATE words_new SET tokens = tokens || coalesce((SELECT group_concat(' ' || h.p, '') FROM hot_prefixes h WHERE h.rowid > words_new.version AND instr(' ' || CASE substr(words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || replace(words, ' ', ' ' || CASE substr(words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END), ' ' || h.p) > 0), ''), version = (SELECT max(rowid) FROM hot_prefixes) WHERE tokens IS NOT NULL AND version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) AND version >= (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64;
UPDATE words_new SET tokens = CASE substr(words_new.words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || substr(words_new.words, 1, instr(words_new.words || ' ', ' ') - 1) || coalesce((SELECT group_concat(CASE WHEN y.d >= 2 THEN ' ' || substr(y.v, 1, 2) ELSE '' END || CASE WHEN y.d >= 3 THEN ' ' || substr(y.v, 1, 3) ELSE '' END || CASE WHEN y.d >= 4 THEN ' ' || substr(y.v, 1, 4) ELSE '' END || CASE WHEN y.d >= 5 THEN ' ' || substr(y.v, 1, 5) ELSE '' END || CASE WHEN y.d >= 6 THEN ' ' || substr(y.v, 1, 6) ELSE '' END || CASE WHEN y.d >= 7 THEN ' ' || substr(y.v, 1, 7) ELSE '' END || CASE WHEN y.d >= 8 THEN ' ' || substr(y.v, 1, 8) ELSE '' END || CASE WHEN y.d >= 9 THEN ' ' || substr(y.v, 1, 9) ELSE '' END || CASE WHEN y.d >= 10 THEN (SELECT group_concat(' ' || substr(y.v, 1, k.key + 10), '') FROM json_each('[' || replace(hex(zeroblob(y.d - 10)), '00', '0,') || '0]') k) ELSE '' END, '') FROM (SELECT x.v AS v, CASE WHEN x.s IS NULL THEN 0 WHEN substr(x.v, 1, length(x.s)) = x.s THEN length(x.s) WHEN substr(x.s, 1, 9) = substr(x.v, 1, 9) THEN (SELECT max(k.key) + 9 FROM json_each('[' || replace(hex(zeroblob(min(length(x.s), length(x.v)) - 9)), '00', '0,') || '0]') k WHERE substr(x.s, 1, k.key + 9) = substr(x.v, 1, k.key + 9)) WHEN substr(x.s, 1, 8) = substr(x.v, 1, 8) THEN 8 WHEN substr(x.s, 1, 7) = substr(x.v, 1, 7) THEN 7 WHEN substr(x.s, 1, 6) = substr(x.v, 1, 6) THEN 6 WHEN substr(x.s, 1, 5) = substr(x.v, 1, 5) THEN 5 WHEN substr(x.s, 1, 4) = substr(x.v, 1, 4) THEN 4 WHEN substr(x.s, 1, 3) = substr(x.v, 1, 3) THEN 3 WHEN substr(x.s, 1, 2) = substr(x.v, 1, 2) THEN 2 ELSE 0 END AS d FROM (SELECT w.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= w.v ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT CASE substr(words_new.words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || j.value AS v FROM json_each('["' || replace(substr(words_new.words, instr(words_new.words || ' ', ' ') + 1), ' ', '","') || '"]') j WHERE j.value <> '') w LIMIT -1) x LIMIT -1) y), ''), candidates = (SELECT json_group_array(substr(y.v, 1, max(y.d, 1) + 1)) FROM (SELECT x.v AS v, CASE WHEN x.s IS NULL THEN 0 WHEN substr(x.v, 1, length(x.s)) = x.s THEN length(x.s) WHEN substr(x.s, 1, 9) = substr(x.v, 1, 9) THEN (SELECT max(k.key) + 9 FROM json_each('[' || replace(hex(zeroblob(min(length(x.s), length(x.v)) - 9)), '00', '0,') || '0]') k WHERE substr(x.s, 1, k.key + 9) = substr(x.v, 1, k.key + 9)) WHEN substr(x.s, 1, 8) = substr(x.v, 1, 8) THEN 8 WHEN substr(x.s, 1, 7) = substr(x.v, 1, 7) THEN 7 WHEN substr(x.s, 1, 6) = substr(x.v, 1, 6) THEN 6 WHEN substr(x.s, 1, 5) = substr(x.v, 1, 5) THEN 5 WHEN substr(x.s, 1, 4) = substr(x.v, 1, 4) THEN 4 WHEN substr(x.s, 1, 3) = substr(x.v, 1, 3) THEN 3 WHEN substr(x.s, 1, 2) = substr(x.v, 1, 2) THEN 2 ELSE 0 END AS d FROM (SELECT w.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= w.v ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT CASE substr(words_new.words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || j.value AS v FROM json_each('["' || replace(substr(words_new.words, instr(words_new.words || ' ', ' ') + 1), ' ', '","') || '"]') j WHERE j.value <> '') w LIMIT -1) x LIMIT -1) y WHERE max(y.d, 1) + 1 <= min(length(y.v), 101) AND abs(random()) % 16 = 0), version = (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) WHERE tokens IS NULL OR version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64;
INSERT INTO post_cold (rowid, words) SELECT 268435456 - post, coalesce(cold, replace(words, ' ', ' ' || CASE substr(words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END)) FROM words_new ORDER BY post DESC;
INSERT OR IGNORE INTO hot_fresh (p) SELECT c.p FROM (SELECT DISTINCT j.value AS p FROM words_new n, json_each(n.candidates) j WHERE length(j.value) BETWEEN 2 AND 101 AND NOT EXISTS (SELECT 1 FROM hot_prefixes h WHERE h.p = j.value) AND (length(j.value) = 2 OR EXISTS (SELECT 1 FROM hot_prefixes h WHERE h.p = substr(j.value, 1, length(j.value) - 1))) LIMIT 64) c WHERE (SELECT count(*) FROM (SELECT 1 FROM post_cold WHERE post_cold MATCH '"' || c.p || '"*' LIMIT 8)) >= 8;
INSERT INTO post_words (rowid, words) SELECT r, group_concat(t, ' ') FROM (SELECT 268435456 - post AS r, tokens AS t FROM words_new UNION ALL SELECT c.rowid, fresh.p FROM hot_fresh fresh, post_cold c WHERE c.post_cold MATCH ('"' || fresh.p || '"*')) GROUP BY r ORDER BY r;
INSERT INTO hot_prefixes (p) SELECT p FROM hot_fresh ORDER BY p;
DELETE FROM hot_fresh;
DELETE FROM words_new;
END;
