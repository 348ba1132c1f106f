-- D1 migration 0014: the life of a post. A post is open until it ends:
-- by the time its author chose (posts.expires_at), by its author's close
-- or by the operator's removal, each a new messages row of its own role
-- (close, remove), as a report is (report). Nothing is updated: the
-- messages table is made again only because its role CHECK names the
-- roles, and SQLite changes a CHECK no other way. D1 checks foreign keys
-- in every statement; deferring them to the end of the migration lets the
-- old table go while the new one's rows name it (the new table's
-- self-reference names `messages`, which is the new table once renamed).
-- Every post of an earlier release is open and never expires: each gets
-- its row in `live`. The native store runs this same file
-- (needhave/src/store/migrate.rs).
PRAGMA defer_foreign_keys = true;
ALTER TABLE posts ADD COLUMN expires_at INTEGER;
CREATE TABLE messages_life (
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
-- Every row as it was, under its row number (the order of a post's
-- waiting replies and of a thread breaks ties by it).
INSERT INTO messages_life (rowid, id, post_id, role, parent_id, text, secret_hash, thread_key,
  thread_key_hash, ip_hash, created_at, site_hash)
SELECT rowid, id, post_id, role, parent_id, text, secret_hash, thread_key, thread_key_hash, ip_hash,
  created_at, site_hash
FROM messages ORDER BY rowid;
DROP TABLE messages;
ALTER TABLE messages_life RENAME TO messages;

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
INSERT INTO live (post, kind, expires_at) SELECT rowid, kind, NULL FROM posts;
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
PRAGMA defer_foreign_keys = false;
