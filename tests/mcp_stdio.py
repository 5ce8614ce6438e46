"""The MCP surface over stdio, driven by the official Python SDK (`mcp`).

Starts `cairn mcp` as a child process with a fresh database and checks what an
agent relies on: initialize, the tool list, envelopes as text (and as
structured content that the SDK validates against each tool's output schema),
`isError` on failures, and protocol errors only for unknown tools.

Usage: python tests/mcp_stdio.py PATH/TO/cairn   (tests/run.sh does this in a venv)
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

INVALID_PARAMS = -32602


def envelope(result) -> dict:
    assert len(result.content) == 1, "one content item"
    item = result.content[0]
    assert item.type == "text", item.type
    assert "\n" not in item.text, "compact JSON"
    return json.loads(item.text)


def failure(result, code: str) -> dict:
    assert result.is_error is True, "isError on failure"
    env = envelope(result)
    assert env["ok"] is False, env
    assert env["error"]["code"] == code, env["error"]
    assert result.structured_content is None, "structured content only on success"
    return env


def success(result) -> dict:
    assert not result.is_error, envelope(result)
    env = envelope(result)
    assert env["ok"] is True
    # The SDK already validated structured_content against the output schema.
    assert result.structured_content == env, (result.structured_content, env)
    return env["data"]


async def test_initialize(session: ClientSession, init) -> None:
    assert init.server_info.name == "cairn"
    for rule in ("`ok`", "`error.code`", "`error.retryable`", "`meta.truncated`"):
        assert rule in (init.instructions or ""), rule


async def test_list_tools(session: ClientSession, init) -> None:
    tools = (await session.list_tools()).tools
    names = [t.name for t in tools]
    assert "health" in names, names
    for tool in tools:
        assert tool.input_schema["type"] == "object", tool.name
        assert tool.output_schema["required"] == ["ok", "data", "meta"], tool.name


async def test_success(session: ClientSession, init) -> None:
    data = success(await session.call_tool("health", {}))
    assert data["status"] in ("ok", "degraded", "unavailable"), data


async def test_invalid_arguments_are_an_envelope(session: ClientSession, init) -> None:
    env = failure(await session.call_tool("task_list", {"limit": "lots"}), "invalid_input")
    assert env["error"]["retryable"] is False
    env = failure(await session.call_tool("task_create", {"titel": "x"}), "unknown_field")
    assert env["error"]["suggestions"] == ["title"], env["error"]


async def test_unknown_tool_is_a_protocol_error(session: ClientSession, init) -> None:
    try:
        await session.call_tool("helth", {})
    except MCPError as error:
        assert error.code == INVALID_PARAMS, error.code
        assert error.data["suggestions"] == ["health"], error.data
    else:
        raise AssertionError("an unknown tool must be a protocol error")


async def test_not_found(session: ClientSession, init) -> None:
    env = failure(await session.call_tool("task_get", {"id": "0123456789abcdef"}), "task_not_found")
    assert env["error"]["category"] == "not_found"


async def test_version_conflict(session: ClientSession, init) -> None:
    task = success(await session.call_tool("task_create", {"title": "stdio conflict"}))
    task_id = task["id"]
    success(await session.call_tool("task_update", {"id": task_id, "title": "v2", "expected_version": 1}))
    env = failure(
        await session.call_tool("task_update", {"id": task_id, "title": "v3", "expected_version": 1}),
        "version_conflict",
    )
    assert env["error"]["details"]["current_version"] == 2, env["error"]


TWIN_IDS = [f"feed00{i:026x}" for i in (1, 2)]


def seed_twins(binary: str, db: str) -> None:
    """Two tasks whose ids share the prefix `feed00`.

    Ids are random, so no tool call can make a shared 6-character prefix in
    reasonable time; the test writes two rows into the database (created and
    migrated by `cairn health`) before the server starts.
    """
    subprocess.run([binary, "--db", db, "health"], check=True, capture_output=True)
    with sqlite3.connect(db) as conn:
        for n, task_id in enumerate(TWIN_IDS, start=1):
            conn.execute(
                "INSERT INTO tasks (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (task_id, f"twin {n}", "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z"),
            )


async def test_ambiguous_prefix(session: ClientSession, init) -> None:
    env = failure(await session.call_tool("task_get", {"id": "feed00"}), "ambiguous_id_prefix")
    candidates = env["error"]["details"]["candidates"]
    assert [c["id"] for c in candidates] == TWIN_IDS, candidates
    assert [c["title"] for c in candidates] == ["twin 1", "twin 2"], candidates
    assert success(await session.call_tool("task_get", {"id": TWIN_IDS[1]}))["title"] == "twin 2"


async def test_task_list_validates_against_its_output_schema(session: ClientSession, init) -> None:
    page = success(await session.call_tool("task_list", {"limit": 5}))
    assert page["total"] >= 2, page


async def test_every_tool_answers_within_its_output_schema(session: ClientSession, init) -> None:
    """One successful call of every listed tool; the SDK validates each answer."""
    called = set()

    async def ok(tool: str, args: dict) -> dict:
        called.add(tool)
        return success(await session.call_tool(tool, args))

    a = (await ok("task_create", {"title": "walk a", "tags": ["walk"], "priority": "high"}))["id"]
    b = (await ok("task_create", {"title": "walk b"}))["id"]
    await ok("task_list", {"tag": "walk"})
    await ok("task_get", {"id": a[:6]})
    await ok("task_update", {"id": a, "description": "all tools", "expected_version": 1})
    await ok("task_claim", {"id": a, "agent": "py", "ttl_minutes": 5})
    await ok("task_renew", {"id": a, "agent": "py"})
    await ok("task_release", {"id": a, "agent": "py"})
    await ok("task_complete", {"id": a})
    await ok("task_reopen", {"id": a})
    await ok("task_cancel", {"id": b})
    await ok("task_board", {"limit": 3})
    note = await ok("note_write", {"title": "Walk note", "content": "About [[Other]].", "tags": ["walk"]})
    await ok("note_write", {"title": "Other", "content": "The other note."})
    await ok("note_read", {"id": "walk-note"})
    await ok("note_list", {"tag": "walk"})
    link = await ok("link_add", {"source": a, "target": b, "kind": "blocks"})
    await ok("graph_neighbours", {"id": a, "depth": 2})
    await ok("graph_path", {"from": a, "to": b})
    await ok("graph_export", {})
    await ok("graph_doctor", {})
    await ok("search", {"q": "walk"})
    await ok("link_remove", {"id": link["id"]})
    await ok("note_delete", {"id": note["id"]})
    await ok("health", {})
    feed = await ok("changes_since", {"kinds": ["task.created"], "limit": 500})
    created = [e["entity"]["id"] for e in feed["events"]]
    assert a in created and b in created, feed
    assert all(e["kind"] == "task.created" for e in feed["events"]), feed
    later = await ok("changes_since", {"cursor": feed["next_cursor"]})
    assert later["events"] == [] and later["next_cursor"] == feed["next_cursor"], later
    listed = {t.name for t in (await session.list_tools()).tools}
    assert listed <= called, f"add a call for {sorted(listed - called)}"


TESTS = [
    test_initialize,
    test_list_tools,
    test_success,
    test_invalid_arguments_are_an_envelope,
    test_unknown_tool_is_a_protocol_error,
    test_not_found,
    test_version_conflict,
    test_ambiguous_prefix,
    test_task_list_validates_against_its_output_schema,
    test_every_tool_answers_within_its_output_schema,
]


async def main(binary: str) -> int:
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "cairn.db")
        seed_twins(binary, db)
        params = StdioServerParameters(command=binary, args=["--db", db, "mcp"], env={"CAIRN_LOG": "warn"})
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                for test in TESTS:
                    try:
                        await test(session, init)
                    except Exception:  # noqa: BLE001 - report every failure, keep going
                        failed += 1
                        print(f"FAIL {test.__name__}")
                        traceback.print_exc()
                    else:
                        passed += 1
                        print(f"PASS {test.__name__}")
    print(f"mcp_stdio: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(anyio.run(main, sys.argv[1]))
