// An official TypeScript MCP client against needhave, over Streamable HTTP or
// stdio, running the shared flow (flow.mjs):
//
//   node ts-flow.mjs SDK NEGOTIATION http  http://127.0.0.1:8787/mcp
//   node ts-flow.mjs SDK NEGOTIATION stdio /path/to/needhave http://127.0.0.1:8787
//
// SDK: sdk1 (@modelcontextprotocol/sdk 1.32.2, 2025 revisions only) or
// client2 (@modelcontextprotocol/client 2.4.0, the 2026-07-28 line).
// NEGOTIATION (client2 only): legacy, pin (versionNegotiation
// { pin: "2026-07-28" }: server/discover must offer it, no fallback) or auto
// (probe with server/discover, fall back to initialize; since needhave speaks
// 2026-07-28, auto must end up modern).
// Exit: 0 pass, 1 fail.

import assert from "node:assert/strict";

import { checker, finish, fullFlow, rules } from "./flow.mjs";

const [sdk, negotiation, mode, target, listUrl] = process.argv.slice(2);
const label = `${sdk} ${negotiation} ${mode}`;
const MODERN = "2026-07-28";

const SDKS = {
  sdk1: {
    client: "@modelcontextprotocol/sdk/client/index.js",
    http: "@modelcontextprotocol/sdk/client/streamableHttp.js",
    stdio: "@modelcontextprotocol/sdk/client/stdio.js",
  },
  client2: {
    client: "@modelcontextprotocol/client",
    http: "@modelcontextprotocol/client",
    stdio: "@modelcontextprotocol/client/stdio",
  },
};

function usage() {
  console.error("usage: ts-flow.mjs sdk1|client2 legacy|pin|auto http URL | stdio BIN LIST_URL");
  process.exit(2);
}
if (!SDKS[sdk] || !["legacy", "pin", "auto"].includes(negotiation) || !["http", "stdio"].includes(mode)) usage();
if (sdk === "sdk1" && negotiation !== "legacy") usage();

const { Client } = await import(SDKS[sdk].client);

async function transport() {
  if (mode === "http") {
    const { StreamableHTTPClientTransport } = await import(SDKS[sdk].http);
    return new StreamableHTTPClientTransport(new URL(target));
  }
  const { StdioClientTransport, getDefaultEnvironment } = await import(SDKS[sdk].stdio);
  // The transport passes only HOME, PATH, … to the child unless told.
  return new StdioClientTransport({
    command: target,
    args: ["mcp"],
    env: { ...getDefaultEnvironment(), NEEDHAVE_LIST_URL: listUrl, NEEDHAVE_LOG: "warn" },
    stderr: "inherit",
  });
}

const options = {};
if (negotiation === "pin") options.versionNegotiation = { mode: { pin: MODERN } };
if (negotiation === "auto") options.versionNegotiation = { mode: "auto" };
const client = new Client({ name: `needhave-check-${sdk}-${negotiation}`, version: "1.0.0" }, options);
const call = (name, args) => client.callTool({ name, arguments: args });

try {
  await client.connect(await transport());

  const modern = negotiation !== "legacy";
  const version = client.getNegotiatedProtocolVersion?.() ?? client.transport?.protocolVersion;
  if (modern) {
    assert.equal(client.getProtocolEra(), "modern", `${negotiation}: negotiated era (version ${version})`);
    assert.equal(version, MODERN, "negotiated version");
  } else if (mode === "http" || sdk === "client2") {
    // The client offered its newest 2025 revision and the server echoed it.
    assert.equal(version, "2025-11-25", "negotiated version");
  }

  const info = client.getServerVersion();
  assert.equal(info?.name, "needhave", `serverInfo: ${JSON.stringify(info)}`);
  assert.ok(info.version, "serverInfo.version");
  assert.ok(client.getServerCapabilities()?.tools, "capabilities.tools");
  if (!modern) {
    assert.ok(client.getInstructions()?.includes("needs and haves"), "instructions");
    await client.ping();
  } else {
    // ping is gone in 2026-07-28: the client refuses it before sending.
    await assert.rejects(client.ping(), "ping on a modern connection");
  }

  const { tools } = await client.listTools();
  const check = checker(tools, label);
  if (!info.description || !info.websiteUrl) check.pending.push("serverInfo lacks description/websiteUrl");
  if (!info.icons?.length) check.pending.push("serverInfo has no icons (SEP-973)");
  const iconless = tools.filter((t) => !t.icons?.length).map((t) => t.name);
  if (iconless.length) check.pending.push(`no icons on ${iconless.length} tools`);

  const flow = await fullFlow(call, check, `${sdk} ${negotiation}`);
  await rules(call, check, flow);

  const era = client.getProtocolEra?.() ?? "legacy";
  await client.close();
  finish(label, check, `connected as ${version ?? "(not exposed on stdio)"} (${era}), 8 tools, the full flow, the rules`);
} catch (e) {
  console.error(`FAIL ${label}:`, e);
  await client.close().catch(() => {});
  process.exit(1);
}
process.exit(process.exitCode ?? 0);
