#!/usr/bin/env python3
"""Seeds a running cairn with N tasks across the board's four columns (one
keep-alive connection): a quarter stay open, a quarter are claimed, a quarter
done and a quarter cancelled. Prints the id of the first task.

    python3 benches/seed_board.py http://127.0.0.1:8798 2000
"""
import http.client
import json
import sys
import urllib.parse

base = urllib.parse.urlparse(sys.argv[1])
count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
conn = http.client.HTTPConnection(base.hostname, base.port)


def call(method, path, body):
    conn.request(method, path, json.dumps(body), {"content-type": "application/json"})
    answer = conn.getresponse()
    data = json.loads(answer.read())
    if answer.status >= 300:
        sys.exit(f"{method} {path}: {answer.status} {data}")
    return data["data"]


first = None
for i in range(count):
    task = call("POST", "/api/v1/tasks", {
        "title": f"Board task {i}: review the deploy of service {i % 37}",
        "description": ("A seeded task of ordinary size, about review, deploy and the migration: "
                        "check the service's dashboards after the deploy, read the error budget, "
                        "compare the latency before and after, and write down what changed and why, "
                        "with a link to the run."),
        "tags": ["bench", f"team-{i % 5}"],
        "priority": ["low", "normal", "high", "urgent"][i % 4],
    })
    first = first or task["id"]
    column = i % 4
    if column == 1:
        call("POST", f"/api/v1/tasks/{task['id']}/claim", {"agent": f"agent-{i % 7}", "ttl_minutes": 480})
    elif column == 2:
        call("POST", f"/api/v1/tasks/{task['id']}/complete", {})
    elif column == 3:
        call("POST", f"/api/v1/tasks/{task['id']}/cancel", {})
print(first)
