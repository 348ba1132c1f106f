#!/usr/bin/env python3
"""An index of words that keeps a prefix list only for a prefix other notes
share, measured against the list's own index: what each costs a post on
disk, what a move of 64 posts costs, and what a query costs, side by side.

    python3 bench/hot-cold.py disk    [--posts 300] [--after N] [--settle]
    python3 bench/hot-cold.py moves   [--posts 1280] [--after 40000]
    python3 bench/hot-cold.py queries [--posts 200000]

The designs (docs/finding.md, "An index that fits the bound"):

- `list`: the list's index, one FTS5 table of every post's marked words
  with prefix lists of the mark and one to eight characters, in leaves of
  64 bytes (a young list's are FTS5's own; the prefix lists are the same).
- `hot-cold`: two FTS5 tables and a table of hot prefixes. `cold` holds
  every post's marked words exactly, in FTS5's own leaves, with no prefix
  list: a word no other note has is one term in a large leaf. `hot` holds,
  for each post, its kind's term and every hot prefix (the mark and one to
  eight characters) of its words, as explicit terms, in leaves of 64
  bytes: lists that many posts share, which a deep page seeks. The hot
  set is closed under prefixes (a prefix is promoted only when its parent
  is hot) and grows only; the writer keeps it in memory (as each server
  would) and writes each post's hot tokens beside its words. A word's
  first prefix that is not hot is, one time in H (16), a candidate; the
  move checks at most K (64) candidates, and promotes one that at least T
  (8) moved posts hold (a prefix query of the cold table: the prefix is
  cold, so its list is short), writing its token for every moved post
  that holds it, in the same insert; the move hands the promotions back
  to the writer. So nothing counts a prefix no other note shares.
- `hot-cold, tokens in SQL` (`moves` only): the same index with each
  word's hot prefixes found by the move itself, one seek a word into the
  hot set (the deepest hot prefix is the longest common prefix of the
  word and the greatest hot prefix not after it, since the set is closed
  under prefixes): what a writer whose copy of the hot set is behind
  would cost.

A query word of eight characters or fewer that is hot reads its own list
in `hot` (a page, stopping at the page, seeking to a cursor); one that is
cold merges its few terms in `cold`; a post must hold every word, the
cold words checked by FTS5's AND in `cold`, the hot ones by a seek in
`hot` per candidate. `queries` asserts both designs give every answer
alike.

Python's own SQLite (3.40 here, FTS5 and dbstat built in); the notes are
those of `bench/index-disk.py`, plus words of random letters. Only the
index's tables are counted (`dbstat`, pages less their unused bytes);
`--settle` merges each index into one segment before and after, so the
figure is the words' own and not where the writer's merging happens to
stand.
"""
import argparse
import collections
import importlib.util
import json
import os
import random
import sqlite3
import statistics
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "index_disk", os.path.join(os.path.dirname(os.path.abspath(__file__)), "index-disk.py")
)
notes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(notes)

MOVE = 64  # store::PENDING_MAX
MARK = "\u207f"  # the need kind's mark
H, K, T = 16, 64, 8  # one word in H a candidate, K checks a move, T posts to promote
TRUNCATED = False  # --truncated: a word's deepest hot prefix, FTS5 making the rest
FIRST = -(1 << 62)  # a cursor before every row


def random_words(i):
    r = random.Random(i)
    words, length = [], 0
    while length < 480:
        w = "".join(chr(97 + r.randrange(26)) for _ in range(r.randint(1, 10)))
        words.append(w)
        length += len(w) + 1
    return words + [notes.tail(i)]


CASES = [
    ("ordinary words", notes.ordinary_words),
    ("random words of 1-10 letters", random_words),
    ("ASCII words of 3 letters", notes.ascii_words(3)),
    ("ASCII words of 4 letters", notes.ascii_words(4)),
    ("ASCII words of 8 letters", notes.ascii_words(8)),
    ("Deseret words of 8 letters", notes.deseret_words),
    ("Han, every pair new", notes.han_pairs),
]

COMMON = """
CREATE TABLE posts (rowid INTEGER PRIMARY KEY, kind TEXT);
CREATE TABLE words_new (post INTEGER PRIMARY KEY, words TEXT, tokens TEXT, candidates TEXT);
"""

LIST = COMMON + """
CREATE VIRTUAL TABLE post_words USING fts5 (words, content = '', columnsize = 0,
  detail = none, tokenize = 'ascii', prefix = '2 3 4 5 6 7 8 9');
INSERT INTO post_words (post_words, rank) VALUES ('pgsz', 64);
"""

HOT_COLD = COMMON + """
CREATE VIRTUAL TABLE cold USING fts5 (words, content = '', columnsize = 0,
  detail = none, tokenize = 'ascii');
CREATE VIRTUAL TABLE hot USING fts5 (words, content = '', columnsize = 0,
  detail = none, tokenize = 'ascii'{prefix});
INSERT INTO hot (hot, rank) VALUES ('pgsz', 64);
CREATE TABLE hot_prefixes (p TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE fresh (p TEXT PRIMARY KEY) WITHOUT ROWID;
"""

MARKED = f"'{MARK}' || replace(n.words, ' ', ' ' || '{MARK}')"

MOVE_LIST = [
    "INSERT INTO post_words (rowid, words) SELECT 268435456 - n.post, "
    f"'·need ' || {MARKED} FROM words_new n ORDER BY n.post DESC"
]

COLD = (
    f"INSERT INTO cold (rowid, words) SELECT 268435456 - n.post, {MARKED} "
    "FROM words_new n ORDER BY n.post DESC"
)
PROMOTE = f"""INSERT INTO fresh (p) SELECT c.p FROM
  (SELECT DISTINCT j.value AS p FROM words_new n, json_each(n.candidates) j
   WHERE NOT EXISTS (SELECT 1 FROM hot_prefixes h WHERE h.p = j.value) LIMIT {K}) c
  WHERE (SELECT count(*) FROM cold WHERE cold MATCH '"' || c.p || '"*') >= {T}"""
HOT = """INSERT INTO hot (rowid, words) SELECT r, group_concat(t, ' ') FROM (
    SELECT 268435456 - n.post AS r, n.tokens AS t FROM words_new n
    UNION ALL
    SELECT c.rowid, f.p FROM fresh f, cold c WHERE c.cold MATCH ('"' || f.p || '"*'))
  GROUP BY r ORDER BY r"""
MOVE_HOT_COLD = [
    COLD,
    PROMOTE,
    "INSERT INTO hot_prefixes (p) SELECT p FROM fresh",
    HOT,
    "SELECT p FROM fresh",
    "DELETE FROM fresh",
]


# A page of the posts holding every word of ?2 (JSON, unmarked), of the
# kinds whose marks are ?1 (JSON), after the cursor ?3, at most ?4: per
# kind, every word hot reads the hot lists, else the cold words' merge,
# each of its posts checked for the hot words by a seek.
ONE_STATEMENT = """WITH q AS (
    SELECT k.value AS m, w.value AS w, (length(w.value) <= 8 AND EXISTS
      (SELECT 1 FROM hot_prefixes h WHERE h.p = k.value || w.value)) AS hot
    FROM json_each(?1) k, json_each(?2) w),
  kinds AS (SELECT m, min(hot) AS all_hot,
      '(' || group_concat(CASE WHEN hot THEN '"' || m || w || '"{star}' END, ' AND ') || ')' AS hot_e,
      '(' || group_concat(CASE WHEN NOT hot THEN '"' || m || w || '"*' END, ' AND ') || ')' AS cold_e
    FROM q GROUP BY m)
SELECT * FROM (SELECT rowid FROM hot
  WHERE hot MATCH coalesce((SELECT group_concat(hot_e, ' OR ') FROM kinds WHERE all_hot), '"·none"')
  AND rowid > ?3 ORDER BY rowid
  LIMIT CASE WHEN EXISTS (SELECT 1 FROM kinds WHERE all_hot) THEN ?4 ELSE 0 END)
UNION ALL
SELECT * FROM (SELECT c.rowid FROM cold c JOIN posts p ON p.rowid = 268435456 - c.rowid
  WHERE c.cold MATCH coalesce((SELECT group_concat(cold_e, ' OR ') FROM kinds WHERE NOT all_hot), '"·none"')
  AND c.rowid > ?3
  AND NOT EXISTS (SELECT 1 FROM q WHERE q.hot
    AND q.m = CASE p.kind WHEN 'need' THEN 'ⁿ' ELSE 'ʰ' END
    AND NOT EXISTS (SELECT 1 FROM hot h WHERE h.hot MATCH '"' || q.m || q.w || '"{star}' AND h.rowid = c.rowid))
  ORDER BY c.rowid LIMIT CASE WHEN EXISTS (SELECT 1 FROM kinds WHERE NOT all_hot) THEN ?4 ELSE 0 END)"""


def _depth(s, v):
    """The longest common prefix of s and v, in characters (s a prefix of v
    most often)."""
    lcp = " ".join(
        f"WHEN substr({s}, 1, {k}) = substr({v}, 1, {k}) THEN {k}" for k in range(8, 0, -1)
    )
    return (
        f"CASE WHEN {s} IS NULL THEN 0 WHEN substr({v}, 1, length({s})) = {s} "
        f"THEN length({s}) ELSE CASE {lcp} ELSE 0 END END"
    )


# The tokens of a post whose writer's hot set is behind: each word's hot
# prefixes from the table, one seek a word.
_HOT_WORDS = f"""(SELECT w.v AS v,
       (SELECT h.p FROM hot_prefixes h WHERE h.p <= w.v ORDER BY h.p DESC LIMIT 1) AS s
     FROM (SELECT '{MARK}' || j.value AS v FROM
       json_each('["' || replace(words_new.words, ' ', '","') || '"]') j) w) x"""
TOKENS_IN_SQL = f"""UPDATE words_new SET tokens = (
  SELECT '·need' || coalesce(group_concat(' ' || p, ''), '') FROM (
    SELECT DISTINCT substr(d.v, 1, k.value) AS p FROM
      (SELECT x.v AS v, {_depth('x.s', 'x.v')} AS depth FROM {_HOT_WORDS}) d,
      json_each('[2,3,4,5,6,7,8,9]') k
    WHERE k.value <= d.depth))"""
# With --truncated: each word's deepest hot prefix alone, FTS5's prefix lists
# making the rest.
TRUNCATED_IN_SQL = f"""UPDATE words_new SET tokens = (
  SELECT '·need' || coalesce(group_concat(' ' || substr(x.v, 1, {_depth('x.s', 'x.v')}), ''), '')
  FROM {_HOT_WORDS} WHERE x.s IS NOT NULL)"""


class Writer:
    """What each server would keep: the hot set, grown by what moves hand back."""

    def __init__(self, in_sql=False, truncated=False):
        self.hot = set()
        self.rng = random.Random(7)
        self.in_sql = in_sql
        self.truncated = truncated

    def row(self, post, words):
        tokens, candidates = {"·need": None}, []
        for w in words:
            v, depth = MARK + w, 1
            while depth < min(len(v), 9) and v[: depth + 1] in self.hot:
                depth += 1
            if depth > 1 and self.truncated:
                tokens[v[:depth]] = None
            elif depth > 1:
                tokens.update((v[:k], None) for k in range(2, depth + 1))
            if depth < min(len(v), 9) and self.rng.randrange(H) == 0:
                candidates.append(v[: depth + 1])
        return (
            post,
            " ".join(words),
            None if self.in_sql else " ".join(tokens),
            json.dumps(candidates, ensure_ascii=False),
        )


def open_index(design, path=":memory:"):
    c = sqlite3.connect(path)
    fresh = c.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0] == 0
    if fresh:
        prefix = ", prefix = '2 3 4 5 6 7 8 9'" if TRUNCATED else ""
        c.executescript(LIST if design == "list" else HOT_COLD.replace("{prefix}", prefix))
    writer = Writer(in_sql=design.endswith("SQL"), truncated=TRUNCATED)
    if design != "list":
        writer.hot.update(p for (p,) in c.execute("SELECT p FROM hot_prefixes"))
    return c, writer


def write(c, design, writer, note, start, count, moves=None):
    """count posts of note(i), 64 a move, as the list's creates and moves do."""
    statements = MOVE_LIST if design == "list" else MOVE_HOT_COLD
    if design.endswith("SQL"):
        statements = [TRUNCATED_IN_SQL if TRUNCATED else TOKENS_IN_SQL] + statements
    note_bytes = 0
    for s in range(start, start + count, MOVE):
        rows = []
        for i in range(s, min(start + count, s + MOVE)):
            words = note(i)
            note_bytes += len(" ".join(words).encode())
            terms = notes.index_text(words).split(" ")[1:]
            rows.append(writer.row(i + 1, terms))
        with c:
            c.executemany("INSERT INTO posts (rowid, kind) VALUES (?, 'need')", [r[:1] for r in rows])
            c.executemany("INSERT INTO words_new VALUES (?, ?, ?, ?)", rows)
            began = time.perf_counter()
            for statement in statements:
                got = c.execute(statement).fetchall()
                if statement.startswith("SELECT p FROM fresh"):
                    writer.hot.update(p for (p,) in got)
            if moves is not None:
                moves.append(time.perf_counter() - began)
            c.execute("DELETE FROM words_new")
    return note_bytes


def index_bytes(c):
    return c.execute(
        "SELECT coalesce(sum(pgsize - unused), 0) FROM dbstat WHERE name LIKE 'post_words%' "
        "OR name LIKE 'cold%' OR name LIKE 'hot%' OR name = 'fresh'"
    ).fetchone()[0]


def settle(c, design):
    for table in ["post_words"] if design == "list" else ["cold", "hot"]:
        c.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    c.commit()


def disk(args):
    designs = ["list", "hot-cold"]
    print(f"Index bytes a post, {args.posts} posts a case" + (f" after {args.after:,} ordinary ones" if args.after else "") + (", settled" if args.settle else ""))
    print("| note | note B | " + " | ".join(designs) + " | hot prefixes |")
    print("|---|---:|" + "---:|" * len(designs) + "---:|")
    for name, note in CASES:
        cells, hot = [], 0
        for design in designs:
            c, writer = open_index(design)
            if args.after:
                write(c, design, writer, notes.ordinary_words, 10_000_000, args.after)
            if args.settle:
                settle(c, design)
            before = index_bytes(c)
            note_bytes = write(c, design, writer, note, 0, args.posts)
            if args.settle:
                settle(c, design)
            cells.append(f"{(index_bytes(c) - before) / args.posts:,.0f}")
            hot = len(writer.hot) or hot
        print(f"| {name} | {note_bytes / args.posts:,.0f} | " + " | ".join(cells) + f" | {hot:,} |", flush=True)


def moves(args):
    designs = ["list", "hot-cold", "hot-cold, tokens in SQL"]
    print(
        f"A move of 64 posts, ms: p50 (mean), {args.rounds} rounds of {args.posts:,} posts, "
        f"the designs in turn, after {args.after:,} ordinary posts"
    )
    print("| note | " + " | ".join(designs) + " |")
    print("|---|" + "---:|" * len(designs))
    for name, note in CASES[: args.cases]:
        lists = []
        for design in designs:
            c, writer = open_index(design)
            write(c, design, writer, notes.ordinary_words, 10_000_000, args.after)
            lists.append((design, c, writer, []))
        for r in range(args.rounds):
            for design, c, writer, took in lists:
                write(c, design, writer, note, r * args.posts, args.posts, took)
        cells = [
            f"{statistics.median(took) * 1e3:.1f} ({statistics.mean(took) * 1e3:.1f})"
            for _, _, _, took in lists
        ]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def queries(args):
    n = args.posts
    index = {}
    for design in ("list", "hot-cold"):
        variant = "-truncated" if TRUNCATED and design != "list" else ""
        path = os.path.join(args.dir, f"hot-cold-{design}{variant}-{n}.db")
        c, writer = open_index(design, path)
        if c.execute("SELECT count(*) FROM posts").fetchone()[0] < n:
            began = time.time()
            write(c, design, writer, notes.ordinary_words, 0, n)
            print(f"{design}: {n:,} posts written in {time.time() - began:.0f} s", flush=True)
        index[design] = c
    hot = {p for (p,) in index["hot-cold"].execute("SELECT p FROM hot_prefixes")}

    # words by the share of notes that hold them, from every 50th note
    share = collections.Counter()
    for i in range(0, n, 50):
        share.update(set(notes.index_text(notes.ordinary_words(i)).split(" ")[1:]))
    sample = len(range(0, n, 50))
    by_share = sorted(share, key=lambda w: (share[w], w))

    def near(fraction, min_len=1):
        return min((w for w in by_share if len(w) >= min_len), key=lambda w: abs(share[w] / sample - fraction))

    common, second, rare = near(0.10), near(0.05), near(0.0005, 5)

    def in_list(words, after):
        expression = " AND ".join(f'"{MARK}{w}"*' for w in words)
        return index["list"].execute(
            "SELECT rowid FROM post_words WHERE post_words MATCH ? AND rowid > ? "
            "ORDER BY rowid LIMIT 101",
            (expression, after),
        ).fetchall()

    star = "*" if TRUNCATED else ""  # a hot word is its own term, or FTS5's prefix list

    def in_hot_cold(words, after):
        hot_words = [w for w in words if len(w) <= 8 and MARK + w in hot]
        cold_words = [w for w in words if w not in hot_words]
        c = index["hot-cold"]
        if not cold_words:
            return c.execute(
                "SELECT rowid FROM hot WHERE hot MATCH ? AND rowid > ? ORDER BY rowid LIMIT 101",
                (" AND ".join(f'"{MARK}{w}"{star}' for w in hot_words), after),
            ).fetchall()
        checks = "".join(
            " AND EXISTS (SELECT 1 FROM hot h WHERE h.hot MATCH ? AND h.rowid = cold.rowid)"
            for _ in hot_words
        )
        return c.execute(
            f"SELECT rowid FROM cold WHERE cold MATCH ? AND rowid > ?{checks} ORDER BY rowid LIMIT 101",
            [" AND ".join(f'"{MARK}{w}"*' for w in cold_words), after]
            + [f'"{MARK}{w}"{star}' for w in hot_words],
        ).fetchall()

    one_statement = ONE_STATEMENT.replace("{star}", star)

    def in_one_statement(words, after, marks=(MARK,)):
        """The same page by one statement, as the list would ask it: the hot
        set looked up inside it, the hot and the cold part each a page,
        merged here."""
        rows = index["hot-cold"].execute(
            one_statement,
            (json.dumps(marks), json.dumps(words), after, 101),
        ).fetchall()
        return sorted(set(rows))[:101]

    def timed(ask, words, after, runs):
        took = []
        for _ in range(runs):
            began = time.perf_counter()
            ask(words, after)
            took.append(time.perf_counter() - began)
        took.sort()
        return took[len(took) // 2] * 1e6, took[int(len(took) * 0.99)] * 1e6

    def hundredth(ask, words):
        after = FIRST
        for _ in range(99):
            page = ask(words, after)
            after = page[-2][0]
        return after

    cold_word = min((w for w in by_share if len(w) >= 4 and MARK + w[:4] not in hot), default=None)
    asked = [
        ("a word in 10% of the notes", [common]),
        ("a word in 0.05%", [rare]),
        ("two words", [common, second]),
        ("a rare word and a common one", [rare, common]),
        ("one letter", [common[:1]]),
        ("three letters", [common[:3]]),
    ]
    if cold_word:
        asked.append(("a cold prefix", [cold_word[:4]]))
    print(f"\n{n:,} ordinary posts; {len(hot):,} hot prefixes; µs p50 / p99 of {args.runs} runs")
    print("| query | words | rows | list | hot-cold | hot-cold, one statement |")
    print("|---|---|---:|---:|---:|---:|")
    for name, words in asked:
        got = in_list(words, FIRST)
        assert got == in_hot_cold(words, FIRST), name
        assert got == in_one_statement(words, FIRST), name
        assert got == in_one_statement(words, FIRST, (MARK, "\u02b0")), name
        cells = [f"{p50:,.0f} / {p99:,.0f}" for p50, p99 in (timed(a, words, FIRST, args.runs) for a in (in_list, in_hot_cold, in_one_statement))]
        print(f"| {name} | {' '.join(words)} | {len(got)} | " + " | ".join(cells) + " |", flush=True)
    cells = []
    for ask in (in_list, in_hot_cold, in_one_statement):
        after = hundredth(ask, [common])
        assert in_list([common], after) == ask([common], after)
        first, _ = timed(ask, [common], FIRST, args.runs)
        deep, _ = timed(ask, [common], after, args.runs)
        cells.append(f"{deep:,.0f} / {first:,.0f} ({deep / first:.2f}×)")
    print(f"| the 100th page / the first | {common} | 101 | " + " | ".join(cells) + " |")
    print("Every answer alike in all three (one statement: with either kind too).")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    d = sub.add_parser("disk")
    d.add_argument("--posts", type=int, default=300)
    d.add_argument("--after", type=int, default=0)
    d.add_argument("--settle", action="store_true")
    m = sub.add_parser("moves")
    m.add_argument("--posts", type=int, default=1280)
    m.add_argument("--after", type=int, default=40000)
    m.add_argument("--rounds", type=int, default=3)
    m.add_argument("--cases", type=int, default=len(CASES), help="the first N cases only")
    q = sub.add_parser("queries")
    q.add_argument("--posts", type=int, default=200_000)
    q.add_argument("--runs", type=int, default=300)
    q.add_argument("--dir", default=".", help="where the two files are kept between runs")
    for p in (d, m, q):
        p.add_argument("--truncated", action="store_true", help="hot tokens truncated, FTS5's prefix lists")
    args = ap.parse_args()
    global TRUNCATED
    TRUNCATED = args.truncated
    {"disk": disk, "moves": moves, "queries": queries}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
