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
  -- The normalized duplicate key (rules::note_key). NULL only on a row
  -- older than the key whose key an older row already holds (migrations/0002).
  note_key    TEXT
);

-- The duplicate rule, on the normalized key; also what a concurrent
-- duplicate runs into.
CREATE UNIQUE INDEX IF NOT EXISTS posts_note_key ON posts (note_key);
-- Exact copies, also of rows that have no key yet (a D1 database between
-- its migration and `needhave d1-keys`).
CREATE UNIQUE INDEX IF NOT EXISTS posts_note ON posts (note);
-- The public list, newest first.
CREATE INDEX IF NOT EXISTS posts_newest ON posts (created_at);
-- The per-IP create limit.
CREATE INDEX IF NOT EXISTS posts_ip ON posts (ip_hash, created_at);

CREATE TABLE IF NOT EXISTS messages (
  id              TEXT    PRIMARY KEY,                      -- 16 random bytes, hex
  post_id         TEXT    NOT NULL REFERENCES posts (id),
  role            TEXT    NOT NULL CHECK (role IN ('first', 'accept', 'later')),
  parent_id       TEXT    REFERENCES messages (id),         -- accept: the first message
  text            TEXT,                                     -- first, later
  secret_hash     TEXT,                                     -- first: SHA-256 hex of the reply secret
  thread_key      TEXT,                                     -- accept
  thread_key_hash TEXT,                                     -- accept, later
  ip_hash         TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  CHECK (role <> 'first'  OR (text IS NOT NULL AND secret_hash IS NOT NULL
                              AND thread_key IS NULL AND thread_key_hash IS NULL AND parent_id IS NULL)),
  CHECK (role <> 'accept' OR (parent_id IS NOT NULL AND thread_key IS NOT NULL AND thread_key_hash IS NOT NULL
                              AND text IS NULL AND secret_hash IS NULL)),
  CHECK (role <> 'later'  OR (text IS NOT NULL AND thread_key_hash IS NOT NULL AND parent_id IS NULL
                              AND secret_hash IS NULL AND thread_key IS NULL))
);

-- At most one accept per first message: what 8 concurrent accepts run into.
-- Only accept rows have a parent_id (the CHECKs above), and NULLs are
-- distinct, so a plain unique index says it; being full, it also serves the
-- foreign key's lookups (a partial index could not).
CREATE UNIQUE INDEX IF NOT EXISTS messages_one_accept ON messages (parent_id);
-- Thread lookup by key.
CREATE UNIQUE INDEX IF NOT EXISTS messages_thread ON messages (thread_key_hash) WHERE role = 'accept';
-- A thread's later messages, most recent first.
CREATE INDEX IF NOT EXISTS messages_later ON messages (thread_key_hash, created_at) WHERE role = 'later';
-- A post's first messages (waiting list, waiting cap); full, so that it also
-- serves the foreign key on post_id.
CREATE INDEX IF NOT EXISTS messages_post ON messages (post_id, role, created_at);
-- The per-IP first-reply limit.
CREATE INDEX IF NOT EXISTS messages_ip ON messages (ip_hash, created_at) WHERE role = 'first';
-- The per-IP thread-message limit (migrations/0003).
CREATE INDEX IF NOT EXISTS messages_later_ip ON messages (ip_hash, created_at) WHERE role = 'later';
