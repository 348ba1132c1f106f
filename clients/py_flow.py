"""The official Python MCP SDK (`mcp`, pinned in requirements.txt) against needhave.

Runs the same flow as flow.mjs, over Streamable HTTP or stdio:

    python py_flow.py MODE http  http://127.0.0.1:8787/mcp
    python py_flow.py MODE stdio /path/to/needhave http://127.0.0.1:8787

MODE: "2026-07-28" (the SDK adopts that revision with no probe: every request
carries the 2026 `_meta` envelope and header) or "auto" (probe with
server/discover, fall back to initialize; needhave speaks 2026-07-28, so auto
must end up there). Every successful structuredContent is validated against
the tool's outputSchema with jsonschema, independently of the SDK's own check.

Exit: 0 pass, 1 any failure (including an outputSchema, an isError argument
error, … the server owes, listed together as flow.mjs does).
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import sys
import traceback
from typing import Any

import jsonschema
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.stdio import get_default_environment

MODERN = "2026-07-28"
TOOLS = [
    "list_posts",
    "create_need",
    "create_have",
    "read_post",
    "write_first_reply",
    "accept_reply",
    "read_thread",
    "write_thread_message",
]
HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")


class Check:
    """Output-schema validators for the listed tools, and what is still pending."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        names = [t["name"] for t in tools]
        assert names == TOOLS, f"tools in the table's order: {names}"
        self.pending: list[str] = []
        self.validated = 0
        self.validators: dict[str, Any] = {}
        missing = []
        for t in tools:
            assert t["inputSchema"]["type"] == "object", t["name"]
            assert t["inputSchema"].get("additionalProperties") is False, t["name"]
            schema = t.get("outputSchema")
            if schema is None:
                missing.append(t["name"])
                continue
            assert schema.get("type") == "object", f"{t['name']}: outputSchema.type"
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(schema)
            self.validators[t["name"]] = cls(schema, format_checker=cls.FORMAT_CHECKER)
        if missing:
            self.pending.append(f"no outputSchema on {', '.join(missing)}")

    def conforms(self, name: str, structured: Any, what: str) -> None:
        validator = self.validators.get(name)
        if validator is None:
            return
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(structured)]
        if errors:
            raise AssertionError(
                f"{what}: structuredContent does not validate against {name}'s outputSchema: "
                f"{errors}; structuredContent: {json.dumps(structured)}"
            )
        self.validated += 1

    def ok(self, name: str, result: Any, what: str | None = None) -> dict[str, Any]:
        what = what or name
        assert not result.is_error, f"{what}: {result.model_dump_json()}"
        assert result.content[0].type == "text", what
        parsed = json.loads(result.content[0].text)
        assert result.structured_content == parsed, f"{what}: text vs structuredContent"
        self.conforms(name, result.structured_content, what)
        return parsed

    def refused(self, name: str, result: Any, code: str, what: str | None = None) -> None:
        what = what or f"{name} {code}"
        assert result.is_error, f"{what}: {result.model_dump_json()}"
        assert re.search(code, result.content[0].text), f"{what}: text names {code}: {result.content[0].text}"
        if result.structured_content is not None:
            self.conforms(name, result.structured_content, f"{what} (error result)")


def note(what: str) -> str:
    return f"{what} from the Python SDK #{secrets.token_hex(8)}"


async def flow(client: Client, check: Check) -> None:
    async def call(name: str, args: dict[str, Any]) -> Any:
        return await client.call_tool(name, args)

    need_note = note("need")
    post = check.ok("create_need", await call("create_need", {"note": need_note}))
    assert HEX32.match(post["id"]) and HEX64.match(post["secret"]), post
    assert post["kind"] == "need" and post["note"] == need_note, post

    listed = check.ok("list_posts", await call("list_posts", {}))
    assert any(p["id"] == post["id"] and p["note"] == need_note for p in listed["posts"]), "list_posts: the new need"
    assert post["secret"] not in json.dumps(listed), "list_posts: no secret"
    read = check.ok("read_post", await call("read_post", {"id": post["id"]}))
    # A post's view carries its age and status: open, with no expiry given.
    created_at, status = read.pop("created_at", None), read.pop("status", None)
    assert read == {"id": post["id"], "kind": "need", "note": need_note}, read
    assert status == "open", status
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", created_at or ""), created_at

    first = check.ok("write_first_reply", await call("write_first_reply", {"post_id": post["id"], "text": "I can help"}))
    assert HEX32.match(first["id"]) and HEX64.match(first["secret"]) and first["hidden"] is True, first
    mine = [{"id": first["id"], "text": "I can help"}]

    waiting = check.ok(
        "accept_reply", await call("accept_reply", {"post_id": post["id"], "secret": post["secret"]}), "accept_reply (list)"
    )
    assert waiting == {"messages": mine}, waiting

    early = check.ok(
        "read_thread",
        await call("read_thread", {"message_id": first["id"], "secret": first["secret"]}),
        "read_thread before acceptance",
    )
    assert early == {"accepted": False}, f"before acceptance: accepted false, no key: {early}"

    accepted = check.ok(
        "accept_reply",
        await call("accept_reply", {"post_id": post["id"], "secret": post["secret"], "message_id": first["id"]}),
        "accept_reply (accept)",
    )
    key = accepted["thread_key"]
    assert HEX64.match(key), accepted

    by_key = check.ok("read_thread", await call("read_thread", {"thread_key": key}), "read_thread by key")
    assert by_key == {"post_id": post["id"], "messages": mine}, by_key

    seen = check.ok(
        "read_thread",
        await call("read_thread", {"message_id": first["id"], "secret": first["secret"]}),
        "read_thread after acceptance",
    )
    assert seen["accepted"] is True and seen["thread_key"] == key and seen["messages"] == mine, seen

    later = check.ok("write_thread_message", await call("write_thread_message", {"thread_key": key, "text": "When?"}))
    assert later["post_id"] == post["id"] and HEX32.match(later["id"]), later
    after = check.ok("read_thread", await call("read_thread", {"thread_key": key}), "read_thread after the message")
    assert after["messages"] == mine + [{"id": later["id"], "text": "When?"}], after

    # The list's rules, as isError results.
    check.refused("create_need", await call("create_need", {"note": "   "}), "empty_note")
    check.refused("create_have", await call("create_have", {"note": need_note}), "duplicate_note")
    check.refused("accept_reply", await call("accept_reply", {"post_id": post["id"], "secret": "0" * 64}), "bad_secret")
    check.refused(
        "accept_reply",
        await call("accept_reply", {"post_id": post["id"], "secret": post["secret"], "message_id": first["id"]}),
        "already_accepted",
    )
    check.refused("read_post", await call("read_post", {"id": "0" * 32}), "not_found")

    # Missing, mistyped, extra arguments: isError results naming the argument (SEP-1303).
    for name, args, field, kind in [
        ("create_need", {}, "note", "missing"),
        ("create_need", {"note": 7}, "note", "mistyped"),
        ("read_post", {"id": post["id"], "nope": 1}, "nope", "extra"),
    ]:
        try:
            result = await call(name, args)
        except MCPError as e:
            check.pending.append(f"{kind} argument to {name} is a JSON-RPC error {e.code} ({e.message[:80]}), not isError")
            continue
        check.refused(name, result, field, f"{kind} argument to {name}")

    # An unknown tool stays a protocol error.
    try:
        await call("no_such_tool", {})
    except MCPError as e:
        assert e.code == -32602, f"unknown tool: {e.code}"
    else:
        raise AssertionError("unknown tool: no error")


def selftest() -> int:
    """The checks must be able to fail: a bad structuredContent, a text mismatch, a missing schema."""
    schema = {
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^[0-9a-f]{32}$"}},
        "required": ["id"],
        "additionalProperties": False,
    }
    tools = [
        {"name": n, "inputSchema": {"type": "object", "additionalProperties": False}, "outputSchema": schema}
        for n in TOOLS
    ]

    class R:
        def __init__(self, value: Any, text: Any = None, is_error: bool = False) -> None:
            self.is_error = is_error
            self.structured_content = value
            self.content = [types.TextContent(type="text", text=json.dumps(value if text is None else text))]

        def model_dump_json(self) -> str:
            return json.dumps(self.structured_content)

    check = Check(tools)
    good = {"id": "0" * 32}
    assert check.ok("read_post", R(good)) == good
    for bad in [R({"id": "x"}), R({**good, "extra": 1}), R(good, text={"id": "1" * 32})]:
        try:
            check.ok("read_post", bad)
        except AssertionError:
            continue
        raise SystemExit(f"selftest: {bad.structured_content} was not caught")
    try:
        check.refused("read_post", R({"error": "not_found"}, is_error=True), "not_found")
    except AssertionError:
        pass
    else:
        raise SystemExit("selftest: an error result the schema does not admit was not caught")
    assert Check([{k: v for k, v in t.items() if k != "outputSchema"} for t in tools]).pending
    print("PASS py_flow.py self-test: bad structuredContent, text mismatch, error results, missing schemas are caught")
    return 0


async def main() -> int:
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    if len(sys.argv) < 4 or sys.argv[1] not in (MODERN, "auto") or sys.argv[2] not in ("http", "stdio"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, transport = sys.argv[1], sys.argv[2]
    label = f"python mcp {mode} {transport}"
    if transport == "http":
        server: Any = sys.argv[3]
    else:
        server = StdioServerParameters(
            command=sys.argv[3],
            args=["mcp"],
            env={**get_default_environment(), "NEEDHAVE_LIST_URL": sys.argv[4], "NEEDHAVE_LOG": "warn"},
        )
    try:
        async with Client(server, mode=mode, client_info=types.Implementation(name="needhave-check-python", version="1.0.0")) as client:
            assert client.protocol_version == MODERN, f"negotiated {client.protocol_version}, expected {MODERN}"
            listed = await client.list_tools()
            # In "2026-07-28" mode the SDK adopts the revision without server/discover, so the
            # server's identity comes from the results' _meta (io.modelcontextprotocol/serverInfo).
            meta = listed.meta or {}
            info = meta.get("io.modelcontextprotocol/serverInfo")
            assert isinstance(info, dict) and info.get("name") == "needhave", f"tools/list _meta serverInfo: {meta}"
            tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
            check = Check(tools)
            await flow(client, check)
    except BaseException:  # noqa: BLE001 - any failure, including an ExceptionGroup from the task group, fails loudly
        print(f"FAIL {label}:", file=sys.stderr)
        traceback.print_exc()
        return 1
    summary = f"connected as {MODERN}, 8 tools, the full flow, the rules; {check.validated} results validated"
    if check.pending:
        print(f"FAIL {label}: {summary}; missing:")
        for p in check.pending:
            print(f"  - {p}")
        return 1
    print(f"PASS {label}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
