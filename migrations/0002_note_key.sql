-- D1 migration 0002: the normalized duplicate key of a post's note
-- (rules::note_key: NFKC, lower-cased, default-ignorables removed, runs of
-- non-letters/digits made one space, trimmed), backed by a unique index so
-- that concurrent copies cannot both get in.
--
-- SQL cannot compute NFKC, so rows older than this migration start with a
-- NULL key: `needhave d1-keys` turns them into UPDATEs (docs/finding.md,
-- "Upgrading a database"). Until then the create statement also refuses exact copies
-- by `posts_note`. NULLs are distinct in a unique index, so an old row whose
-- key an older row already holds keeps NULL: nothing is lost, and the key
-- that would collide is held anyway. The native store runs this same file
-- (needhave/src/store/migrate.rs).
ALTER TABLE posts ADD COLUMN note_key TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS posts_note_key ON posts (note_key);
