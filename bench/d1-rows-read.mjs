// D1's rows read per `GET /posts`, from the Worker's own log line: run by
// bench/d1-rows-read.sh against `wrangler dev` on a seeded local D1.
//
//   node bench/d1-rows-read.mjs BASE LOG POSTS [--check]
//
// BASE is the Worker's address, LOG the file wrangler dev writes the
// Worker's console to, POSTS how many posts the D1 holds (seeded by
// `needhave-bench d1-seed`). Requests go one at a time, and each one's
// line is the next JSON line with a route that appears in LOG: the line
// carries `rows_read` and `rows_written`, the sums of D1's `meta` over the
// request's statements (needhave/src/worker.rs). Prints a Markdown table;
// its last column is the line's `ms`, the Worker's time for the call (one
// sample, on wrangler dev: a hint, not a latency figure).
//
// --check exits 1 when a query the goal covers reads 1,000 rows or more,
// or any page reads more than its bound: the version twice, then for each
// post the statement fetches (a page and one more, and the one more each
// of the two parts of the index yields for the merge to compare before it
// stops) its index row, its post row and its row of `live` (whether it is
// open), and for each post whose words wait in `words_new` (at most 63:
// store::PENDING_MAX less one) its row there, a row of the needles' JSON
// for each needle it holds until one it lacks, and, when it matches, its
// post and its row of `live` (PAGE_BOUND, and NEEDLE_ROWS a needle). A
// page past the first reads
// none of those (they are newer than its cursor) but the two rows of
// `words_new`'s walk down from it: DEEP_BOUND. A query of words adds a few
// rows for each (kind, term) pair it asks (TERM_ROWS): the statement reads
// its terms and kinds from JSON, seeks each in the hot set, and groups them
// by kind to choose the part of the index that answers each kind; none of
// that grows with the list. The terms are counted as the list asks them
// (`asked`, below: a word another implies is not asked, and eight terms at
// most). More than that is a walk past the page (rows above the cursor, or
// a whole list), which a small D1 shows as surely as a large one.
import { readFileSync } from "node:fs";

const [base, log, count, flag] = process.argv.slice(2);
const posts = Number(count);
if (!base || !log || !(posts > 0)) {
  console.error("usage: node bench/d1-rows-read.mjs BASE LOG POSTS [--check]");
  process.exit(2);
}
const GOAL = 1000;
const PAGE_BOUND = 2 + 3 * (101 + 2) + 3 * 63;
const DEEP_BOUND = 2 + 3 * (101 + 2) + 2;
const NEEDLE_ROWS = 63;
const TERM_ROWS = 6;
// The terms a query asks the index for at most (search::MAX_TERMS).
const MAX_TERMS = 8;
// Characters of the scripts written without spaces (rules::words::unspaced):
// a run of them is asked as its pairs.
const UNSPACED =
  /[\u0E00-\u0EFF\u1000-\u109F\u1780-\u17FF\u3000-\u30FF\u3100-\u312F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF\uFF66-\uFF9F\u{20000}-\u{3FFFF}]/u;
// The terms a query asks for (search::Words's each_term): each spaced
// piece of a word, each pair of an unspaced run (a run of one is itself),
// of the words that no other word implies (one that another begins with,
// or the same word again), the first eight.
const asked = (q) => {
  const words = q.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w);
  const all = [];
  words.forEach((word, i) => {
    if (words.some((u, j) => j !== i && u.startsWith(word) && (u.length > word.length || j < i))) return;
    for (const piece of word.match(new RegExp(`${UNSPACED.source}+|[^${UNSPACED.source.slice(1, -1)}]+`, "gu")) || []) {
      const chars = [...piece];
      if (!UNSPACED.test(chars[0]) || chars.length === 1) all.push(piece);
      else for (let k = 0; k + 1 < chars.length; k++) all.push(chars[k] + chars[k + 1]);
    }
  });
  return all.slice(0, MAX_TERMS);
};
// The terms of a query string's `q`, as many as it asks.
const termsOf = (qs) => {
  const q = new URLSearchParams(qs).get("q");
  return q ? asked(q).length : 0;
};
// The (kind, term) pairs of a query string: each term of `q`, for the kind
// asked or for both.
const terms = (qs) => termsOf(qs) * (qs.includes("kind=") ? 1 : 2);
// The needles a waiting post is checked against: the terms, and the kind's
// term when a kind is asked.
const needles = (qs) => (termsOf(qs) ? termsOf(qs) + (qs.includes("kind=") ? 1 : 0) : 0);
// The deepest page asked for: the 100th, or the last full one of a smaller
// list (`gpu` is in 10% of the notes, each kind in half).
const deepest = (share) => Math.max(1, Math.min(100, Math.floor((posts * share) / 100)));
const GPU_PAGE = deepest(0.1);
const KIND_PAGE = deepest(0.5);
// The long word half the notes hold (bench/src/corpus.rs, `COMMON`), and
// it beside a letter each of those notes holds a word of, for seven letters.
const LONG = "commonword";
const LONG_AND_LETTERS = "commonword b c d f g h j";
// A query as long as one may be, of a script written without spaces: a
// hundred Han letters, each pair new (bench/src/search.rs, HAN_RUN).
const HAN_RUN = Array.from({ length: 100 }, (_, k) => String.fromCodePoint(0x4e00 + 7 * k)).join("");
const q = (words) => `?q=${encodeURIComponent(words).replace(/%20/g, "+")}`;
const nth = (n) => `${n}${n % 10 === 1 && n !== 11 ? "st" : n % 10 === 2 && n !== 12 ? "nd" : n % 10 === 3 && n !== 13 ? "rd" : "th"}`;

// The Worker's request lines so far (wrangler adds lines of its own).
function lines() {
  return readFileSync(log, "utf8")
    .split("\n")
    .flatMap((l) => {
      const at = l.indexOf('{"method"');
      if (at < 0) return [];
      try {
        return [JSON.parse(l.slice(at).trim())];
      } catch {
        return [];
      }
    });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One request and its log line: {status, body, etag, line}.
async function call(path, headers = {}, init = {}) {
  const seen = lines().length;
  const res = await fetch(base + path, { headers, ...init });
  const body = await res.text();
  // wrangler writes the console a moment after the answer.
  for (let i = 0; i < 200; i++) {
    const all = lines();
    if (all.length > seen) {
      if (all.length > seen + 1) throw new Error(`more than one log line for ${path}`);
      return { status: res.status, body, etag: res.headers.get("etag"), line: all[seen] };
    }
    await sleep(50);
  }
  throw new Error(`no log line for ${path} after 10 s`);
}

// A page's posts and its `next`.
const parsed = (r) => (r.status === 200 ? JSON.parse(r.body) : { posts: [] });

// name, the query string, pages walked before the one measured, whether
// the goal covers it, and whether to send the page's own tag back (a 304).
const QUERIES = [
  { name: "bare list (GET /posts), first call", qs: "" },
  { name: "bare list again (its answer kept)", qs: "" },
  { name: "kind=have", qs: "?kind=have" },
  { name: `${nth(KIND_PAGE)} page of kind=have`, qs: "?kind=have", skip: KIND_PAGE - 1 },
  { name: "q of a rare word (x7fq, 1 post)", qs: "?q=x7fq", goal: true },
  { name: "q of a word in 10% (gpu)", qs: "?q=gpu", goal: true },
  { name: "two words (gpu tonight)", qs: "?q=gpu+tonight", goal: true },
  { name: "a prefix of one letter (l)", qs: "?q=l", goal: true },
  { name: "CJK (自行车, 5%)", qs: `?q=${encodeURIComponent("自行车")}`, goal: true },
  { name: "kind=need and gpu (no post matches)", qs: "?kind=need&q=gpu" },
  { name: `${nth(GPU_PAGE)} page of gpu`, qs: "?q=gpu", skip: GPU_PAGE - 1, goal: true },
  { name: "304 (gpu, If-None-Match its tag)", qs: "?q=gpu", revalidate: true },
  { name: `a long word in 50% (${LONG})`, qs: q(LONG), goal: true },
  { name: "its first nine letters (commonwor)", qs: q("commonwor"), goal: true },
  { name: `the long word and seven letters (${LONG_AND_LETTERS})`, qs: q(LONG_AND_LETTERS), goal: true },
  { name: "seven letters (b c d f g h j)", qs: q("b c d f g h j"), goal: true },
  { name: "the long word eight times", qs: q(`${LONG} `.repeat(8).trim()), goal: true },
  { name: "the long word and seven of its prefixes", qs: q("c co com comm commo common commonw commonword"), goal: true },
  { name: "a rare word and the long word (x7fq commonword)", qs: q("x7fq commonword"), goal: true },
  { name: "a word no note holds, eight letters of the long one (commonwox)", qs: q("commonwox"), goal: true },
  { name: "kind=need, the long word and seven letters", qs: `?kind=need&${q(LONG_AND_LETTERS).slice(1)}`, goal: true },
  { name: "the long word and CJK in one word (commonword自行车)", qs: q("commonword自行车"), goal: true },
  { name: "CJK and Latin, eight words", qs: q("我有 一辆 自行车 commonword b c d f"), goal: true },
  { name: "a run of 100 Han letters no note holds (99 pairs)", qs: q(HAN_RUN), goal: true },
  {
    name: `${nth(KIND_PAGE)} page of the long word and seven letters`,
    qs: q(LONG_AND_LETTERS),
    skip: KIND_PAGE - 1,
    goal: true,
  },
];

const rows = [];
let failed = false;
for (const q of QUERIES) {
  let qs = q.qs;
  for (let i = 0; i < (q.skip || 0); i++) {
    const { next } = parsed(await call("/posts" + qs));
    if (!next) throw new Error(`${q.name}: no page ${i + 2}`);
    qs = `${q.qs}&before=${next}`;
  }
  let r = await call("/posts" + qs);
  if (q.revalidate) r = await call("/posts" + qs, { "if-none-match": r.etag });
  const want = q.revalidate ? 304 : 200;
  if (r.status !== want) throw new Error(`${q.name}: status ${r.status}, want ${want}: ${r.body.slice(0, 200)}`);
  const read = r.line.rows_read;
  if (typeof read !== "number") throw new Error(`${q.name}: the log line has no rows_read: ${JSON.stringify(r.line)}`);
  const met = read < GOAL;
  if (q.goal && !met) failed = `${q.name} read ${read} rows, the goal is under ${GOAL}`;
  const bound = (q.skip ? DEEP_BOUND : PAGE_BOUND + NEEDLE_ROWS * needles(q.qs)) + TERM_ROWS * terms(q.qs);
  if (read > bound) failed = `${q.name} read ${read} rows, more than a page's ${bound}`;
  rows.push([
    q.name,
    `\`GET /posts${qs.length > 60 ? qs.slice(0, 40) + "…" : qs}\``,
    String(parsed(r).posts.length),
    read.toLocaleString("en-US"),
    q.goal ? (met ? "yes" : "**no**") : met ? "(yes)" : "(no)",
    String(r.line.ms),
  ]);
}

console.log("| query | call | posts on the page | D1 rows read | under 1,000 | ms |");
console.log("|---|---|---|---|---|---|");
for (const r of rows) console.log(`| ${r.join(" | ")} |`);

// What a create costs D1: its statements' rows read and written (the
// guards, the insert, its words into words_new, and the move's test).
const note = `d1-rows-read create ${Date.now()}`;
const created = await call("/posts", { "content-type": "application/json" }, {
  method: "POST",
  body: JSON.stringify({ kind: "have", note }),
});
if (created.status !== 201) throw new Error(`create: status ${created.status}: ${created.body.slice(0, 200)}`);
console.log(
  `\ncreate (POST /posts, no move): D1 rows read ${created.line.rows_read}, rows written ${created.line.rows_written}`,
);
// Then creates until one moves the waiting words into the index (its rows
// written jump): what that create costs D1, each from its own address.
for (let i = 0; i < 64; i++) {
  const r = await call(
    "/posts",
    { "content-type": "application/json", "cf-connecting-ip": `10.77.${i >> 8}.${i & 255}` },
    { method: "POST", body: JSON.stringify({ kind: i % 2 ? "have" : "need", note: `${note} mover ${i} gpu tonight` }) },
  );
  if (r.status !== 201) throw new Error(`create ${i}: status ${r.status}: ${r.body.slice(0, 200)}`);
  if (r.line.rows_written > 100) {
    console.log(
      `create that moves (POST /posts, ${i + 2} creates after the seed): D1 rows read ${r.line.rows_read}, rows written ${r.line.rows_written}`,
    );
    break;
  }
}
if (flag === "--check" && failed) {
  console.error(`d1-rows-read: ${failed}`);
  process.exit(1);
}
