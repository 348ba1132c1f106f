// The MCP Inspector's CLI mode against needhave: tools/list (with --strict,
// the Inspector's tool-schema portability check) and tools/call, over
// Streamable HTTP and over stdio.
//
//   node inspector.mjs http  http://127.0.0.1:8787/mcp
//   node inspector.mjs stdio /path/to/needhave http://127.0.0.1:8787
//
// Exits nonzero on the first failed check.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const [mode, target, listUrl] = process.argv.slice(2);
const label = `inspector --cli ${mode}`;

const require = createRequire(import.meta.url);
const launcher = join(
  dirname(require.resolve("@modelcontextprotocol/inspector/package.json")),
  "clients/launcher/build/index.js",
);
// The Inspector keeps a catalog and secrets under HOME: give it a throwaway one.
const home = mkdtempSync(join(tmpdir(), "needhave-inspector-"));

function server() {
  if (mode === "http") return [target, "--transport", "http"];
  if (mode === "stdio") return ["-e", `NEEDHAVE_LIST_URL=${listUrl}`, "-e", "NEEDHAVE_LOG=warn", "--transport", "stdio", target, "mcp"];
  throw new Error(`usage: inspector.mjs http URL | stdio BIN LIST_URL (got ${mode})`);
}

/** Runs one Inspector CLI command; returns its exit code and parsed JSON. */
function inspector(...args) {
  const all = ["--cli", ...server(), ...args, "--format", "json"];
  const r = spawnSync(process.execPath, [launcher, ...all], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, HOME: home, NO_COLOR: "1" },
  });
  if (r.error) throw r.error;
  let out = null;
  try {
    out = JSON.parse(r.stdout);
  } catch {
    throw new Error(`not JSON from inspector ${args.join(" ")} (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return { code: r.status, out, stderr: r.stderr };
}

function payload(result) {
  const parsed = JSON.parse(result.content[0].text);
  assert.deepEqual(parsed, result.structuredContent);
  return parsed;
}

try {
  // tools/list, strict: exit 6 if any schema has an error-severity problem.
  const list = inspector("--method", "tools/list", "--strict");
  assert.equal(list.code, 0, `tools/list --strict exit ${list.code}: ${list.stderr}`);
  const names = list.out.result.tools.map((t) => t.name);
  assert.deepEqual(names, [
    "list_posts",
    "create_need",
    "create_have",
    "read_post",
    "write_first_reply",
    "accept_reply",
    "read_thread",
    "write_thread_message",
  ]);

  // tools/call that posts, then reads it back.
  const note = `inspector ${mode} need #${randomBytes(8).toString("hex")}`;
  const made = inspector("--method", "tools/call", "--tool-name", "create_need", "--tool-arg", `note=${note}`);
  assert.equal(made.code, 0, `create_need exit ${made.code}: ${made.stderr}`);
  assert.equal(made.out.result.isError, false);
  const post = payload(made.out.result);
  assert.equal(post.note, note);
  assert.match(post.secret, /^[0-9a-f]{64}$/);

  const read = inspector(
    "--method", "tools/call", "--tool-name", "read_post",
    "--tool-args-json", JSON.stringify({ id: post.id }),
  );
  assert.equal(read.code, 0, `read_post exit ${read.code}: ${read.stderr}`);
  assert.deepEqual(payload(read.out.result), { id: post.id, kind: "need", note });

  // A list rule: an isError result (the Inspector exits 5 for it), naming the code.
  const missing = inspector(
    "--method", "tools/call", "--tool-name", "read_post", "--tool-arg", `id=${"0".repeat(32)}`,
  );
  assert.equal(missing.code, 5, `read_post of nothing: exit ${missing.code}`);
  assert.equal(missing.out.result.isError, true);
  assert.match(missing.out.result.content[0].text, /not_found/);

  console.log(`PASS ${label}: tools/list --strict (8 tools), tools/call create_need + read_post, isError not_found`);
} catch (e) {
  console.error(`FAIL ${label}:`, e);
  process.exitCode = 1;
} finally {
  rmSync(home, { recursive: true, force: true });
}
