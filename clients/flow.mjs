// The one flow every JavaScript client runs against needhave (the TypeScript
// SDK 1.32.2, @modelcontextprotocol/client 2.4.0, the Inspector CLI), so that
// a difference between clients is a difference in the client, never in what
// was checked. The Python client (py_flow.py) runs the same steps.
//
// Every successful structuredContent is validated against the tool's
// outputSchema with ajv (the JSON Schema dialect the schema names, 2020-12 by
// default as both MCP revisions say). What the server owes beyond the flow
// (an outputSchema on every tool, argument errors as isError results, icons,
// serverInfo's description and websiteUrl) is collected and listed together,
// so one run names every gap; any of them fails the client (exit 1).

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const Ajv2020 = require("ajv/dist/2020.js").default;
const Ajv07 = require("ajv").default;
const addFormats = require("ajv-formats").default;

export const TOOLS = [
  "list_posts",
  "create_need",
  "create_have",
  "read_post",
  "write_first_reply",
  "accept_reply",
  "read_thread",
  "write_thread_message",
];

const HEX = (n) => new RegExp(`^[0-9a-f]{${n}}$`);

function ajvFor(schema) {
  const draft07 = typeof schema.$schema === "string" && schema.$schema.includes("draft-07");
  // strict: false lets a generator's own keywords (schemars' "format":
  // "uint64", …) through without failing the compile; types are still checked.
  const ajv = draft07 ? new Ajv07({ strict: false, allErrors: true }) : new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}

/**
 * Compiles each listed tool's outputSchema. Returns the validators by name,
 * and the names of the tools that have none (pending until every tool has one).
 */
export function outputValidators(tools) {
  const validators = new Map();
  const missing = [];
  for (const t of tools) {
    if (!t.outputSchema) {
      missing.push(t.name);
      continue;
    }
    assert.equal(t.outputSchema.type, "object", `${t.name}: outputSchema.type must be "object" (MCP)`);
    let validate;
    try {
      validate = ajvFor(t.outputSchema).compile(t.outputSchema);
    } catch (e) {
      throw new Error(`${t.name}: outputSchema does not compile: ${e.message}\n${JSON.stringify(t.outputSchema)}`);
    }
    validators.set(t.name, validate);
  }
  return { validators, missing };
}

/**
 * The checks every client shares, over `call(name, args)` (which resolves to
 * a CallToolResult, or rejects with an error carrying the JSON-RPC `code`).
 */
export function checker(tools, label) {
  assert.deepEqual(tools.map((t) => t.name), TOOLS, `${label}: tools in the table's order`);
  for (const t of tools) {
    assert.ok(t.title && t.description, `${t.name}: title and description`);
    assert.equal(t.inputSchema.type, "object", `${t.name}: inputSchema.type`);
    assert.equal(t.inputSchema.additionalProperties, false, `${t.name}: inputSchema.additionalProperties`);
  }
  const { validators, missing } = outputValidators(tools);
  const pending = [];
  if (missing.length) pending.push(`no outputSchema on ${missing.join(", ")}`);
  let validated = 0;

  function conforms(name, structured, what) {
    const validate = validators.get(name);
    if (!validate) return;
    if (!validate(structured)) {
      throw new Error(
        `${what}: structuredContent does not validate against ${name}'s outputSchema:\n` +
          `${JSON.stringify(validate.errors, null, 1)}\nstructuredContent: ${JSON.stringify(structured)}`,
      );
    }
    validated++;
  }

  return {
    pending,
    validatedCount: () => validated,
    /** A successful result: text and structuredContent agree and validate. */
    ok(name, result, what = name) {
      assert.notEqual(result.isError, true, `${what}: ${JSON.stringify(result)}`);
      assert.equal(result.content?.[0]?.type, "text", `${what}: content[0] is text`);
      const parsed = JSON.parse(result.content[0].text);
      assert.deepEqual(result.structuredContent, parsed, `${what}: text vs structuredContent`);
      conforms(name, result.structuredContent, what);
      return parsed;
    },
    /** A list rule: isError, the text names the code, structuredContent (if any) admitted by the schema. */
    refused(name, result, code, what = `${name} ${code}`) {
      assert.equal(result.isError, true, `${what}: ${JSON.stringify(result)}`);
      assert.match(result.content?.[0]?.text ?? "", new RegExp(code), `${what}: text names ${code}`);
      if (result.structuredContent !== undefined) conforms(name, result.structuredContent, `${what} (error result)`);
    },
  };
}

export const note = (what, who) => `${what} from ${who} #${randomBytes(8).toString("hex")}`;

/**
 * need → first reply → accept_reply (list) → read_thread by message_id+secret
 * before acceptance → accept_reply (accept) → read_thread by key →
 * read_thread by message_id+secret → write_thread_message (→ read it back).
 */
export async function fullFlow(call, check, who) {
  const needNote = note("need", who);
  const post = check.ok("create_need", await call("create_need", { note: needNote }));
  assert.match(post.id, HEX(32));
  assert.match(post.secret, HEX(64));
  assert.equal(post.kind, "need");
  assert.equal(post.note, needNote);

  // (create_have is refused below as a duplicate, not made: each client may
  // post 10 times an hour from its one IP, and seven share a list.)
  const listed = check.ok("list_posts", await call("list_posts", {}));
  assert.ok(listed.posts.some((p) => p.id === post.id && p.note === needNote), "list_posts: the new need");
  assert.ok(!JSON.stringify(listed).includes(post.secret), "list_posts: no secret");
  // A post's view carries its age and status: open, with no expiry given.
  const { created_at: createdAt, status, ...read } = check.ok("read_post", await call("read_post", { id: post.id }));
  assert.deepEqual(read, { id: post.id, kind: "need", note: needNote });
  assert.equal(status, "open", "read_post: a new post is open");
  assert.match(createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, "read_post: created_at in RFC 3339, UTC, milliseconds");

  const first = check.ok("write_first_reply", await call("write_first_reply", { post_id: post.id, text: "I can help" }));
  assert.match(first.id, HEX(32));
  assert.match(first.secret, HEX(64));
  assert.equal(first.hidden, true);

  const waiting = check.ok(
    "accept_reply",
    await call("accept_reply", { post_id: post.id, secret: post.secret }),
    "accept_reply (list)",
  );
  assert.deepEqual(waiting, { messages: [{ id: first.id, text: "I can help" }] });

  const early = check.ok(
    "read_thread",
    await call("read_thread", { message_id: first.id, secret: first.secret }),
    "read_thread by message_id+secret before acceptance",
  );
  assert.deepEqual(early, { accepted: false }, "before acceptance: accepted false, no key, no messages");

  const { thread_key } = check.ok(
    "accept_reply",
    await call("accept_reply", { post_id: post.id, secret: post.secret, message_id: first.id }),
    "accept_reply (accept)",
  );
  assert.match(thread_key, HEX(64));

  const byKey = check.ok("read_thread", await call("read_thread", { thread_key }), "read_thread by key");
  assert.deepEqual(byKey, { post_id: post.id, messages: [{ id: first.id, text: "I can help" }] });

  const seen = check.ok(
    "read_thread",
    await call("read_thread", { message_id: first.id, secret: first.secret }),
    "read_thread by message_id+secret after acceptance",
  );
  assert.equal(seen.accepted, true, "after acceptance: accepted");
  assert.equal(seen.thread_key, thread_key, "after acceptance: the same thread key");
  assert.deepEqual(seen.messages, [{ id: first.id, text: "I can help" }], "after acceptance: the messages");

  const later = check.ok("write_thread_message", await call("write_thread_message", { thread_key, text: "When?" }));
  assert.equal(later.post_id, post.id);
  assert.match(later.id, HEX(32));
  const after = check.ok("read_thread", await call("read_thread", { thread_key }), "read_thread after the message");
  assert.deepEqual(after.messages, [
    { id: first.id, text: "I can help" },
    { id: later.id, text: "When?" },
  ]);
  return { post, first, thread_key, needNote };
}

/** The list's rules as isError results, and argument errors as isError results (not -32602). */
export async function rules(call, check, { post, first, needNote }, { unknownTool = true } = {}) {
  check.refused("create_need", await call("create_need", { note: "   " }), "empty_note");
  check.refused("create_have", await call("create_have", { note: needNote }), "duplicate_note");
  check.refused("accept_reply", await call("accept_reply", { post_id: post.id, secret: "0".repeat(64) }), "bad_secret");
  check.refused(
    "accept_reply",
    await call("accept_reply", { post_id: post.id, secret: post.secret, message_id: first.id }),
    "already_accepted",
  );
  check.refused("read_post", await call("read_post", { id: "0".repeat(32) }), "not_found");

  // Missing, mistyped and extra arguments: isError results naming the argument (SEP-1303).
  const bad = [
    ["create_need", {}, "note", "missing"],
    ["create_need", { note: 7 }, "note", "mistyped"],
    ["read_post", { id: post.id, nope: 1 }, "nope", "extra"],
  ];
  for (const [name, args, field, kind] of bad) {
    let result;
    try {
      result = await call(name, args);
    } catch (e) {
      if (e.code === undefined) throw e; // not a protocol error: a broken client or transport
      check.pending.push(`${kind} argument to ${name} is a JSON-RPC error ${e.code ?? ""} (${String(e.message).slice(0, 80)}), not an isError result`);
      continue;
    }
    assert.equal(result.isError, true, `${kind} argument to ${name}: ${JSON.stringify(result)}`);
    assert.match(result.content[0].text, new RegExp(field), `${kind} argument to ${name}: the text names ${field}`);
    if (result.structuredContent !== undefined) check.refused(name, result, "", `${kind} argument to ${name}`);
  }

  // An unknown tool stays a protocol error (-32602). (The Inspector refuses
  // an unlisted tool itself, before sending: there it cannot be checked.)
  if (unknownTool) await assert.rejects(call("no_such_tool", {}), (e) => e.code === -32602, "unknown tool: -32602");
}

/** Prints the verdict: PASS, or FAIL (exit code 1) when anything the server owes is missing. */
export function finish(label, check, summary) {
  if (check.pending.length) {
    console.log(`FAIL ${label}: ${summary}; ${check.validatedCount()} results validated against outputSchema; missing:`);
    for (const p of check.pending) console.log(`  - ${p}`);
    process.exitCode = 1;
  } else {
    console.log(`PASS ${label}: ${summary}; ${check.validatedCount()} results validated against outputSchema`);
  }
}
