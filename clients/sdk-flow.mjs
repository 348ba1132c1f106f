// The official TypeScript SDK's Client against needhave, over Streamable
// HTTP or over stdio: connect, list the tools, run the whole flow, and see
// the list's rules come back as isError results.
//
//   node sdk-flow.mjs http  http://127.0.0.1:8787/mcp
//   node sdk-flow.mjs stdio /path/to/needhave http://127.0.0.1:8787
//
// Exits nonzero on the first failed check.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

const [mode, target, listUrl] = process.argv.slice(2);
const label = `sdk ${mode}`;

const TOOLS = [
  "list_posts",
  "create_need",
  "create_have",
  "read_post",
  "write_first_reply",
  "accept_reply",
  "read_thread",
  "write_thread_message",
];

function transport() {
  if (mode === "http") {
    return new StreamableHTTPClientTransport(new URL(target));
  }
  if (mode === "stdio") {
    // StdioClientTransport passes only HOME, PATH, … to the child unless
    // told: the list's URL must be given explicitly.
    return new StdioClientTransport({
      command: target,
      args: ["mcp"],
      env: { ...getDefaultEnvironment(), NEEDHAVE_LIST_URL: listUrl, NEEDHAVE_LOG: "warn" },
      stderr: "inherit",
    });
  }
  throw new Error(`usage: sdk-flow.mjs http URL | stdio BIN LIST_URL (got ${mode})`);
}

const note = (what) => `${what} from the SDK client #${randomBytes(8).toString("hex")}`;

/** A successful result: its structured content, checked against its text. */
function ok(result, what) {
  assert.equal(result.isError, false, `${what}: ${JSON.stringify(result)}`);
  assert.equal(result.content[0].type, "text");
  const parsed = JSON.parse(result.content[0].text);
  assert.deepEqual(parsed, result.structuredContent, `${what}: text vs structuredContent`);
  return parsed;
}

/** A list rule: isError, and the text names the code. */
function refused(result, code, what) {
  assert.equal(result.isError, true, `${what}: ${JSON.stringify(result)}`);
  assert.match(result.content[0].text, new RegExp(code), what);
}

const client = new Client({ name: "needhave-sdk-check", version: "1.0.0" });
const call = (name, args) => client.callTool({ name, arguments: args });

try {
  await client.connect(transport());

  const info = client.getServerVersion();
  assert.equal(info.name, "needhave");
  assert.ok(info.version);
  assert.ok(client.getServerCapabilities().tools, "capabilities.tools");
  assert.ok(client.getInstructions()?.includes("needs and haves"), "instructions");
  if (mode === "http") {
    // The SDK offered its latest and the server echoed it.
    assert.equal(client.transport.protocolVersion, "2025-11-25");
  }
  await client.ping();

  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), TOOLS);
  for (const t of tools) {
    assert.ok(t.title && t.description, `${t.name}: title and description`);
    assert.equal(t.inputSchema.type, "object");
    assert.equal(t.inputSchema.additionalProperties, false);
    assert.equal(t.annotations.destructiveHint, false);
  }

  // need → first reply → waiting → accept → respondent reads → writes → author reads
  const needNote = note("need");
  const post = ok(await call("create_need", { note: needNote }), "create_need");
  assert.match(post.id, /^[0-9a-f]{32}$/);
  assert.match(post.secret, /^[0-9a-f]{64}$/);
  assert.equal(post.kind, "need");
  const have = ok(await call("create_have", { note: note("have") }), "create_have");
  assert.equal(have.kind, "have");

  const listed = ok(await call("list_posts", {}), "list_posts");
  assert.ok(listed.posts.some((p) => p.id === post.id && p.note === needNote));
  assert.ok(!JSON.stringify(listed).includes(post.secret));
  assert.deepEqual(ok(await call("read_post", { id: post.id }), "read_post"), {
    id: post.id,
    kind: "need",
    note: needNote,
  });

  const first = ok(await call("write_first_reply", { post_id: post.id, text: "I can help" }), "write_first_reply");
  assert.equal(first.hidden, true);
  assert.deepEqual(
    ok(await call("read_thread", { message_id: first.id, secret: first.secret }), "read_thread early"),
    { accepted: false },
  );
  const waiting = ok(await call("accept_reply", { post_id: post.id, secret: post.secret }), "accept_reply list");
  assert.deepEqual(waiting, { messages: [{ id: first.id, text: "I can help" }] });
  const { thread_key } = ok(
    await call("accept_reply", { post_id: post.id, secret: post.secret, message_id: first.id }),
    "accept_reply accept",
  );
  assert.match(thread_key, /^[0-9a-f]{64}$/);
  const seen = ok(await call("read_thread", { message_id: first.id, secret: first.secret }), "read_thread respondent");
  assert.equal(seen.accepted, true);
  assert.equal(seen.thread_key, thread_key);
  assert.deepEqual(seen.messages, [{ id: first.id, text: "I can help" }]);
  const later = ok(await call("write_thread_message", { thread_key, text: "When?" }), "write_thread_message");
  assert.equal(later.post_id, post.id);
  assert.deepEqual(ok(await call("read_thread", { thread_key }), "read_thread author"), {
    post_id: post.id,
    messages: [
      { id: first.id, text: "I can help" },
      { id: later.id, text: "When?" },
    ],
  });

  // The rules, as isError results.
  refused(await call("create_need", { note: "   " }), "empty_note", "empty");
  refused(await call("create_have", { note: needNote }), "duplicate_note", "duplicate");
  refused(await call("accept_reply", { post_id: post.id, secret: "0".repeat(64) }), "bad_secret", "bad secret");
  refused(
    await call("accept_reply", { post_id: post.id, secret: post.secret, message_id: first.id }),
    "already_accepted",
    "accepted twice",
  );
  refused(await call("read_post", { id: "0".repeat(32) }), "not_found", "not found");

  // An unknown tool is a protocol error (-32602).
  await assert.rejects(call("no_such_tool", {}), (e) => e.code === -32602);

  await client.close();
  console.log(`PASS ${label}: connect, 8 tools, the full flow, 5 rules as isError`);
} catch (e) {
  console.error(`FAIL ${label}:`, e);
  await client.close().catch(() => {});
  process.exit(1);
}
