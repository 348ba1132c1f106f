#!/usr/bin/env python3
"""A kind and a word whose posts never meet (`kind=need&q=gpu` where every
gpu note is a have) against the index with a kind term of its own (the
list's before version 10) and with each word carrying its post's kind in
its first character (its shape since; the list's marks are `ⁿ` and `ʰ`,
this sketch's `ñ` and `ĥ`). With a kind term, the
AND walks both lists until they run out before it can say "none"; with
the kind in the word, `kind=need&q=gpu` is one list, empty, and a query
without a kind is an OR of the two kinds' lists.

    python3 bench/kind-terms.py [--posts 200000]

Python's own SQLite (FTS5 built in), the list's FTS5 options and leaf
size, posts written 64 to a segment; microseconds a query (the page's
`ORDER BY rowid LIMIT 101`, 200 times). docs/design/search-index.md,
"What a note is indexed as", has the figures.
"""
import argparse
import random
import sqlite3
import time

BASE = 268435456  # store::WORDS_BASE
NEED, HAVE = "\u00f1", "\u0125"


def build(posts, kind_in_word):
    rnd = random.Random(2)
    vocab = [
        "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 8)))
        for _ in range(5000)
    ]
    c = sqlite3.connect(":memory:")
    c.execute(
        "CREATE VIRTUAL TABLE post_words USING fts5 (words, content = '', columnsize = 0, "
        "detail = none, tokenize = 'ascii', prefix = '1 2 3 4 5 6 7 8')"
    )
    c.execute("INSERT INTO post_words (post_words, rank) VALUES ('pgsz', 64)")
    rows = []
    for i in range(posts):
        have = i % 2 == 1
        words = rnd.sample(vocab, 6) + (["gpu"] if have and i % 10 == 1 else [])
        if kind_in_word:
            mark = HAVE if have else NEED
            text = " ".join(mark + w for w in words)
        else:
            text = ("\u00b7have " if have else "\u00b7need ") + " ".join(words)
        rows.append((BASE - i, text))
        if len(rows) == 64:
            with c:
                c.executemany("INSERT INTO post_words (rowid, words) VALUES (?, ?)", rows)
            rows = []
    return c


def timed(c, query, rounds=200):
    started = time.perf_counter()
    for _ in range(rounds):
        found = c.execute(
            "SELECT rowid FROM post_words WHERE post_words MATCH ? ORDER BY rowid LIMIT 101",
            (query,),
        ).fetchall()
    return (time.perf_counter() - started) / rounds * 1e6, len(found)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--posts", type=int, default=200000)
    args = ap.parse_args()
    queries = {
        "q=gpu": ('"gpu"*', f'"{HAVE}gpu"* OR "{NEED}gpu"*'),
        "kind=need&q=gpu (none)": ('"\u00b7need" AND "gpu"*', f'"{NEED}gpu"*'),
        "kind=have&q=gpu": ('"\u00b7have" AND "gpu"*', f'"{HAVE}gpu"*'),
    }
    print(f"{args.posts} posts, half of each kind, gpu in 10% (all haves)\n")
    print("| query | kind term: µs (posts) | kind in the word: µs (posts) |")
    print("|---|---|---|")
    built = [build(args.posts, False), build(args.posts, True)]
    for name, (term, word) in queries.items():
        a, na = timed(built[0], term)
        b, nb = timed(built[1], word)
        print(f"| {name} | {a:,.0f} ({na}) | {b:,.0f} ({nb}) |")


if __name__ == "__main__":
    main()
