#!/usr/bin/env python3
"""What the word index adds to a commit of one post: WAL frames (pages
written) per commit and commits per second, with the list's FTS5 table and
without it, on a file like the bench's (1,000 posts seeded 16 a
transaction), each post its own transaction with synchronous=FULL.

It uses Python's own SQLite (3.40 here, FTS5 built in) rather than the
list's, so it measures the index's shape, not the list's statements:

    python3 bench/index-frames.py [--posts 1000] [--rounds 3]

Modes: `off` (no index), `every commit` (the words into the list's FTS5
table in each post's commit, as the list wrote them before `words_new`),
`automerge=0` (the same without FTS5's merging as it writes), `words_new`
(the list's way: each post's words into `words_new`, moved into the FTS5
table 64 posts at a time, by the list's own statements' SQL), and
`words_new, leaves of 64` (the same with the list's leaf size,
`store::WORDS_LEAF`; the others keep FTS5's 4,050 bytes). The order of
the modes is reversed every other round, so that a machine slowing during
the run slows them alike.
"""
import argparse
import os
import sqlite3
import tempfile
import time

BASE = 268435456  # store::WORDS_BASE: a post's words under 2^28 - rowid

INDEX = (
    "CREATE VIRTUAL TABLE post_words USING fts5 (words, content = '', "
    "columnsize = 0, detail = none, tokenize = 'ascii', "
    "prefix = '1 2 3 4 5 6 7 8')"
)


# store::MOVE_WORDS and store::CLEAR_WORDS, and words_new as schema.sql has it.
WORDS_NEW = "CREATE TABLE words_new (post INTEGER PRIMARY KEY, words TEXT NOT NULL)"
MOVE_WORDS = (
    "INSERT INTO post_words (rowid, words) SELECT 268435456 - post, words FROM words_new "
    "WHERE (SELECT count(*) FROM words_new) >= 64 ORDER BY post DESC"
)
CLEAR_WORDS = "DELETE FROM words_new WHERE (SELECT count(*) FROM words_new) >= 64"


def run(path, mode, posts):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("PRAGMA synchronous = FULL")
    c.execute("CREATE TABLE posts (id TEXT UNIQUE, kind TEXT, note TEXT, created_at INT)")
    c.execute("CREATE INDEX posts_kind ON posts (kind)")
    indexed = mode != "off"
    if indexed:
        c.execute(INDEX)
    if mode.startswith("words_new"):
        c.execute(WORDS_NEW)
    if mode == "words_new, leaves of 64":
        c.execute("INSERT INTO post_words (post_words, rank) VALUES ('pgsz', 64)")
    if mode == "automerge=0":
        c.execute("INSERT INTO post_words (post_words, rank) VALUES ('automerge', 0)")

    def post(i, note, commit_every):
        if i % commit_every == 0:
            c.execute("BEGIN")
        c.execute("INSERT INTO posts VALUES (?, 'have', ?, ?)", (f"p{i}", note, i))
        rowid = c.execute("SELECT last_insert_rowid()").fetchone()[0]
        if mode.startswith("words_new"):
            c.execute("INSERT INTO words_new (post, words) VALUES (?, ?)", (rowid, "have " + note))
            c.execute(MOVE_WORDS)
            c.execute(CLEAR_WORDS)
        elif indexed:
            c.execute("INSERT INTO post_words (rowid, words) VALUES (?, ?)", (BASE - rowid, "have " + note))
        if i % commit_every == commit_every - 1:
            c.execute("COMMIT")

    for i in range(1000):
        post(i, f"seed note {i} x{i:x}", 16)
    c.execute("COMMIT")
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # No checkpoint while timing: the WAL then holds every frame written.
    c.execute("PRAGMA wal_autocheckpoint = 0")
    started = time.perf_counter()
    for i in range(1000, 1000 + posts):
        post(i, f"bench create {i} with a few words of a note gpu {i:x}", 1)
    seconds = time.perf_counter() - started
    frames = c.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
    c.close()
    return frames / posts, posts / seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--posts", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    modes = ["off", "every commit", "automerge=0", "words_new", "words_new, leaves of 64"]
    print(f"SQLite {sqlite3.sqlite_version}, {args.posts} posts a round, one a commit\n")
    print("| round | mode | WAL frames per commit | commits/s |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for r in range(args.rounds):
            for mode in modes if r % 2 == 0 else modes[::-1]:
                frames, rate = run(os.path.join(d, "frames.db"), mode, args.posts)
                print(f"| {r + 1} | {mode} | {frames:.2f} | {rate:.0f} |")


if __name__ == "__main__":
    main()
