"""The MCP surface over stdio, driven by the official Python SDK (`mcp`).

Starts `cairn mcp` as a child process with a fresh database and checks what an
agent relies on: initialize, the tool list, envelopes as text (and as
structured content that the SDK validates against each tool's output schema),
`isError` on failures, and protocol errors only for unknown tools.

Usage: python tests/mcp_stdio.py PATH/TO/cairn   (tests/run.sh does this in a venv)
"""

from __future__ import annotations

import json
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
    env = failure(await session.call_tool("health", {"verbose": "very"}), "invalid_input")
    assert env["error"]["retryable"] is False


async def test_unknown_tool_is_a_protocol_error(session: ClientSession, init) -> None:
    try:
        await session.call_tool("helth", {})
    except MCPError as error:
        assert error.code == INVALID_PARAMS, error.code
        assert error.data["suggestions"] == ["health"], error.data
    else:
        raise AssertionError("an unknown tool must be a protocol error")


def has(tools: set[str], *names: str) -> bool:
    return all(n in tools for n in names)


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


TASK_TESTS = [test_not_found, test_version_conflict]
TESTS = [
    test_initialize,
    test_list_tools,
    test_success,
    test_invalid_arguments_are_an_envelope,
    test_unknown_tool_is_a_protocol_error,
]


async def main(binary: str) -> int:
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "cairn.db")
        params = StdioServerParameters(command=binary, args=["--db", db, "mcp"], env={"CAIRN_LOG": "warn"})
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                tests = TESTS + (TASK_TESTS if has(tools, "task_create", "task_get", "task_update") else [])
                for test in tests:
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
