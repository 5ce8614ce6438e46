"""The newcomer's path, read out of README.md: an MCP client (the official
Python SDK) connects to cairn with exactly the configuration the README gives
in its `.mcp.json` blocks, over stdio and over streamable HTTP with a token,
lists the tools and calls one. The blocks are found by the markers
`<!-- newcomer-test: stdio -->` and `<!-- newcomer-test: http -->`, so the
README and this test cannot drift apart.

The binary is put on PATH as `cairn` (the README's `command`); the HTTP
block's port is replaced by a free one (its scheme, host and path are kept)
and `${CAIRN_TOKEN}` is filled in from a fresh token the server is started
with, as the README's `cairn serve --token "$CAIRN_TOKEN"`.

Usage: python tests/newcomer.py PATH/TO/cairn   (tests/run.sh does this)
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_block(marker: str) -> dict:
    """The JSON code block right after `<!-- newcomer-test: MARKER -->`."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- newcomer-test: " + re.escape(marker) + r" -->\s*```json\n(.*?)```", text, re.S)
    assert found, f"README.md has no JSON block after <!-- newcomer-test: {marker} -->"
    servers = json.loads(found.group(1))["mcpServers"]
    assert list(servers) == ["cairn"], f"the {marker} block names one server, cairn: {list(servers)}"
    return servers["cairn"]


def expand(value: str, env: dict[str, str]) -> str:
    """Claude Code's `${VAR}` expansion in .mcp.json values."""
    return re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], value)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def envelope(result) -> dict:
    """The envelope a tool result carries as JSON text."""
    return json.loads(result.content[0].text)


async def first_steps(session: ClientSession, title: str) -> None:
    """What a newcomer's agent does first: list the tools, create a task, read it back."""
    await session.initialize()
    names = {tool.name for tool in (await session.list_tools()).tools}
    for expected in ("task_create", "task_claim", "note_write", "search"):
        assert expected in names, f"tools/list lacks {expected}: {sorted(names)}"
    created = await session.call_tool("task_create", {"title": title})
    answer = envelope(created)
    assert not created.is_error and answer["ok"], answer
    task = answer["data"]
    got = envelope(await session.call_tool("task_get", {"id": task["id"][:6]}))
    assert got["ok"] and got["data"]["title"] == title, got


async def over_stdio(binary: str, workdir: Path) -> None:
    server = readme_block("stdio")
    bin_dir = workdir / "bin"
    bin_dir.mkdir()
    (bin_dir / "cairn").symlink_to(os.path.abspath(binary))
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path, "CAIRN_LOG": "warn"}
    env.update({key: expand(value, env) for key, value in server.get("env", {}).items()})
    # Resolve the command as the client would, on the PATH the client runs with.
    command = server["command"]
    resolved = next((str(Path(d) / command) for d in path.split(os.pathsep) if (Path(d) / command).is_file()), command)
    params = StdioServerParameters(command=resolved, args=server["args"], env=env, cwd=str(workdir))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await first_steps(session, "Connected over stdio")
    store = workdir / server.get("env", {}).get("CAIRN_DB", "cairn.db")
    assert store.is_file(), f"the stdio server wrote no store at {store}"


async def over_http(binary: str, workdir: Path) -> None:
    server = readme_block("http")
    assert server["type"] == "http", server
    url = urllib.parse.urlsplit(server["url"])
    assert url.scheme == "http" and url.hostname == "127.0.0.1" and url.path == "/mcp", server["url"]
    token = secrets.token_hex(32)
    headers = {key: expand(value, {"CAIRN_TOKEN": token}) for key, value in server["headers"].items()}
    assert headers.get("Authorization") == f"Bearer {token}", headers
    port = free_port()
    endpoint = url._replace(netloc=f"{url.hostname}:{port}").geturl()
    process = subprocess.Popen(
        [binary, "--db", str(workdir / "http.db"), "serve", "--bind", f"127.0.0.1:{port}", "--token", token],
        env={**os.environ, "CAIRN_LOG": "warn"},
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health/ready", timeout=2)
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "cairn serve did not become ready"
                time.sleep(0.1)
        # Without the README's header, /mcp is refused: the token is what lets the agent in.
        refused = urllib.request.Request(endpoint, data=b"{}", method="POST", headers={"content-type": "application/json"})
        try:
            urllib.request.urlopen(refused, timeout=5)
            raise AssertionError("/mcp answered a request without the token")
        except urllib.error.HTTPError as error:
            assert error.code == 401, error.code
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as client:
            async with streamable_http_client(endpoint, http_client=client) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await first_steps(session, "Connected over HTTP")
    finally:
        process.terminate()
        process.wait(timeout=10)


async def main(binary: str) -> int:
    failures = 0
    for name, run in (("stdio", over_stdio), ("streamable HTTP with a token", over_http)):
        with tempfile.TemporaryDirectory(prefix="cairn-newcomer-") as workdir:
            try:
                await run(binary, Path(workdir))
                print(f"ok   the README's {name} configuration connects, lists tools and calls one")
            except Exception:
                failures += 1
                print(f"FAIL the README's {name} configuration")
                traceback.print_exc()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1]))
