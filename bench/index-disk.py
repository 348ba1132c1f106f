#!/usr/bin/env python3
"""What the word index costs on disk per post for notes built to cost the
most, by FTS5 prefix lists kept: the list's own (one to eight characters)
against fewer, on a file written as the list writes its index (64 posts a
segment, each post under 2^28 - its row number, `detail = none`, leaves
of 64 bytes).

    python3 bench/index-disk.py [--posts 300] [--leaf 64] [--marks]

Each note is close to the list's 500 characters of words no other note
has: n distinct ASCII words of L letters (L = 2 … 9), 55 words of eight
4-byte letters (Deseret), and 498 Han letters whose every pair is new;
and, for comparison, notes of ordinary words (a vocabulary of 5,000,
Zipf's law), which share most of theirs once a list has a few thousand.
The list's own index is the "1-8" column's with `--marks`: each term
begun with its kind's mark, and prefix lists of the mark and one to eight
characters. Only the index's bytes are
counted (`dbstat` of its shadow tables, pages
less their unused bytes): what a post costs besides is measured on the
list itself by `tests/limits.rs` and `needhave-bench disk`, and
docs/design/search-index.md ("Two parts: hot and cold") puts the two
together. It uses Python's own SQLite (3.40 here, FTS5 and
dbstat built in), so the figures are the index's shape, not the list's
statements; SQLite 3.50 writes the same format.
"""
import argparse
import bisect
import itertools
import sqlite3

BASE = 268435456  # store::WORDS_BASE: a post's words under 2^28 - rowid
MOVE = 64  # store::PENDING_MAX: posts a segment
LEAF = 64  # store::WORDS_LEAF: FTS5's pgsz

# (column, prefix lists by characters after any mark, dictionary of terms)
PREFIXES = [
    ("1-8", "1 2 3 4 5 6 7 8", False),
    ("1-4", "1 2 3 4", False),
    ("1-3", "1 2 3", False),
    ("1-2", "1 2", False),
    ("1", "1", False),
    ("none", "", False),
    # Lists of one character and a table of every distinct term of two or
    # more, which a query word would be looked up in to become the few
    # terms it begins: an OR that FTS5 walks page by page.
    ("1 + dictionary", "1", True),
]


def mix(x):
    """splitmix64: the same letters on every run."""
    m = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def tail(i):
    """Two Han letters of the note's own, as tests/limits.rs ends each note."""
    return chr(0x4E00 + i % 64) + chr(0x4E00 + i // 64)


def unspaced(c):
    o = ord(c)
    return 0x3000 <= o <= 0x9FFF or 0x20000 <= o


def index_text(words):
    """rules::words::index_text for notes of these shapes: the kind's term,
    then each distinct term (a spaced word as it is, an unspaced run as
    its pairs)."""
    terms = ["\u00b7need"]
    for w in words:
        for is_unspaced, run in itertools.groupby(w, unspaced):
            run = "".join(run)
            if is_unspaced and len(run) > 1:
                terms += [run[k : k + 2] for k in range(len(run) - 1)]
            else:
                terms.append(run)
    return " ".join(dict.fromkeys(terms))


def ascii_words(length):
    n = 496 // (length + 1)
    return lambda i: [
        "".join(chr(97 + mix((i * 200 + k) * 16 + j) % 26) for j in range(length))
        for k in range(n)
    ] + [tail(i)]


def deseret_words(i):
    return [
        "".join(chr(0x10428 + mix((i * 64 + k) * 8 + j) % 40) for j in range(8))
        for k in range(55)
    ] + [tail(i)]


def han_pairs(i):
    return ["".join(chr(0x4E00 + (i * 499 + k * 7) % 20000) for k in range(498)) + tail(i)]


SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
VOCABULARY = [
    "".join(SYLLABLES[mix(w * 4 + s) % len(SYLLABLES)] for s in range(2 + mix(w) % 3))
    for w in range(5000)
]
CUMULATIVE = list(itertools.accumulate(1 / (r + 1) for r in range(len(VOCABULARY))))


def ordinary_words(i):
    """A note as people write them: words of a 5,000-word vocabulary of
    two to four syllables, the r-th most used 1/r as often (Zipf), about
    500 characters."""
    words, length, k = [], 0, 0
    while length < 490:
        x = mix(i * 1000 + k) / 2**64 * CUMULATIVE[-1]
        words.append(VOCABULARY[bisect.bisect(CUMULATIVE, x)])
        length += len(words[-1]) + 1
        k += 1
    return words + [tail(i)]


def marked(text):
    """Each term begun with the need kind's mark, as the list writes it."""
    return " ".join("\u207f" + t for t in text.split(" "))


def index_bytes(note, prefix, posts, leaf, marks=False, dictionary=False):
    c = sqlite3.connect(":memory:")
    if marks:  # a list of n characters after the mark is FTS5's list of n + 1
        prefix = " ".join(str(int(n) + 1) for n in prefix.split())
    option = f", prefix = '{prefix}'" if prefix else ""
    c.execute(
        "CREATE VIRTUAL TABLE post_words USING fts5 (words, content = '', "
        f"columnsize = 0, detail = none, tokenize = 'ascii'{option})"
    )
    c.execute("INSERT INTO post_words (post_words, rank) VALUES ('pgsz', ?)", (leaf,))
    c.execute("CREATE TABLE terms (term TEXT PRIMARY KEY) WITHOUT ROWID")
    note_bytes = 0
    for start in range(0, posts, MOVE):
        with c:
            for i in range(start, min(posts, start + MOVE)):
                words = note(i)
                note_bytes += len(" ".join(words).encode())
                text = index_text(words)
                c.execute(
                    "INSERT INTO post_words (rowid, words) VALUES (?, ?)",
                    (BASE - (i + 1), marked(text) if marks else text),
                )
                if dictionary:
                    c.executemany(
                        "INSERT OR IGNORE INTO terms VALUES (?)",
                        [(t,) for t in text.split(" ")[1:] if len(t) >= 2],
                    )
    used = c.execute(
        "SELECT sum(pgsize - unused) FROM dbstat "
        "WHERE name LIKE 'post_words_%' OR name = 'terms'"
    ).fetchone()[0]
    return used / posts, note_bytes / posts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--posts", type=int, default=300)
    ap.add_argument("--leaf", type=int, default=LEAF, help="FTS5's pgsz (the list's: 64)")
    ap.add_argument(
        "--marks", action="store_true", help="terms begun with the kind's mark, as the list's"
    )
    args = ap.parse_args()
    cases = [(f"ASCII words of {n} letters", ascii_words(n)) for n in range(2, 10)]
    cases += [("Deseret words of 8 letters", deseret_words), ("Han, every pair new", han_pairs)]
    cases += [("Ordinary words (Zipf, 5,000)", ordinary_words)]
    print("| note | note B | " + " | ".join(p for p, _, _ in PREFIXES) + " |")
    print("|---|---:|" + "---:|" * len(PREFIXES))
    for name, note in cases:
        cells = []
        for _, prefix, dictionary in PREFIXES:
            used, note_bytes = index_bytes(
                note, prefix, args.posts, args.leaf, args.marks, dictionary
            )
            cells.append(f"{used:,.0f}")
        print(f"| {name} | {note_bytes:,.0f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
