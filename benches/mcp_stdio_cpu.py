#!/usr/bin/env python3
"""Server CPU per MCP tool call over stdio: starts `cairn mcp` on a fresh store,
initializes, then writes N `tools/call` lines to its stdin without waiting
(a writer thread) while a reader thread collects the N answers, and reads the
child's utime+stime from /proc/PID/stat before the batch and after its last
answer. The difference over N is the server's CPU per call; start-up and
initialize are outside it (the in-process equivalent of subtracting an
initialize-only run). Prints one Markdown row per tool and run.

    python3 benches/mcp_stdio_cpu.py BIN [N] [RUNS] [TOOL]   # TOOL: task_get or task_create

With SEQUENTIAL=1 the calls go one at a time instead, each written when the
one before is answered: a lone call's cost, hops and wake-ups included, with
the wall time of each round trip (median and 99th percentile) beside the CPU.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
tick = os.sysconf("SC_CLK_TCK")
sequential = os.environ.get("SEQUENTIAL") == "1"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick  # utime, stime


def line(obj):
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def call(i, tool, args):
    return line({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                 "params": {"name": tool, "arguments": args}})


def session(tool, make_args):
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ)
        child = subprocess.Popen([binary, "--db", f"{work}/mcp.db", "mcp"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        out, inp = child.stdout, child.stdin

        def answer():
            # Skips notifications (a create sends resources/list_changed).
            while True:
                message = json.loads(out.readline())
                if "id" in message:
                    return message

        def ask(obj):
            inp.write(line(obj))
            inp.flush()
            return answer()

        ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "mcp_stdio_cpu", "version": "1"}}})
        inp.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        created = ask({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "task_create", "arguments": {"title": "Read me", "description": "A task to read.",
                                                 "tags": ["bench"]}}})
        task_id = created["result"]["structuredContent"]["data"]["id"]
        # Warm-up: the same calls, answered, before the measured batch.
        for i in range(200):
            ask(json.loads(call(10 + i, tool, make_args(task_id, i))))
        calls = [call(1000 + i, tool, make_args(task_id, i)) for i in range(count)]
        failed = lambda got: "error" in got or got["result"].get("isError")
        errors, walls = 0, []
        before = cpu_seconds(child.pid)
        if sequential:
            for request in calls:
                started = time.perf_counter()
                inp.write(request)
                inp.flush()
                errors += failed(answer())
                walls.append((time.perf_counter() - started) * 1e6)
        else:
            writer = threading.Thread(target=lambda: (inp.write(b"".join(calls)), inp.flush()))
            writer.start()
            for _ in range(count):
                errors += failed(answer())
            writer.join()
        after = cpu_seconds(child.pid)
        inp.close()
        child.wait()
        return (after - before) / count * 1e6, errors, sorted(walls)


tools = {
    "task_get": lambda task_id, i: {"id": task_id},
    "task_create": lambda task_id, i: {"title": f"Created task {i}",
                                      "description": "A task of ordinary size.", "tags": ["bench"]},
}
if sequential:
    print("| tool | calls, one at a time | server CPU per call (µs) | round trip median / p99 (µs) | errors |")
    print("|---|---|---|---|---|")
else:
    print("| tool | calls | server CPU per call (µs) | errors |")
    print("|---|---|---|---|")
only = sys.argv[4] if len(sys.argv) > 4 else None
for tool, make_args in tools.items():
    if only and tool != only:
        continue
    for _ in range(runs):
        per_call, errors, walls = session(tool, make_args)
        if sequential:
            median, p99 = walls[len(walls) // 2], walls[int(len(walls) * 0.99)]
            print(f"| {tool} | {count} | {per_call:.1f} | {median:.0f} / {p99:.0f} | {errors} |",
                  flush=True)
        else:
            print(f"| {tool} | {count} | {per_call:.1f} | {errors} |", flush=True)
