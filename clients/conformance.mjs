// Runs one scenario of the MCP conformance suite (pinned in package.json)
// against a server and judges every check against conformance-expected.json:
//
//   node conformance.mjs TARGET SPEC SCENARIO URL
//
// TARGET names what URL is (http, stdio-bridge, worker: the expected-failures
// file says per entry which targets it applies to). A FAILURE that the file
// lists for this target, spec and scenario is an expected failure and is
// printed with its reason; any other FAILURE fails the run. An expected
// failure that passes, or that the run never produced, is reported loudly
// ("stale: remove it from conformance-expected.json") without failing, so the
// file shrinks as the server grows. WARNINGs (SHOULDs) are printed, not failed.
//
// The suite's own --expected-failures is not used: it has no notion of spec
// version or target, and this file also carries the reason for each entry.
// An entry marked "pending" is a known gap of the server rather than of the
// suite: printed as PENDING with its reason, exit 3 (the runner reports it
// loudly; NEEDHAVE_PENDING_FAILS=1 there makes it fail).
// A scenario of an MCP extension (listed under "extensionScenarios") sits
// outside the spec timeline: it runs with --force, and where its entry says
// "skipped": "none", a SKIPPED check fails the run (every check must run).
// Exit: 0 no unexpected failure, 3 only pending ones, 1 any other.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [target, spec, scenario, url] = process.argv.slice(2);
if (!url) {
  console.error("usage: conformance.mjs TARGET SPEC SCENARIO URL");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const suite = join(dirname(require.resolve("@modelcontextprotocol/conformance/package.json")), "dist/index.js");
const suiteVersion = require("@modelcontextprotocol/conformance/package.json").version;

const { expected: entries, extensionScenarios = {} } = JSON.parse(
  readFileSync(join(here, "conformance-expected.json"), "utf8"),
);
const extension = extensionScenarios[scenario];
for (const e of entries) {
  for (const k of ["spec", "scenario", "check", "targets", "reason"]) {
    if (!e[k] || (k === "targets" && !Array.isArray(e[k]))) throw new Error(`conformance-expected.json: entry without ${k}: ${JSON.stringify(e)}`);
  }
}
const mine = entries.filter((e) => e.spec === spec && e.scenario === scenario && e.targets.includes(target));
const expected = new Map(mine.map((e) => [e.check, e]));

const out = mkdtempSync(join(tmpdir(), "needhave-conformance-"));
try {
  const r = spawnSync(
    process.execPath,
    [suite, "server", "--url", url, "--scenario", scenario, "--spec-version", spec, ...(extension ? ["--force"] : []), "-o", out],
    { encoding: "utf8", timeout: 120_000 },
  );
  if (r.error) throw r.error;
  const dirs = readdirSync(out);
  if (dirs.length !== 1) {
    console.error(`conformance ${suiteVersion} wrote no results for ${scenario} (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
    process.exit(1);
  }
  const checks = JSON.parse(readFileSync(join(out, dirs[0], "checks.json"), "utf8"));
  if (!Array.isArray(checks) || checks.length === 0) {
    console.error(`conformance ${scenario}: no checks ran (exit ${r.status}):\n${r.stdout.slice(-2000)}`);
    process.exit(1);
  }

  const count = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0, INFO: 0 };
  const unexpected = [];
  const failedIds = new Set();
  const pendingIds = new Set();
  const passedIds = new Set();
  for (const c of checks) {
    count[c.status] = (count[c.status] ?? 0) + 1;
    const why = c.errorMessage ? `: ${c.errorMessage.slice(0, 300)}` : "";
    if (c.status === "FAILURE") {
      failedIds.add(c.id);
      const e = expected.get(c.id);
      if (e?.pending) {
        pendingIds.add(c.id);
        console.log(`  PENDING           ${c.id}${why}\n                    (${e.reason})`);
      } else if (e) {
        console.log(`  expected failure  ${c.id} (${e.reason})`);
      } else {
        unexpected.push(c.id);
        console.log(`  FAILURE           ${c.id}${why}`);
      }
    } else {
      if (c.status === "SUCCESS") passedIds.add(c.id);
      if (c.status === "SKIPPED" && extension?.skipped === "none") {
        unexpected.push(c.id);
        console.log(`  SKIPPED (must run) ${c.id}${why}`);
        continue;
      }
      const tag = c.status === "SUCCESS" ? "ok" : c.status;
      console.log(`  ${tag.padEnd(17)} ${c.id}${c.status === "SUCCESS" ? "" : why}`);
    }
  }
  for (const id of expected.keys()) {
    if (!failedIds.has(id)) {
      const seen = passedIds.has(id) ? "now passes" : "did not run";
      console.log(`  STALE             ${id} is listed as an expected failure but ${seen}: remove it from clients/conformance-expected.json`);
    }
  }
  const failures = checks.filter((c) => c.status === "FAILURE");
  const pendingCount = failures.filter((c) => pendingIds.has(c.id)).length;
  const expectedCount = failures.filter((c) => expected.has(c.id)).length - pendingCount;
  const verdict = unexpected.length ? "FAIL" : pendingCount ? "PENDING" : "PASS";
  console.log(
    `${verdict} conformance ${suiteVersion} ${scenario} @${spec} on ${target}: ${count.SUCCESS}/${checks.length} passed, ` +
      `${expectedCount} expected failures, ${pendingCount} pending, ${unexpected.length} unexpected, ` +
      `${count.WARNING} warnings, ${count.SKIPPED} skipped`,
  );
  // 3: nothing unexpected, but known gaps (pending entries) failed.
  process.exitCode = unexpected.length ? 1 : pendingCount ? 3 : 0;
} finally {
  rmSync(out, { recursive: true, force: true });
}
