-- D1 migration 0005: what an IPv6 site writes, and the duplicate key kept
-- as its digest.
--
-- A site is an IPv6 /48 (one host that owns it holds 65,536 /64s, each a
-- client): every row it writes keeps the salted hash of its /48 beside the
-- client's, and the hourly rates count it too, at ten times each
-- per-client rate. Older rows have none and are not counted for a site.
--
-- The duplicate rule compares the SHA-256 hex of the normalized key rather
-- than the key, which NFKC can make 18 times the note: what a post costs
-- on disk stays bounded by what it shows. SQL cannot compute SHA-256, so
-- older rows start without a digest: `needhave d1-keys` turns them into
-- UPDATEs that set it and drop the full key. Until then the create
-- statement also refuses a copy by the full key (posts_note_key) and by
-- the exact note (posts_note_unkeyed). Both indexes become partial, over
-- the old rows only: in a full index a note over about 1 KB spills into an
-- overflow page of its own, 4 KB a post. The native store runs this same
-- file (needhave/src/store/migrate.rs) and back-fills in the same
-- transaction.
ALTER TABLE posts ADD COLUMN note_key_hash TEXT;
ALTER TABLE posts ADD COLUMN site_hash TEXT;
ALTER TABLE messages ADD COLUMN site_hash TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS posts_note_key_hash ON posts (note_key_hash);
DROP INDEX IF EXISTS posts_note;
DROP INDEX IF EXISTS posts_note_key;
CREATE UNIQUE INDEX IF NOT EXISTS posts_note_key ON posts (note_key) WHERE note_key IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS posts_note_unkeyed ON posts (note) WHERE note_key_hash IS NULL;
CREATE INDEX IF NOT EXISTS posts_site ON posts (site_hash, created_at) WHERE site_hash IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_site ON messages (site_hash, created_at) WHERE role = 'first' AND site_hash IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_later_site ON messages (site_hash, created_at) WHERE role = 'later' AND site_hash IS NOT NULL;
