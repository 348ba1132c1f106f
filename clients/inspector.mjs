// The MCP Inspector's CLI mode (2.12) against needhave, in one protocol era,
// over Streamable HTTP or stdio: tools/list --strict (the Inspector's
// tool-schema portability check), then the shared flow (flow.mjs), one
// Inspector process per call, as a user scripting the Inspector would.
//
//   node inspector.mjs ERA http  http://127.0.0.1:8787/mcp
//   node inspector.mjs ERA stdio /path/to/needhave http://127.0.0.1:8787
//
// ERA: modern (--protocol-era modern: the Inspector pins 2026-07-28, no
// fallback) or legacy (the 2025 initialize handshake).
// Exit: 0 pass, 1 fail.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { checker, finish, fullFlow, rules } from "./flow.mjs";

const [era, mode, target, listUrl] = process.argv.slice(2);
const label = `inspector --cli --protocol-era ${era} ${mode}`;
if (!["modern", "legacy"].includes(era) || !["http", "stdio"].includes(mode)) {
  console.error("usage: inspector.mjs modern|legacy http URL | stdio BIN LIST_URL");
  process.exit(2);
}

const require = createRequire(import.meta.url);
const launcher = join(
  dirname(require.resolve("@modelcontextprotocol/inspector/package.json")),
  "clients/launcher/build/index.js",
);
// The Inspector keeps a catalog and secrets under HOME: give it a throwaway one.
const home = mkdtempSync(join(tmpdir(), "needhave-inspector-"));

function server() {
  if (mode === "http") return [target, "--transport", "http"];
  return ["-e", `NEEDHAVE_LIST_URL=${listUrl}`, "-e", "NEEDHAVE_LOG=warn", "--transport", "stdio", target, "mcp"];
}

/** Runs one Inspector CLI command; returns its exit code and parsed JSON. */
function inspector(...args) {
  const all = ["--cli", ...server(), "--protocol-era", era, ...args, "--format", "json"];
  const r = spawnSync(process.execPath, [launcher, ...all], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, HOME: home, NO_COLOR: "1" },
  });
  if (r.error) throw r.error;
  // A result comes on stdout; an error (also JSON) on stderr.
  let out = null;
  for (const text of [r.stdout, r.stderr]) {
    try {
      out = JSON.parse(text);
      break;
    } catch {}
  }
  if (out === null) throw new Error(`not JSON from inspector ${args.join(" ")} (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  return { code: r.status, out, stderr: r.stderr };
}

/** tools/call as the flow wants it: a CallToolResult, or a rejection for a protocol error. */
async function call(name, args) {
  const r = inspector("--method", "tools/call", "--tool-name", name, "--tool-args-json", JSON.stringify(args));
  if (r.out.result) {
    // The Inspector exits 5 for an isError result, 0 for a success.
    assert.equal(r.code, r.out.result.isError ? 5 : 0, `${name}: exit ${r.code}`);
    return r.out.result;
  }
  const e = new Error(r.out.error?.message ?? JSON.stringify(r.out));
  e.code = r.out.error?.code;
  throw e;
}

try {
  const list = inspector("--method", "tools/list", "--strict");
  assert.equal(list.code, 0, `tools/list --strict exit ${list.code}: ${JSON.stringify(list.out)} ${list.stderr}`);
  const check = checker(list.out.result.tools, label);
  const flow = await fullFlow(call, check, `inspector ${era}`);
  await rules(call, check, flow, { unknownTool: false });
  finish(label, check, "tools/list --strict (8 tools), the full flow, the rules");
} catch (e) {
  console.error(`FAIL ${label}:`, e);
  process.exitCode = 1;
} finally {
  rmSync(home, { recursive: true, force: true });
}
process.exit(process.exitCode ?? 0);
