// A small HTTP -> stdio bridge, so that the HTTP-only conformance suite can
// reach `needhave mcp`:
//
//   node stdio-bridge.mjs /path/to/needhave http://127.0.0.1:8787
//
// starts `needhave mcp` (NEEDHAVE_LIST_URL = the second argument), listens on
// 127.0.0.1 on a free port, prints "bridge: http://127.0.0.1:PORT/mcp", and
// forwards each POST /mcp body to the child's stdin as one line, answering
// with the child's response line. Requests go one at a time (a response is
// matched to its request by id, or is the id-null answer to a request whose
// id could not be read), so ids are never rewritten: what the suite sees is
// exactly what needhave wrote.
//
// The bridge is only a transport: it adds no MCP logic. The one thing it must
// decide is the HTTP status, which stdio does not have: a 2026-07-28 request
// (its _meta or MCP-Protocol-Version header says so) gets the statuses that
// revision's Streamable HTTP transport assigns to the error codes (-32601:
// 404; -32602, -32020, -32021, -32022: 400), a 2025 one 200, and a
// notification 202. What lives only in HTTP headers (Mcp-Method, Mcp-Name,
// Origin, Host) never reaches the child; conformance-expected.json lists the
// checks that need it for the "stdio-bridge" target.
// Exits when stdin closes or the child exits.

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { createInterface } from "node:readline";

const [bin, listUrl] = process.argv.slice(2);
if (!listUrl) {
  console.error("usage: stdio-bridge.mjs NEEDHAVE_BIN LIST_URL");
  process.exit(2);
}
const MODERN = "2026-07-28";
const STATUS = { [-32601]: 404, [-32602]: 400, [-32020]: 400, [-32021]: 400, [-32022]: 400 };
const TIMEOUT_MS = 15_000;

const child = spawn(bin, ["mcp"], {
  env: { ...process.env, NEEDHAVE_LIST_URL: listUrl, NEEDHAVE_LOG: process.env.NEEDHAVE_LOG ?? "warn" },
  stdio: ["pipe", "pipe", "inherit"],
});
child.on("exit", (code, signal) => {
  console.error(`bridge: needhave mcp exited (${code ?? signal})`);
  process.exit(1);
});

// One waiter at a time: the request in flight.
let waiter = null;
createInterface({ input: child.stdout }).on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    console.error(`bridge: needhave mcp wrote a line that is not JSON: ${line.slice(0, 200)}`);
    return;
  }
  if (waiter && waiter.matches(msg)) {
    const w = waiter;
    waiter = null;
    w.resolve(line, msg);
  } else {
    console.error(`bridge: unsolicited line from needhave mcp: ${line.slice(0, 200)}`);
  }
});

let queue = Promise.resolve();
function exchange(line, matches) {
  const run = () =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiter = null;
        reject(new Error("no answer from needhave mcp"));
      }, TIMEOUT_MS);
      waiter = {
        matches,
        resolve: (text, msg) => {
          clearTimeout(timer);
          resolve({ text, msg });
        },
      };
      child.stdin.write(`${line}\n`);
    });
  const result = queue.then(run);
  queue = result.catch(() => {});
  return result;
}

function isModern(req, body) {
  const first = Array.isArray(body) ? body[0] : body;
  const v = req.headers["mcp-protocol-version"] ?? first?.params?._meta?.["io.modelcontextprotocol/protocolVersion"];
  return typeof v === "string" && v >= MODERN;
}

const server = createServer((req, res) => {
  if (new URL(req.url, "http://x").pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end();
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    const raw = Buffer.concat(chunks).toString("utf8");
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    // One line on the pipe: re-serialise what parsed; pass an unparseable body
    // on with its newlines flattened, for the child to answer -32700.
    const line = body === undefined ? raw.replace(/[\r\n]+/g, " ") : JSON.stringify(body);
    const isRequest = (m) => m && typeof m === "object" && !Array.isArray(m) && "method" in m && "id" in m;
    const notificationsOnly =
      body !== undefined &&
      (Array.isArray(body) ? body.length > 0 && !body.some(isRequest) : !isRequest(body) && "method" in body);
    if (notificationsOnly) {
      child.stdin.write(`${line}\n`);
      res.writeHead(202).end();
      return;
    }
    const id = Array.isArray(body) || body === undefined ? undefined : body?.id;
    const matches = (msg) =>
      Array.isArray(body) ? Array.isArray(msg) : !Array.isArray(msg) && (msg.id === id || msg.id === null || id === undefined);
    try {
      const { text, msg } = await exchange(line, matches);
      let status = 200;
      if (body === undefined && msg?.error?.code === -32700) status = 400;
      else if (!Array.isArray(msg) && msg.error && isModern(req, body)) status = STATUS[msg.error.code] ?? 200;
      res.writeHead(status, { "content-type": "application/json" }).end(text);
    } catch (e) {
      res.writeHead(504, { "content-type": "text/plain" }).end(String(e.message));
    }
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`bridge: http://127.0.0.1:${server.address().port}/mcp`);
});
process.stdin.on("end", () => {
  child.kill();
  process.exit(0);
});
process.stdin.resume();
