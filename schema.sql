-- Needhave: the one schema, for D1 and for SQLite alike.
-- Insert-only: rows are never updated or deleted; a decision is a new row.
-- Every statement here is idempotent, so applying it again is harmless.
-- This is the fresh schema; migrations/ takes a database of an earlier
-- release here (D1: `wrangler d1 migrations apply`; natively
-- needhave/src/store/migrate.rs, on open). A test checks both give the same.

CREATE TABLE IF NOT EXISTS posts (
  id          TEXT    PRIMARY KEY,                          -- 16 random bytes, hex
  kind        TEXT    NOT NULL CHECK (kind IN ('need', 'have')),
  note        TEXT    NOT NULL,                             -- trimmed
  secret_hash TEXT    NOT NULL,                             -- SHA-256 hex of the post secret
  ip_hash     TEXT    NOT NULL,                             -- salted SHA-256 of the client IP
  created_at  INTEGER NOT NULL,                             -- Unix ms
  -- The normalized duplicate key (rules::note_key) as rows older than its
  -- digest kept it; NULL on every newer row and after the upgrade
  -- (see migrations/): a key can be 18 times its note.
  note_key    TEXT,
  -- SHA-256 hex of the normalized duplicate key: what the duplicate rule
  -- compares. NULL only on an old row whose key an older row holds.
  note_key_hash TEXT,
  -- Salted SHA-256 of the client's site (its IPv6 /48); NULL for IPv4.
  site_hash   TEXT,
  -- Unix ms at which the post ends by itself, chosen at its creation
  -- (`expires_in`); NULL: never (every post older than migrations/0014).
  expires_at  INTEGER
);

-- The duplicate rule, on the normalized key's digest; also what a
-- concurrent duplicate runs into.
CREATE UNIQUE INDEX IF NOT EXISTS posts_note_key_hash ON posts (note_key_hash);
-- The same rule on what old rows without a digest hold: their full key,
-- and their note (a D1 database between its migration and
-- `needhave d1-keys`). Partial, so that a new row costs neither index
-- anything: a note over about 1 KB in a full index spills into an
-- overflow page of its own, 4 KB a post.
CREATE UNIQUE INDEX IF NOT EXISTS posts_note_key ON posts (note_key) WHERE note_key IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS posts_note_unkeyed ON posts (note) WHERE note_key_hash IS NULL;
-- The public list, newest first.
CREATE INDEX IF NOT EXISTS posts_newest ON posts (created_at);
-- A page of one kind: kind, then rowid (migrations/0006).
CREATE INDEX IF NOT EXISTS posts_kind ON posts (kind);
-- The index of words, in two parts (docs/design/search-index.md, "Two
-- parts: hot and cold"). This
-- is the hot part: each moved post's kind's term, and every prefix of its
-- words that is hot (hot_prefixes: a kind's mark and one to a hundred
-- characters that enough posts share), each a term of its own, so a query
-- word that is hot reads exactly its own list. Each post is held under its
-- row number reversed (268435456 - rowid), so that newest first is the
-- index's own rising order; every term begins with its post's kind's mark
-- (U+207F need, U+02B0 have), so a search of one kind reads that kind's
-- lists alone. Contentless (the note is in posts), row numbers only
-- (detail = none). Its leaves (FTS5's `pgsz`, a setting rather than
-- schema) are FTS5's own 4,050 bytes until the list holds 10,000 posts
-- (migrations/0011 and 0012, a fresh file's included), then 64 bytes
-- (store::SMALL_LEAVES, in the create that gets there), so that a deep
-- page seeks where it would step. See docs/design/search-index.md for why
-- FTS5, and docs/finding.md for how to export a D1 database that has it.
CREATE VIRTUAL TABLE IF NOT EXISTS post_words USING fts5 (
  words, content = '', columnsize = 0, detail = none, tokenize = 'ascii'
);
-- The words of the newest posts, fewer than 64, that post_words does not
-- hold yet, each under its post's row number (the text post_words would
-- hold). A create writes its post's words here, in its batch; the create
-- that makes 64 moves them all into post_words and deletes them here, so
-- FTS5 writes one segment per 64 posts instead of one per commit (a
-- segment costs a commit six pages; docs/design/search-index.md, "Waiting
-- words and the move"). A search
-- reads these few rows beside the index. Every post is in exactly one of
-- the two.
CREATE TABLE IF NOT EXISTS words_new (
  post  INTEGER PRIMARY KEY,                                -- posts.rowid
  words TEXT    NOT NULL,
  -- The post's hot prefixes and its candidates (a JSON array) from its
  -- writer's copy of the hot set, and that copy's version; NULL when the
  -- writer had none (the move finds them: store::hot_cold).
  tokens     TEXT,
  candidates TEXT,
  version    INTEGER,
  -- What the cold part needs of the post, when much less than its words
  -- (NULL: all of them, marked).
  cold       TEXT
);
-- The cold part of the index of words: every moved post's terms, each
-- begun with its kind's mark, exactly, in FTS5's own leaves and with no
-- prefix list, so that a word no other note holds costs one term. A query
-- word that is not hot merges its terms here (docs/design/search-index.md,
-- "Two parts: hot and cold").
CREATE VIRTUAL TABLE IF NOT EXISTS post_cold USING fts5 (
  words, content = '', columnsize = 0, detail = none, tokenize = 'ascii'
);
-- The hot set: the prefixes (a kind's mark and one to a hundred characters)
-- that are terms of their own in post_words, numbered in the order of
-- promotion; closed under prefixes, and only growing.
CREATE TABLE IF NOT EXISTS hot_prefixes (p TEXT NOT NULL UNIQUE);
-- A row while posts older than the index's two parts wait to be indexed
-- by `needhave d1-words` (migrations/0012): the move waits meanwhile.
CREATE TABLE IF NOT EXISTS words_filling (one INTEGER PRIMARY KEY CHECK (one = 1));
-- A move's promotions while it writes them; empty between moves.
CREATE TABLE IF NOT EXISTS hot_fresh (p TEXT PRIMARY KEY) WITHOUT ROWID;
-- The move of 64 posts' words into the index, run by the insert that
-- makes 64 (the statements of store::hot_cold, in order; a test checks
-- this text against them).
CREATE TRIGGER IF NOT EXISTS words_move AFTER INSERT ON words_new
WHEN (SELECT count(*) FROM words_new) >= 64 AND NOT EXISTS (SELECT 1 FROM words_filling) BEGIN
UPDATE words_new SET words = (SELECT group_concat(CASE WHEN substr(j.value, 1, 1) = '~' THEN substr(j.value, k.key + 2, 2) ELSE j.value END, ' ') FROM json_each('["' || replace(words, ' ', '","') || '"]') j, json_each('[' || replace(hex(zeroblob(CASE WHEN substr(j.value, 1, 1) = '~' THEN length(j.value) - 3 ELSE 0 END)), '00', '0,') || '0]') k) WHERE instr(words, '~') > 0;
UPDATE words_new SET tokens = tokens || coalesce((SELECT group_concat(' ' || h.p, '') FROM hot_prefixes h WHERE h.rowid > words_new.version AND instr(' ' || CASE substr(words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || replace(words, ' ', ' ' || CASE substr(words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END), ' ' || h.p) > 0), ''), version = (SELECT max(rowid) FROM hot_prefixes) WHERE tokens IS NOT NULL AND version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) AND version >= (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64;
UPDATE words_new SET tokens = CASE substr(words_new.words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || substr(words_new.words, 1, instr(words_new.words || ' ', ' ') - 1) || coalesce((SELECT group_concat(CASE WHEN y.d >= 2 THEN ' ' || substr(y.v, 1, 2) ELSE '' END || CASE WHEN y.d >= 3 THEN ' ' || substr(y.v, 1, 3) ELSE '' END || CASE WHEN y.d >= 4 THEN ' ' || substr(y.v, 1, 4) ELSE '' END || CASE WHEN y.d >= 5 THEN ' ' || substr(y.v, 1, 5) ELSE '' END || CASE WHEN y.d >= 6 THEN ' ' || substr(y.v, 1, 6) ELSE '' END || CASE WHEN y.d >= 7 THEN ' ' || substr(y.v, 1, 7) ELSE '' END || CASE WHEN y.d >= 8 THEN ' ' || substr(y.v, 1, 8) ELSE '' END || CASE WHEN y.d >= 9 THEN ' ' || substr(y.v, 1, 9) ELSE '' END || CASE WHEN y.d >= 10 THEN (SELECT group_concat(' ' || substr(y.v, 1, k.key + 10), '') FROM json_each('[' || replace(hex(zeroblob(y.d - 10)), '00', '0,') || '0]') k) ELSE '' END, '') FROM (SELECT x.v AS v, CASE WHEN x.s IS NULL THEN 0 WHEN substr(x.v, 1, length(x.s)) = x.s THEN length(x.s) WHEN substr(x.s, 1, 9) = substr(x.v, 1, 9) THEN (SELECT max(k.key) + 9 FROM json_each('[' || replace(hex(zeroblob(min(length(x.s), length(x.v)) - 9)), '00', '0,') || '0]') k WHERE substr(x.s, 1, k.key + 9) = substr(x.v, 1, k.key + 9)) WHEN substr(x.s, 1, 8) = substr(x.v, 1, 8) THEN 8 WHEN substr(x.s, 1, 7) = substr(x.v, 1, 7) THEN 7 WHEN substr(x.s, 1, 6) = substr(x.v, 1, 6) THEN 6 WHEN substr(x.s, 1, 5) = substr(x.v, 1, 5) THEN 5 WHEN substr(x.s, 1, 4) = substr(x.v, 1, 4) THEN 4 WHEN substr(x.s, 1, 3) = substr(x.v, 1, 3) THEN 3 WHEN substr(x.s, 1, 2) = substr(x.v, 1, 2) THEN 2 ELSE 0 END AS d FROM (SELECT w.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= w.v ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT CASE substr(words_new.words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || j.value AS v FROM json_each('["' || replace(substr(words_new.words, instr(words_new.words || ' ', ' ') + 1), ' ', '","') || '"]') j WHERE j.value <> '') w LIMIT -1) x LIMIT -1) y), ''), candidates = (SELECT json_group_array(substr(y.v, 1, 101)) FROM (SELECT x.v AS v, CASE WHEN x.s IS NULL THEN 0 WHEN substr(x.v, 1, length(x.s)) = x.s THEN length(x.s) WHEN substr(x.s, 1, 9) = substr(x.v, 1, 9) THEN (SELECT max(k.key) + 9 FROM json_each('[' || replace(hex(zeroblob(min(length(x.s), length(x.v)) - 9)), '00', '0,') || '0]') k WHERE substr(x.s, 1, k.key + 9) = substr(x.v, 1, k.key + 9)) WHEN substr(x.s, 1, 8) = substr(x.v, 1, 8) THEN 8 WHEN substr(x.s, 1, 7) = substr(x.v, 1, 7) THEN 7 WHEN substr(x.s, 1, 6) = substr(x.v, 1, 6) THEN 6 WHEN substr(x.s, 1, 5) = substr(x.v, 1, 5) THEN 5 WHEN substr(x.s, 1, 4) = substr(x.v, 1, 4) THEN 4 WHEN substr(x.s, 1, 3) = substr(x.v, 1, 3) THEN 3 WHEN substr(x.s, 1, 2) = substr(x.v, 1, 2) THEN 2 ELSE 0 END AS d FROM (SELECT w.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= w.v ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT CASE substr(words_new.words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END || j.value AS v FROM json_each('["' || replace(substr(words_new.words, instr(words_new.words || ' ', ' ') + 1), ' ', '","') || '"]') j WHERE j.value <> '') w LIMIT -1) x LIMIT -1) y WHERE max(y.d, 1) < min(length(y.v), 101) AND abs(random()) % 16 = 0), version = (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) WHERE tokens IS NULL OR version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64;
INSERT INTO post_cold (rowid, words) SELECT 268435456 - post, coalesce(cold, replace(words, ' ', ' ' || CASE substr(words, 2, 1) WHEN 'n' THEN 'ⁿ' ELSE 'ʰ' END)) FROM words_new ORDER BY post DESC;
INSERT OR IGNORE INTO hot_fresh (p) SELECT p FROM (SELECT substr(c.v, 1, c.d + 1 + k.key) AS p FROM (SELECT y.v AS v, max(y.d, 1) AS d, (SELECT count(*) FROM (SELECT 1 FROM post_cold WHERE post_cold MATCH '"' || y.v || '"*' LIMIT 8)) >= 8 AS whole FROM (SELECT x.v AS v, CASE WHEN x.s IS NULL THEN 0 WHEN substr(x.v, 1, length(x.s)) = x.s THEN length(x.s) WHEN substr(x.s, 1, 9) = substr(x.v, 1, 9) THEN (SELECT max(k.key) + 9 FROM json_each('[' || replace(hex(zeroblob(min(length(x.s), length(x.v)) - 9)), '00', '0,') || '0]') k WHERE substr(x.s, 1, k.key + 9) = substr(x.v, 1, k.key + 9)) WHEN substr(x.s, 1, 8) = substr(x.v, 1, 8) THEN 8 WHEN substr(x.s, 1, 7) = substr(x.v, 1, 7) THEN 7 WHEN substr(x.s, 1, 6) = substr(x.v, 1, 6) THEN 6 WHEN substr(x.s, 1, 5) = substr(x.v, 1, 5) THEN 5 WHEN substr(x.s, 1, 4) = substr(x.v, 1, 4) THEN 4 WHEN substr(x.s, 1, 3) = substr(x.v, 1, 3) THEN 3 WHEN substr(x.s, 1, 2) = substr(x.v, 1, 2) THEN 2 ELSE 0 END AS d FROM (SELECT o.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= o.v ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT DISTINCT j.value AS v FROM words_new n, json_each(n.candidates) j WHERE length(j.value) BETWEEN 2 AND 101 LIMIT 64) o LIMIT -1) x LIMIT -1) y WHERE max(y.d, 1) < length(y.v) AND (SELECT count(*) FROM (SELECT 1 FROM post_cold WHERE post_cold MATCH '"' || substr(y.v, 1, max(y.d, 1) + 1) || '"*' LIMIT 8)) >= 8 LIMIT -1) c, json_each('[' || replace(hex(zeroblob(CASE WHEN c.whole THEN length(c.v) - c.d - 1 ELSE 0 END)), '00', '0,') || '0]') k ORDER BY length(p), p LIMIT 64);
INSERT INTO post_words (rowid, words) SELECT r, group_concat(t, ' ') FROM (SELECT 268435456 - post AS r, tokens AS t FROM words_new UNION ALL SELECT c.rowid, fresh.p FROM hot_fresh fresh, post_cold c WHERE c.post_cold MATCH ('"' || fresh.p || '"*')) GROUP BY r ORDER BY r;
INSERT INTO hot_prefixes (p) SELECT p FROM hot_fresh ORDER BY p;
DELETE FROM hot_fresh;
DELETE FROM words_new;
END;
-- The per-IP create limit.
CREATE INDEX IF NOT EXISTS posts_ip ON posts (ip_hash, created_at);
-- The per-site create limit (IPv6 clients only).
CREATE INDEX IF NOT EXISTS posts_site ON posts (site_hash, created_at) WHERE site_hash IS NOT NULL;

CREATE TABLE IF NOT EXISTS messages (
  id              TEXT    PRIMARY KEY,                      -- 16 random bytes, hex
  post_id         TEXT    NOT NULL REFERENCES posts (id),
  role            TEXT    NOT NULL CHECK (role IN ('first', 'accept', 'later', 'close', 'remove', 'report')),
  parent_id       TEXT    REFERENCES messages (id),         -- accept: the first message; remove: the removed message
  text            TEXT,                                     -- first, later; report: optional
  secret_hash     TEXT,                                     -- first: SHA-256 hex of the reply secret
  thread_key      TEXT,                                     -- accept
  thread_key_hash TEXT,                                     -- accept, later
  ip_hash         TEXT    NOT NULL,                         -- remove: 'operator', no client
  created_at      INTEGER NOT NULL,
  site_hash       TEXT,                                     -- first, later, report: the client's IPv6 /48, salted
  reason          TEXT,                                     -- report: its code; remove: the operator's words
  CHECK (role <> 'first'  OR (text IS NOT NULL AND secret_hash IS NOT NULL
                              AND thread_key IS NULL AND thread_key_hash IS NULL AND parent_id IS NULL
                              AND reason IS NULL)),
  CHECK (role <> 'accept' OR (parent_id IS NOT NULL AND thread_key IS NOT NULL AND thread_key_hash IS NOT NULL
                              AND text IS NULL AND secret_hash IS NULL AND reason IS NULL)),
  CHECK (role <> 'later'  OR (text IS NOT NULL AND thread_key_hash IS NOT NULL AND parent_id IS NULL
                              AND secret_hash IS NULL AND thread_key IS NULL AND reason IS NULL)),
  -- The author's close of the post: who and when, nothing else.
  CHECK (role <> 'close'  OR (text IS NULL AND secret_hash IS NULL AND thread_key IS NULL
                              AND thread_key_hash IS NULL AND parent_id IS NULL AND reason IS NULL)),
  -- The operator's removal of the post (parent_id NULL) or of a message.
  CHECK (role <> 'remove' OR (reason IS NOT NULL AND ip_hash = 'operator' AND site_hash IS NULL
                              AND text IS NULL AND secret_hash IS NULL AND thread_key IS NULL
                              AND thread_key_hash IS NULL)),
  -- Anyone's report of the post.
  CHECK (role <> 'report' OR (reason IS NOT NULL
                              AND reason IN ('spam', 'scam', 'illegal', 'prompt_injection', 'contact_details', 'other')
                              AND parent_id IS NULL AND secret_hash IS NULL AND thread_key IS NULL
                              AND thread_key_hash IS NULL))
);

-- At most one accept per first message (what 8 concurrent accepts run
-- into) and one removal per message. Only accept and remove rows have a
-- parent_id (the CHECKs above), and NULLs are distinct, so a plain unique
-- index says it; being full, and led by parent_id, it also serves the
-- foreign key's lookups (a partial index could not) and "is this message
-- removed".
CREATE UNIQUE INDEX IF NOT EXISTS messages_parent ON messages (parent_id, role);
-- Thread lookup by key.
CREATE UNIQUE INDEX IF NOT EXISTS messages_thread ON messages (thread_key_hash) WHERE role = 'accept';
-- A thread's later messages, most recent first.
CREATE INDEX IF NOT EXISTS messages_later ON messages (thread_key_hash, created_at) WHERE role = 'later';
-- A post's messages by role (waiting list, waiting cap, its close and
-- when); full, so that it also serves the foreign key on post_id.
CREATE INDEX IF NOT EXISTS messages_post ON messages (post_id, role, created_at);
-- The per-IP first-reply limit.
CREATE INDEX IF NOT EXISTS messages_ip ON messages (ip_hash, created_at) WHERE role = 'first';
-- The per-IP thread-message limit (migrations/0003).
CREATE INDEX IF NOT EXISTS messages_later_ip ON messages (ip_hash, created_at) WHERE role = 'later';
-- The per-site first-reply and thread-message limits (IPv6 clients only).
CREATE INDEX IF NOT EXISTS messages_site ON messages (site_hash, created_at) WHERE role = 'first' AND site_hash IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_later_site ON messages (site_hash, created_at) WHERE role = 'later' AND site_hash IS NOT NULL;
-- At most one close per post: what 8 concurrent closes run into.
CREATE UNIQUE INDEX IF NOT EXISTS messages_one_close ON messages (post_id) WHERE role = 'close';
-- At most one removal of a post (a message's: messages_parent); also
-- "is this post removed", one seek.
CREATE UNIQUE INDEX IF NOT EXISTS messages_one_removal ON messages (post_id) WHERE role = 'remove' AND parent_id IS NULL;
-- One report per post and client (a client reporting again is counted
-- once); by post, the reports the operator reads, each client once.
CREATE UNIQUE INDEX IF NOT EXISTS messages_one_report ON messages (post_id, ip_hash) WHERE role = 'report';
-- The per-IP and per-site report limits.
CREATE INDEX IF NOT EXISTS messages_report_ip ON messages (ip_hash, created_at) WHERE role = 'report';
CREATE INDEX IF NOT EXISTS messages_report_site ON messages (site_hash, created_at) WHERE role = 'report' AND site_hash IS NOT NULL;

-- The open posts: an index of the rows, as words_new is (its rows are
-- deleted; no row of posts or messages ever is). Each post gets its row
-- when it is written (posts_open); a close or a removal deletes it in the
-- statement that writes the decision (post_ended); an expired post is
-- left out at read time (expires_at <= now) until the sweep deletes it.
-- The list and its kind pages walk it newest first, so that a page costs
-- what it shows however many posts have ended.
CREATE TABLE IF NOT EXISTS live (
  post       INTEGER PRIMARY KEY,                           -- posts.rowid
  kind       TEXT    NOT NULL,
  expires_at INTEGER                                        -- posts.expires_at
);
-- A page of one kind, newest first; with the expiry, so that an expired
-- post is passed over without reading its row.
CREATE INDEX IF NOT EXISTS live_kind ON live (kind, post, expires_at);
-- The expired posts the sweep has still to take out.
CREATE INDEX IF NOT EXISTS live_expires ON live (expires_at) WHERE expires_at IS NOT NULL;
-- When posts end by themselves: the latest expiry passed and the next
-- one to come, each one seek (the list's version, and how long an answer
-- may be kept).
CREATE INDEX IF NOT EXISTS posts_expires ON posts (expires_at) WHERE expires_at IS NOT NULL;
-- Every close and removal of a post, in order, never deleted: max(n) is
-- the part of the list's version that moves when a post ends by a row.
-- `indexed`: whether the post was still open (in live, hence in the index
-- of words) when it ended, i.e. whether the sweep has work for it.
CREATE TABLE IF NOT EXISTS post_ends (
  n       INTEGER PRIMARY KEY,
  post    INTEGER NOT NULL,                                 -- posts.rowid
  indexed INTEGER NOT NULL
);
-- How far through post_ends the sweep has taken ended posts out of the
-- index of words: one row once it has run.
CREATE TABLE IF NOT EXISTS sweep_mark (
  one  INTEGER PRIMARY KEY CHECK (one = 1),
  ends INTEGER NOT NULL                                     -- post_ends.n
);
-- A new post is open.
CREATE TRIGGER IF NOT EXISTS posts_open AFTER INSERT ON posts BEGIN
INSERT INTO live (post, kind, expires_at) VALUES (NEW.rowid, NEW.kind, NEW.expires_at);
END;
-- A close or a removal of a post ends it, in the statement that writes
-- the decision, whoever writes it (a handler, `needhave remove`, its SQL
-- run with wrangler).
CREATE TRIGGER IF NOT EXISTS post_ended AFTER INSERT ON messages
WHEN NEW.role IN ('close', 'remove') AND NEW.parent_id IS NULL BEGIN
INSERT INTO post_ends (post, indexed)
SELECT p.rowid, EXISTS (SELECT 1 FROM live WHERE live.post = p.rowid) FROM posts p WHERE p.id = NEW.post_id;
DELETE FROM live WHERE post = (SELECT rowid FROM posts WHERE id = NEW.post_id);
END;
