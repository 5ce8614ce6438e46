"""MCP beyond tools, driven by the official Python SDK (`mcp`) over stdio and
streamable HTTP: resources (list with cursors, templates, read by slug and id
prefix), subscriptions that fire on writes made through REST, every prompt,
completions, and logging/setLevel with the session's log notifications.

One `cairn serve` (REST and `/mcp`) and one `cairn mcp` (stdio) share a
PostgreSQL schema, so a REST write reaches the stdio server through the
store's change feed (LISTEN/NOTIFY), as it would for an agent on another
machine.

Usage: python tests/mcp_more.py PATH/TO/cairn POSTGRES_URL   (tests/run.sh does this)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import traceback
import urllib.request
import uuid
from contextlib import asynccontextmanager

import anyio
from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002
WAIT = 10.0


class Rest:
    def __init__(self, base: str) -> None:
        self.base = base

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + "/api/v1" + path, data=data, method=method, headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())["data"]


class Inbox:
    """Notifications and log messages the session received."""

    def __init__(self) -> None:
        self.notifications: list = []
        self.logs: list[types.LoggingMessageNotificationParams] = []

    async def on_message(self, message) -> None:
        if not isinstance(message, Exception):
            self.notifications.append(getattr(message, "root", message))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    def updated(self, uri: str) -> int:
        return sum(1 for n in self.notifications if n.method == "notifications/resources/updated" and n.params.uri == uri)

    def list_changed(self) -> int:
        return sum(1 for n in self.notifications if n.method == "notifications/resources/list_changed")

    async def wait_for(self, what, label: str) -> None:
        deadline = time.monotonic() + WAIT
        while not what():
            if time.monotonic() > deadline:
                raise AssertionError(f"no {label} within {WAIT}s: {self.notifications}")
            await anyio.sleep(0.05)


def text_of(result: types.ReadResourceResult) -> tuple[str, str, dict]:
    assert len(result.contents) == 1, result
    item = result.contents[0]
    return item.text, item.mime_type, item.meta or {}


async def check_resources(session: ClientSession, rest: Rest, inbox: Inbox, tag: str) -> None:
    task = rest.call("POST", "/tasks", {"title": f"Resource task {tag}", "tags": [tag], "priority": "urgent"})
    note = rest.call("POST", "/notes", {"title": f"Resource note {tag}", "content": "Body with [[Nowhere]].", "tags": [tag]})
    uris, cursor, pages = [], None, 0
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_resources(params=params)
        uris += [r.uri for r in page.resources]
        pages += 1
        for resource in page.resources:
            if resource.uri == f"cairn://tasks/{task['id']}":
                assert resource.mime_type == "application/json", resource
                assert resource.annotations.priority == 1.0, resource
                assert resource.annotations.last_modified, resource
        cursor = page.next_cursor
        if not cursor:
            break
    assert uris[0] == "cairn://board", uris[:3]
    assert f"cairn://tasks/{task['id']}" in uris and f"cairn://notes/{note['slug']}" in uris, uris
    assert pages >= 2, "notes and tasks come on separate pages"
    templates = [t.uri_template for t in (await session.list_resource_templates()).resource_templates]
    assert templates == ["cairn://notes/{slug}", "cairn://tasks/{id}", "cairn://board/{status}"], templates

    text, mime, meta = text_of(await session.read_resource(f"cairn://notes/{note['slug']}"))
    assert mime == "text/markdown", mime
    assert text.startswith("---\n") and f"id: {note['id']}\n" in text and text.endswith("Body with [[Nowhere]]."), text
    assert meta["truncated"] is False and meta["trimmed"] == [], meta
    by_prefix, _, _ = text_of(await session.read_resource(f"cairn://notes/{note['id'][:8]}"))
    assert by_prefix == text
    text, mime, _ = text_of(await session.read_resource(f"cairn://tasks/{task['id'][:6]}"))
    assert mime == "application/json" and json.loads(text)["id"] == task["id"], text
    board, _, _ = text_of(await session.read_resource("cairn://board/open"))
    assert [c["status"] for c in json.loads(board)["columns"]] == ["open"], board
    try:
        await session.read_resource("cairn://tasks/0123456789abcdef")
    except MCPError as error:
        assert error.code == RESOURCE_NOT_FOUND, error.code
        assert error.data["error"]["code"] == "task_not_found", error.data
    else:
        raise AssertionError("reading a task that does not exist must fail")


async def check_subscriptions(session: ClientSession, rest: Rest, inbox: Inbox, tag: str) -> None:
    task = rest.call("POST", "/tasks", {"title": f"Watched {tag}"})
    uri = f"cairn://tasks/{task['id'][:8]}"  # subscribed by prefix; notified with the same URI
    await session.subscribe_resource(uri)
    rest.call("PATCH", f"/tasks/{task['id']}", {"title": f"Watched {tag} v2"})
    await inbox.wait_for(lambda: inbox.updated(uri) >= 1, f"update for {uri}")
    before = inbox.list_changed()
    rest.call("POST", "/notes", {"title": f"Fresh note {tag}", "content": "new"})
    await inbox.wait_for(lambda: inbox.list_changed() > before, "list_changed after a new note")
    await session.unsubscribe_resource(uri)
    seen = inbox.updated(uri)
    rest.call("PATCH", f"/tasks/{task['id']}", {"title": f"Watched {tag} v3"})
    # Events arrive in feed order: once the marker note's list_changed is in,
    # an update for the write before it would have arrived too.
    count = inbox.list_changed()
    rest.call("POST", "/notes", {"title": f"Marker {tag}", "content": "m"})
    await inbox.wait_for(lambda: inbox.list_changed() > count, "list_changed after the marker note")
    assert inbox.updated(uri) == seen, "no update after unsubscribe"


async def check_prompts(session: ClientSession, rest: Rest, inbox: Inbox, tag: str) -> None:
    names = [p.name for p in (await session.list_prompts()).prompts]
    assert names == ["claim_next_task", "hand_over_task", "summarise_board_changes"], names
    task = rest.call("POST", "/tasks", {"title": f"Prompted {tag}", "tags": [f"p{tag}"], "priority": "high"})
    rest.call("POST", f"/tasks/{task['id']}/claim", {"agent": f"agent-{tag}"})
    other = rest.call("POST", "/tasks", {"title": f"Open one {tag}", "tags": [f"p{tag}"]})

    def text(result: types.GetPromptResult) -> str:
        assert len(result.messages) == 1 and result.messages[0].role == "user", result
        return result.messages[0].content.text

    claim = text(await session.get_prompt("claim_next_task", {"agent": "picker", "tag": f"p{tag}"}))
    assert other["id"] in claim and task["id"] not in claim and "task_claim" in claim, claim
    hand = text(await session.get_prompt("hand_over_task", {"task": task["id"][:7], "agent": f"agent-{tag}", "to": "bob"}))
    assert task["id"] in hand and "task_release" in hand and "You hold its claim" in hand, hand
    summary = text(await session.get_prompt("summarise_board_changes", {}))
    assert f"Prompted {tag}" in summary and "task.claimed" in summary, summary
    try:
        await session.get_prompt("hand_over_task", {"agent": "x"})
    except MCPError as error:
        assert error.code == INVALID_PARAMS and error.data["error"]["code"] == "missing_field", error.data
    else:
        raise AssertionError("a missing required argument must fail")


async def check_completions(session: ClientSession, rest: Rest, inbox: Inbox, tag: str) -> None:
    task = rest.call("POST", "/tasks", {"title": f"Completed {tag}", "tags": [f"c{tag}-tag"]})
    rest.call("POST", f"/tasks/{task['id']}/claim", {"agent": f"c{tag}-agent"})
    ids = await session.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="cairn://tasks/{id}"),
        {"name": "id", "value": task["id"][:4]},
    )
    assert task["id"] in ids.completion.values, ids
    agents = await session.complete(
        types.PromptReference(type="ref/prompt", name="claim_next_task"), {"name": "agent", "value": f"c{tag}-"}
    )
    assert agents.completion.values == [f"c{tag}-agent"], agents
    tags = await session.complete(
        types.PromptReference(type="ref/prompt", name="claim_next_task"), {"name": "tag", "value": f"C{tag}"}
    )
    assert tags.completion.values == [f"c{tag}-tag"], tags
    statuses = await session.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="cairn://board/{status}"), {"name": "status", "value": "c"}
    )
    assert statuses.completion.values == ["claimed", "cancelled"], statuses


async def check_logging(session: ClientSession, rest: Rest, inbox: Inbox, tag: str) -> None:
    await session.call_tool("task_get", {"id": "abcdef0123"})
    await anyio.sleep(0.3)
    assert not inbox.logs, "a caller's mistake is `notice`, below the default `warning`"
    await session.set_logging_level("notice")
    await session.call_tool("task_get", {"id": "abcdef0123"})
    await inbox.wait_for(lambda: inbox.logs, "log message")
    log = inbox.logs[-1]
    assert log.level == "notice" and log.logger == "cairn", log
    assert log.data["code"] == "task_not_found" and log.data["tool"] == "task_get", log.data
    assert set(log.data) == {"tool", "request_id", "code", "message"}, log.data


def break_the_graph(db: str, task_id: str) -> None:
    """Two broken links (a dangling one, a self loop) behind the tools' back."""
    rows = ", ".join(
        f"('{uuid.uuid4().hex}', '{task_id}', '{target}', 'blocks', '2026-01-01T00:00:00.000000Z')"
        for target in ("0" * 32, task_id)
    )
    subprocess.run(
        ["psql", db, "-qc", f"INSERT INTO links (id, source, target, kind, created_at) VALUES {rows}"], check=True
    )


async def check_progress(session: ClientSession, rest: Rest, inbox: Inbox, tag: str, db: str) -> None:
    task = rest.call("POST", "/tasks", {"title": f"Doctor {tag}"})
    break_the_graph(db, task["id"])
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    result = await session.call_tool("graph_doctor", {"fix": True}, progress_callback=on_progress)
    assert json.loads(result.content[0].text)["data"]["removed"] >= 2, result
    await inbox.wait_for(lambda: len(reports) >= 3, "three progress reports")
    assert [r[0] for r in sorted(reports)] == [0, 1, 3] and all(r[1] == 3 for r in reports), reports
    assert sorted(reports)[0][2] == "scanning the link graph", reports

    # Cancel a second repair once it reports; the session goes on serving.
    break_the_graph(db, task["id"])
    started = anyio.Event()

    async def cancel_on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    async with anyio.create_task_group() as group:
        async def doctor() -> None:
            await session.call_tool("graph_doctor", {"fix": True}, progress_callback=cancel_on_progress)

        group.start_soon(doctor)
        with anyio.fail_after(WAIT):
            await started.wait()
        group.cancel_scope.cancel()
    health = await session.call_tool("health", {})
    assert json.loads(health.content[0].text)["ok"] is True, health


CHECKS = [check_resources, check_subscriptions, check_prompts, check_completions, check_logging, check_progress]


async def check_revision_2026(server, rest: Rest, tag: str) -> None:
    """A 2026-07-28 client: no handshake, subscriptions/listen, logging by per-request opt-in."""
    logs: list = []

    async def on_log(params) -> None:
        logs.append(params)

    async with Client(server, log_level="notice", logging_callback=on_log) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        task = rest.call("POST", "/tasks", {"title": f"Listened {tag}"})
        uri = f"cairn://tasks/{task['id'][:8]}"
        text = (await client.read_resource(uri)).contents[0].text
        assert json.loads(text)["id"] == task["id"], text
        async with client.listen(resources_list_changed=True, resource_subscriptions=[uri]) as sub:
            assert sub.honored.resource_subscriptions == [uri], sub.honored
            rest.call("PATCH", f"/tasks/{task['id']}", {"title": f"Listened {tag} v2"})
            with anyio.fail_after(WAIT):
                async for event in sub:
                    assert getattr(event, "uri", None) == uri, event
                    break
        try:
            await client.set_logging_level("info")
        except MCPError as error:
            assert error.code == -32601, error.code
        else:
            raise AssertionError("2026-07-28 has no logging/setLevel")
        await client.call_tool("task_get", {"id": "abcdef0123"})
        with anyio.fail_after(WAIT):
            while not logs:
                await anyio.sleep(0.05)
        assert logs[0].level == "notice" and logs[0].data["code"] == "task_not_found", logs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@asynccontextmanager
async def over_stdio(binary: str, db: str, inbox: Inbox):
    params = StdioServerParameters(command=binary, args=["--db", db, "mcp"], env={"CAIRN_LOG": "warn"})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=inbox.on_message, logging_callback=inbox.on_log) as s:
            yield s


@asynccontextmanager
async def over_http(url: str, inbox: Inbox):
    async with streamable_http_client(url) as (read, write, *_):
        async with ClientSession(read, write, message_handler=inbox.on_message, logging_callback=inbox.on_log) as s:
            yield s


async def main(binary: str, pg: str) -> int:
    schema = f"mcp_more_{os.getpid()}"
    subprocess.run(["psql", pg, "-qc", f"CREATE SCHEMA {schema}"], check=True)
    db = f"{pg}{'&' if '?' in pg else '?'}options=-csearch_path%3D{schema}"
    port = free_port()
    server = subprocess.Popen(
        [binary, "--db", db, "serve", "--bind", f"127.0.0.1:{port}"], env={**os.environ, "CAIRN_LOG": "warn"}
    )
    passed = failed = 0
    try:
        rest = Rest(f"http://127.0.0.1:{port}")
        for _ in range(100):
            try:
                urllib.request.urlopen(rest.base + "/api/v1/health/ready", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        transports = {
            "stdio": lambda inbox: over_stdio(binary, db, inbox),
            "http": lambda inbox: over_http(f"{rest.base}/mcp", inbox),
        }
        for name, connect in transports.items():
            for check in CHECKS:
                inbox = Inbox()
                label = f"{name}: {check.__name__}"
                try:
                    with anyio.fail_after(60):
                        async with connect(inbox) as session:
                            await session.initialize()
                            label_tag = f"{name}{passed + failed}"
                            if check is check_progress:
                                await check(session, rest, inbox, label_tag, db)
                            else:
                                await check(session, rest, inbox, label_tag)
                except Exception:  # noqa: BLE001 - report every failure, keep going
                    failed += 1
                    print(f"FAIL {label}")
                    traceback.print_exc()
                else:
                    passed += 1
                    print(f"PASS {label}")
        revision_2026 = {
            "stdio": StdioServerParameters(command=binary, args=["--db", db, "mcp"], env={"CAIRN_LOG": "warn"}),
            "http": f"{rest.base}/mcp",
        }
        for name, server_spec in revision_2026.items():
            label = f"{name}: check_revision_2026"
            try:
                with anyio.fail_after(60):
                    await check_revision_2026(server_spec, rest, f"{name}26")
            except Exception:  # noqa: BLE001 - report every failure, keep going
                failed += 1
                print(f"FAIL {label}")
                traceback.print_exc()
            else:
                passed += 1
                print(f"PASS {label}")
    finally:
        server.terminate()
        server.wait(timeout=10)
        subprocess.run(["psql", pg, "-qc", f"DROP SCHEMA {schema} CASCADE"], check=False)
    print(f"mcp_more: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(anyio.run(main, sys.argv[1], sys.argv[2]))
