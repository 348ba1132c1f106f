// The checks in flow.mjs must be able to fail: a structuredContent that breaks
// its outputSchema, text that disagrees with it, an error result whose
// structuredContent the schema does not admit, and a missing schema (pending)
// are each caught. Run by .ci/mcp-clients before the clients.

import assert from "node:assert/strict";

import { TOOLS, checker } from "./flow.mjs";

const schema = {
  type: "object",
  properties: { id: { type: "string", pattern: "^[0-9a-f]{32}$" }, kind: { enum: ["need", "have"] } },
  required: ["id", "kind"],
  additionalProperties: false,
};
const tools = TOOLS.map((name) => ({
  name,
  title: name,
  description: name,
  inputSchema: { type: "object", additionalProperties: false },
  outputSchema: schema,
}));
const text = (v) => ({ content: [{ type: "text", text: JSON.stringify(v) }], structuredContent: v, isError: false });
const good = { id: "0".repeat(32), kind: "need" };

const check = checker(tools, "selftest");
assert.deepEqual(check.ok("read_post", text(good)), good);
assert.throws(() => check.ok("read_post", text({ id: "x", kind: "need" })), /does not validate/, "pattern");
assert.throws(() => check.ok("read_post", text({ ...good, extra: 1 })), /does not validate/, "additionalProperties");
assert.throws(() => check.ok("read_post", { ...text(good), structuredContent: { ...good, kind: "have" } }), /text vs structuredContent/);
const refused = { content: [{ type: "text", text: '{"error":"not_found"}' }], isError: true };
check.refused("read_post", refused, "not_found");
assert.throws(() => check.refused("read_post", { ...refused, structuredContent: { error: "not_found" } }, "not_found"), /does not validate/);
assert.throws(() => check.refused("read_post", text(good), "not_found"), /isError|AssertionError/);
assert.equal(check.pending.length, 0);

const noSchema = checker(tools.map(({ outputSchema, ...t }) => t), "selftest");
assert.match(noSchema.pending.join(), /no outputSchema on list_posts/);
assert.throws(() => checker(tools.slice(1), "selftest"), /table's order/);

console.log("PASS flow.mjs self-test: bad structuredContent, text mismatch, error results and missing schemas are caught");
