// The Worker's cold start beside the baseline's, split into the runtime's
// part and the Worker's. Run by bench/cold-start.sh (which builds both
// Workers first); usage: node bench/cold-start.mjs RUNS OURS_DIR BASE_DIR.
//
// Why Miniflare and not `wrangler dev`: wrangler's proxy listens before
// workerd has loaded the Worker, so the time to its first answer mostly
// holds workerd's own start (about 1 s, the same for every Worker).
// Miniflare is what `wrangler dev` runs underneath; driven directly, it
// tells when workerd is ready (`await mf.ready`: workerd has built every
// service and listens), and a probe module logs when the Worker's own
// modules start and finish evaluating, which is when workerd compiles the
// .wasm and runs its top level (`new WebAssembly.Instance`,
// `__wbindgen_start`) — at config load, before ready, not at the first
// request. So each launch is cut into:
//
//   load     probe start -> probe end: our modules' top level, i.e. the
//            wasm's instantiation and the glue (what scales with the wasm)
//   ready    spawn -> `mf.ready`: workerd's start, load included
//   first    ready -> first answer: what the first request pays once
//            (V8 compiling lazily the wasm functions it runs, the first D1
//            call's setup)
//   warm     median of the next WARM answers
//
// The same launch is made for `empty`, a JavaScript Worker with the same D1
// binding that answers one D1 query: the runtime's floor. Launches alternate
// (baseline, ours GET /posts, ours GET /, empty) with the same options, and
// each prints its own row; the summary gives medians, spread (min-max) and
// the ratio ours/baseline of every interval.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Miniflare } from "miniflare";

// BEFORE_DIR, optional: an earlier build of ours, measured in the same
// rounds (rows "before …"), for a before/after of a change.
const [runsArg, oursDir, baseDir, beforeDir] = process.argv.slice(2);
const RUNS = Number(runsArg ?? 7);
const WARM = Number(process.env.WARM ?? 20);
const ENGINE = Number(process.env.ENGINE ?? 30);
const ROOT = resolve(new URL("..", import.meta.url).pathname);
const COMPAT = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(
  readFileSync(join(ROOT, "wrangler.toml"), "utf8"),
)[1];

// The statement of our GET /posts (needhave/src/handlers/posts.rs: the
// `page_sql!` template around `PAGE_SQL`'s rows), for the JavaScript floor
// that makes the same D1 call, with the binds of a first read of the bare
// list (no version held or kept, 100 posts and one more, from the top).
const POSTS_RS = readFileSync(join(ROOT, "needhave/src/handlers/posts.rs"), "utf8");
const literals = (text) =>
  [...text.matchAll(/"((?:[^"\\]|\\.)*)"/gs)].map((m) => m[1].replace(/\\\n\s*/g, "")).join("");
const [sqlHead, sqlTail] = /macro_rules! page_sql \{.*?concat!\((.*?)\$rows,(.*?)\)\s*\};/s
  .exec(POSTS_RS)
  .slice(1)
  .map(literals);
const rows = literals(/const PAGE_SQL: &str =\s*page_sql!\((.*?)\);/s.exec(POSTS_RS)[1]);
const LIST_SQL = sqlHead + rows + sqlTail;
const LIST_BINDS = [-1, -1, 101, 2 ** 53];
const work = mkdtempSync(join(tmpdir(), "needhave-cold-start-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));

// A worker-build output (index.js + index_bg.wasm) behind two probe modules.
// An ES module's imports evaluate in source order, so `probe-start` logs
// before index.js runs its top level and `probe-end` right after.
function rustWorker(dir) {
  return [
    {
      type: "ESModule",
      path: join(dir, "entry.mjs"),
      contents:
        'import "./probe-start.mjs";\nexport { default } from "./index.js";\nimport "./probe-end.mjs";\n',
    },
    probe("start", dir),
    { type: "ESModule", path: join(dir, "index.js") },
    { type: "CompiledWasm", path: join(dir, "index_bg.wasm") },
    probe("end", dir),
  ];
}
// workerd's clock runs at a module's top level (inside a request it stands
// still until the next I/O), so the probes time the load from inside, to
// the millisecond, and log it.
function probe(name, dir) {
  const contents =
    name === "start"
      ? "globalThis.__nhLoad = Date.now();\n"
      : 'console.log(`nh-probe load ${Date.now() - globalThis.__nhLoad}`);\n';
  return { type: "ESModule", path: join(dir, `probe-${name}.mjs`), contents };
}
// A JavaScript Worker with nothing in it but its D1 call: the runtime's
// floor. `plain` makes the baseline's call (`prepare(…).all()`); `sessions`
// makes ours for GET /posts (a session, a batch of the list's statement).
const JS_FETCH = {
  asset:
    'export default { async fetch(req, env) { const r = await env.ASSETS.fetch("https://assets.local/index.html"); return new Response(await r.text(), { headers: { "content-type": "text/html" } }); } };\n',
  plain:
    'export default { async fetch(req, env) { const r = await env.DB.prepare("SELECT 1 AS one").all(); return Response.json(r.results); } };\n',
  sessions: `export default { async fetch(req, env) {
  const s = env.DB.withSession("first-unconstrained");
  const [r] = await s.batch([s.prepare(${JSON.stringify(LIST_SQL)}).bind(...${JSON.stringify(LIST_BINDS)})]);
  return Response.json({ posts: r.results, bookmark: s.getBookmark() });
} };
`,
};
function jsWorker(kind) {
  const dir = join(work, `js-${kind}`);
  return [
    {
      type: "ESModule",
      path: join(dir, "entry.mjs"),
      contents:
        'import "./probe-start.mjs";\nexport { default } from "./worker.mjs";\nimport "./probe-end.mjs";\n',
    },
    probe("start", dir),
    {
      type: "ESModule",
      path: join(dir, "worker.mjs"),
      contents: JS_FETCH[kind],
    },
    probe("end", dir),
  ];
}

// MCP's `tools/list`, the first call of most MCP sessions after
// `initialize`: answered from the checked-in MCP document.
const TOOLS_LIST = {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
};
// The documents as static assets, as wrangler.toml deploys them: the Worker
// first on every request, reading them through the binding. Ours and a build
// given as BEFORE both run so, whether or not their Worker reads them, so
// that both pay Miniflare's router in front alike (production's is the
// platform's own, not JavaScript run in the isolate's process); `js asset`
// is the runtime's floor for one document fetched through the binding.
const ASSETS = {
  directory: join(ROOT, "needhave", "documents"),
  binding: "ASSETS",
  routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
  assetConfig: { html_handling: "none", not_found_handling: "none" },
};
const oursRoot = resolve(oursDir);
const beforeRoot = beforeDir && resolve(beforeDir);
const WORKERS = {
  baseline: { root: resolve(baseDir), modules: rustWorker(resolve(baseDir)), path: "/", persist: "baseline" },
  "ours GET /posts": { root: oursRoot, modules: rustWorker(oursRoot), path: "/posts", persist: "ours", assets: true },
  "ours GET /": { root: oursRoot, modules: rustWorker(oursRoot), path: "/", persist: "ours", assets: true },
  "ours MCP tools/list": { root: oursRoot, modules: rustWorker(oursRoot), path: "/mcp", init: TOOLS_LIST, persist: "ours", assets: true },
  ...(beforeRoot && {
    "before GET /posts": { root: beforeRoot, modules: rustWorker(beforeRoot), path: "/posts", persist: "ours", assets: true },
    "before GET /": { root: beforeRoot, modules: rustWorker(beforeRoot), path: "/", persist: "ours", assets: true },
    "before MCP tools/list": { root: beforeRoot, modules: rustWorker(beforeRoot), path: "/mcp", init: TOOLS_LIST, persist: "ours", assets: true },
  }),
  "js plain": { root: join(work, "js-plain"), modules: jsWorker("plain"), path: "/", persist: "baseline" },
  "js sessions": { root: join(work, "js-sessions"), modules: jsWorker("sessions"), path: "/", persist: "ours" },
  "js asset": { root: join(work, "js-asset"), modules: jsWorker("asset"), path: "/", persist: "ours", assets: true },
};

function options(w, stdio) {
  return {
    modules: w.modules,
    modulesRoot: w.root,
    compatibilityDate: COMPAT,
    host: "127.0.0.1",
    port: 0,
    d1Databases: { DB: "00000000-0000-0000-0000-000000000000" },
    d1Persist: join(work, w.persist),
    bindings: { IP_SALT: "cold-start" },
    handleRuntimeStdio: stdio,
    // The assets' router calls the Worker by its name.
    ...(w.assets && { name: "needhave", assets: { ...ASSETS, workerName: "needhave" } }),
  };
}

// Our schema, once, into our persisted D1 (reads then find their tables).
async function seed() {
  const mf = new Miniflare(options(WORKERS["ours GET /"], () => {}));
  await mf.ready;
  const db = await mf.getD1Database("DB");
  const parts = readFileSync(join(ROOT, "schema.sql"), "utf8")
    .replace(/--.*$/gm, "")
    .split(";")
    .map((s) => s.trim())
    .filter(Boolean);
  // A trigger's body holds statements of its own: it runs to its `END`.
  const sql = [];
  let trigger = null;
  for (const part of parts) {
    if (trigger !== null) {
      trigger += `;\n${part}`;
      if (/^END$/i.test(part)) [sql[sql.length], trigger] = [trigger, null];
    } else if (/^CREATE TRIGGER/i.test(part)) {
      trigger = part;
    } else {
      sql.push(part);
    }
  }
  await db.batch(sql.map((s) => db.prepare(s)));
  // The floor's statement is read out of posts.rs's source; where that
  // reading no longer gives the list's statement, the row is left out
  // rather than timing a failing call.
  try {
    await db.prepare(LIST_SQL).bind(...LIST_BINDS).all();
  } catch (e) {
    console.error(`js sessions left out: the list's statement, as read from posts.rs, fails (${e.message})`);
    delete WORKERS["js sessions"];
  }
  await mf.dispose();
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

// CPU time besides wall time: on a machine other work shares, a wall time
// holds however long workerd waited for a core, its CPU time hardly. The
// workerd Miniflare spawned is this process's child; its CPU time is the sum
// of its threads' (/proc/PID/task/*/schedstat, nanoseconds), D1's simulator
// included (it runs in the same workerd, for every Worker alike).
function workerdPid() {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat);
      if (comm === "workerd" && Number(rest.split(" ")[1]) === process.pid) return pid;
    } catch {
      // gone meanwhile
    }
  }
  throw new Error("no workerd child found");
}
function cpuMs(pid) {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return ns / 1e6;
}

async function launch(name) {
  const w = WORKERS[name];
  let load = NaN;
  const log = [];
  const t0 = now();
  const mf = new Miniflare(
    options(w, (stdout, stderr) => {
      for (const s of [stdout, stderr]) {
        s.setEncoding("utf8");
        s.on("data", (chunk) => {
          const m = /nh-probe load (\d+)/.exec(chunk);
          if (m) load = Number(m[1]);
          log.push(chunk);
        });
      }
    }),
  );
  const url = await mf.ready.catch((e) => {
    process.stderr.write(log.join(""));
    throw e;
  });
  const t1 = now();
  const pid = workerdPid();
  const c1 = cpuMs(pid);
  // Whether the Worker's top level had run (and logged) by ready: when
  // workerd instantiates the Worker, at config load or at the first request.
  const loadedBeforeReady = !Number.isNaN(load);
  const target = new URL(w.path, url);
  const first = await mf.dispatchFetch(target, w.init);
  const status = first.status;
  const firstBody = await first.text();
  const t2 = now();
  const c2 = cpuMs(pid);
  const warm = [];
  for (let i = 0; i < WARM; i++) {
    const s = now();
    const r = await mf.dispatchFetch(target, w.init);
    await r.arrayBuffer();
    warm.push(now() - s);
  }
  const c3 = cpuMs(pid);
  await mf.dispose();
  if (status !== 200) {
    process.stderr.write(log.join(""));
    throw new Error(`${name}: first answer ${status} ${firstBody}`);
  }
  return {
    load,
    ready: t1 - t0,
    "ready cpu": c1,
    first: t2 - t1,
    "first cpu": c2 - c1,
    warm: median(warm),
    "warm cpu": (c3 - c2) / WARM,
    loadedBeforeReady,
  };
}

function median(xs) {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const ratio = (a, b) => (b > 0 ? `${(a / b).toFixed(2)}x` : "-");
const fmt = (x) => (Number.isNaN(x) ? "-" : x.toFixed(1));

// The part that scales with the .wasm, in isolation, in workerd's own V8
// (Node 20's V8 cannot compile these modules: they use Wasm exception
// references). One Worker's top level compiles and instantiates both files,
// alternately, ENGINE times each, and its fetch hands the samples back.
// Each compile gets the bytes with a custom section of its own appended, so
// that V8's cache of compiled modules (keyed by the bytes) never answers.
// The import object satisfies the declared imports without running any:
// instantiation needs none of them (`__wbindgen_start` is in load above).
async function engine(files) {
  const dir = join(work, "engine");
  mkdirSync(dir, { recursive: true });
  const names = Object.keys(files);
  names.forEach((n, i) => copyFileSync(files[n], join(dir, `m${i}.bin`)));
  const entry = `
${names.map((_, i) => `import m${i} from "./m${i}.bin";`).join("\n")}
const files = [${names.map((_, i) => `m${i}`).join(", ")}];
function unique(bytes, n) {
  const name = new TextEncoder().encode("nh-cold-start-" + n);
  const out = new Uint8Array(bytes.byteLength + name.length + 3);
  out.set(new Uint8Array(bytes));
  out.set([0, name.length + 1, name.length], bytes.byteLength);
  out.set(name, bytes.byteLength + 3);
  return out;
}
function stubs(mod) {
  const imports = {};
  for (const i of WebAssembly.Module.imports(mod)) {
    const ns = (imports[i.module] ??= {});
    ns[i.name] =
      i.kind === "function" ? () => { throw new Error("not in this bench"); }
      : i.kind === "tag" ? (i.name === "__wbindgen_jstag" ? WebAssembly.JSTag : new WebAssembly.Tag({ parameters: ["externref"] }))
      : i.kind === "memory" ? new WebAssembly.Memory({ initial: 17 })
      : i.kind === "table" ? new WebAssembly.Table({ initial: 0, element: "anyfunc" })
      : new WebAssembly.Global({ value: "i32", mutable: false }, 0);
  }
  return imports;
}
const samples = files.map(() => []);
for (let round = 0; round < ${ENGINE}; round++) {
  files.forEach((bytes, f) => {
    const b = unique(bytes, round * files.length + f);
    let t = Date.now();
    const mod = new WebAssembly.Module(b);
    const compile = Date.now() - t;
    const imports = stubs(mod);
    t = Date.now();
    new WebAssembly.Instance(mod, imports);
    samples[f].push({ compile, instantiate: Date.now() - t });
  });
}
export default { fetch() { return Response.json(samples); } };
`;
  const mf = new Miniflare({
    modules: [
      { type: "ESModule", path: join(dir, "entry.mjs"), contents: entry },
      ...names.map((_, i) => ({ type: "Data", path: join(dir, `m${i}.bin`) })),
    ],
    modulesRoot: dir,
    compatibilityDate: COMPAT,
    host: "127.0.0.1",
    port: 0,
  });
  const res = await mf.dispatchFetch("http://engine/");
  const samples = await res.json();
  await mf.dispose();
  return Object.fromEntries(names.map((n, i) => [n, samples[i]]));
}

await seed();
// One launch of each, not counted: the first workerd spawn of a process
// pays for loading the binary from disk, which is nobody's cold start.
for (const name of Object.keys(WORKERS)) await launch(name);

const results = Object.fromEntries(Object.keys(WORKERS).map((n) => [n, []]));
const COLS = ["load", "ready", "ready cpu", "first", "first cpu", "warm", "warm cpu"];
for (let i = 1; i <= RUNS; i++) {
  for (const name of Object.keys(WORKERS)) {
    const r = await launch(name);
    results[name].push(r);
    console.error(
      `run ${i}/${RUNS} ${name.padEnd(16)} ${COLS.map((c) => `${c} ${fmt(r[c])}`).join("  ")}`,
    );
  }
}

const NAMES = Object.keys(WORKERS);
const W = 19;
console.log(
  `medians of ${RUNS} launches, ms (min-max); workerd ${COMPAT}, ${WARM} warm answers a launch`,
);
console.log(["".padEnd(10), ...NAMES.map((n) => n.padStart(W))].join(""));
const med = Object.fromEntries(NAMES.map((n) => [n, {}]));
for (const c of COLS) {
  const cells = NAMES.map((name) => {
    const xs = results[name].map((r) => r[c]).filter((x) => !Number.isNaN(x));
    med[name][c] = median(xs);
    const spread = xs.length ? `(${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})` : "";
    return `${fmt(med[name][c])} ${spread}`.padStart(W);
  });
  console.log([c.padEnd(10), ...cells].join(""));
}
const early = Object.values(results).flat();
const before = early.filter((r) => r.loadedBeforeReady).length;
console.log(
  `the Worker's top level had run (and logged) by ready in ${before} of ${early.length} launches${before === early.length ? ": workerd instantiates at config load, not at the first request (and compiled the .wasm before that: it is imported as a compiled module)" : ""}`,
);
for (const ours of NAMES.filter((n) => /^(ours|before) /.test(n))) {
  const ratios = COLS.map((c) => `${c} ${ratio(med[ours][c], med.baseline[c])}`);
  console.log(`${ours} / baseline: ${ratios.join(", ")}`);
}
const wasm = {
  baseline: join(resolve(baseDir), "index_bg.wasm"),
  ours: join(resolve(oursDir), "index_bg.wasm"),
  ...(beforeDir && { before: join(resolve(beforeDir), "index_bg.wasm") }),
};
const eng = await engine(wasm);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `\nthe .wasm alone in workerd's V8, ${ENGINE} rounds alternating, ms (workerd's clock: whole ms, so means beside medians)`,
);
console.log(["".padEnd(18), "bytes".padStart(9), "compile median".padStart(16), "mean".padStart(8), "instantiate mean".padStart(18)].join(""));
const em = {};
for (const [name, xs] of Object.entries(eng)) {
  const c = xs.map((x) => x.compile);
  const i = xs.map((x) => x.instantiate);
  em[name] = { c: mean(c), i: mean(i) };
  console.log(
    [name.padEnd(18), String(statSync(wasm[name]).size).padStart(9), `${median(c)} (${Math.min(...c)}-${Math.max(...c)})`.padStart(16), em[name].c.toFixed(2).padStart(8), em[name].i.toFixed(2).padStart(18)].join(""),
  );
}
console.log(
  `ours / baseline: compile ${ratio(em.ours.c, em.baseline.c)}, instantiate ${ratio(em.ours.i, em.baseline.i)}, bytes ${ratio(statSync(wasm.ours).size, statSync(wasm.baseline).size)}`,
);

// The headline. In production an isolate is made when a request finds
// none, so the Worker's own cold start is compile + load + first answer;
// the runtime's start (ready) is the platform's and left out.
const engineOf = (n) => (n.startsWith("before") ? em.before : n === "baseline" ? em.baseline : em.ours);
const whole = (n, cpu) => engineOf(n).c + engineOf(n).i + med[n].load + med[n][cpu ? "first cpu" : "first"];
console.log("\ncold start of the Worker itself, ms: compile + instantiate (alone) + load + first answer");
for (const n of NAMES.filter((n) => !n.startsWith("js"))) {
  console.log(
    `${n.padEnd(18)} wall ${fmt(whole(n, false)).padStart(6)} (${ratio(whole(n, false), whole("baseline", false))} baseline)   cpu ${fmt(whole(n, true)).padStart(6)} (${ratio(whole(n, true), whole("baseline", true))} baseline)`,
  );
}
const floor = med["js sessions"]
  ? `ours GET /posts +${fmt(med["ours GET /posts"]["first cpu"] - med["js sessions"]["first cpu"])} ms, `
  : "";
console.log(
  `goal: ours GET /posts <= 1.50x baseline. Over the JavaScript floor making the same D1 call, first answer cpu: ${floor}baseline +${fmt(med.baseline["first cpu"] - med["js plain"]["first cpu"])} ms`,
);
