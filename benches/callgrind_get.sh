#!/usr/bin/env bash
# Instructions per `GET /api/v1/tasks/{id}` of one cairn binary under callgrind:
# one keep-alive client, one task in a fresh store, 100 GETs of warm-up, then
# the counters zeroed, N GETs (500), dumped, and the total divided by N.
#
#     bash benches/callgrind_get.sh BIN LABEL     # OUT=/tmp/cg by default
set -euo pipefail
bin=$1; label=$2; work=$(mktemp -d); port=${PORT:-8841}
out=${OUT:-/tmp/cg}; mkdir -p "$out"
valgrind --tool=callgrind --callgrind-out-file=$out/cg.$label.%p "$bin" serve --db "$work/c.db" --bind 127.0.0.1:$port >/dev/null 2>&1 &
vpid=$!
for _ in $(seq 1 300); do curl -fsS http://127.0.0.1:$port/api/v1/health >/dev/null 2>&1 && break; sleep 0.2; done
python3 - "$port" "$vpid" "$label" "$out" <<'PY'
import http.client, json, sys, subprocess, re, glob, os
port, pid, label, out = sys.argv[1:5]
c = http.client.HTTPConnection("127.0.0.1", int(port))
c.request("POST", "/api/v1/tasks", body=json.dumps({"title":"Benchmark the gateway","description":"A task of ordinary size.","tags":["bench"]}), headers={"Content-Type":"application/json"})
r = c.getresponse(); body = json.loads(r.read())
tid = body.get("data", body).get("id") if isinstance(body.get("data", body), dict) else None
if tid is None:
    def find(o):
        if isinstance(o, dict):
            if "id" in o and isinstance(o["id"], (str,int)): return o["id"]
            for v in o.values():
                x = find(v)
                if x: return x
    tid = find(body)
def get(n):
    for _ in range(n):
        c.request("GET", f"/api/v1/tasks/{tid}"); r = c.getresponse(); r.read(); assert r.status == 200, r.status
get(100)
subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
N = 500
get(N)
subprocess.run(["callgrind_control", "-d", "get", pid], check=True, capture_output=True)
import time; time.sleep(1)
files = sorted(glob.glob(f"{out}/cg.{label}.{pid}.*"), key=os.path.getmtime)
tot = None
for line in open(files[-1]):
    if line.startswith("summary:") or line.startswith("totals:"):
        tot = int(line.split()[1])
print(f"{label}: {tot} instructions / {N} = {tot/N:.0f} per GET ({files[-1]})")
PY
kill $vpid; wait $vpid 2>/dev/null || true; rm -rf "$work"
