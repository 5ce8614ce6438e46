#!/usr/bin/env bash
# Moving data in and out of cairn, release build, each step timed by wall
# clock in one run, with same-run baselines:
#
#   - a generated 5,000-note vault (the shape of tests/api/cli_vault.rs):
#     import, import again (nothing changes), export, import of the export
#     into a fresh store; baseline: the same notes by dump | restore (one
#     transaction instead of one per note);
#   - 100,000 tasks: restore of a generated dump into SQLite, dump of it,
#     restore into PostgreSQL and dump of that (both dumps byte-identical to
#     the generated one); baseline: creating tasks one by one through the
#     gateway (wrk, POST /api/v1/tasks, 64 connections).
#
#     bash benches/transfer_load.sh
#     NOTES=5000 TASKS=100000 DURATION=10s PG=postgres://root@127.0.0.1:5432 bash benches/transfer_load.sh
#
# Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
source "$(dirname "$0")/common.sh"
notes="${NOTES:-5000}"
tasks="${TASKS:-100000}"
duration="${DURATION:-10s}"
pg="${PG:-postgres://root@127.0.0.1:5432}"

cargo build --release --quiet --bin cairn
cairn="$CARGO_TARGET_DIR/release/cairn"
work="$(mktemp -d)"
pgdb="cairn_bench_transfer_$$"
trap 'kill $(jobs -p) 2>/dev/null || true; dropdb -h 127.0.0.1 -U root --if-exists "$pgdb" 2>/dev/null || true; rm -rf "$work"' EXIT
export CAIRN_LOG=warn

python3 - "$work/vault" "$notes" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    nxt, after = (i + 1) % n, (i + 2) % n
    extra = "Also [[Nobody Wrote This]]." if i % 7 == 0 else ""
    body = (f"Body of note {i}, ünïcode ✓.\n\nSee [[Note {nxt}]], [[Note {after}|the one after]] "
            f"and [[Note {nxt}#Details]].\n{extra}\n## Details\n\nText.\n")
    folder = os.path.join(root, f"area {i % 10}", f"sub {i % 3}")
    os.makedirs(folder, exist_ok=True)
    if i % 3 == 0:
        text = (f"---\ntitle: Note {i}\ntags: [gen, \"bucket-{i % 5}\"]\n"
                f"source_url: https://example.com/n/{i}\naliases: [n{i}]\n---\n{body}")
    elif i % 3 == 1:
        text = f"# Note {i}\n\n{body}"
    else:
        text = body
    with open(os.path.join(folder, f"Note {i}.md"), "w") as f:
        f.write(text)
PY

python3 - "$work/tasks.jsonl" "$tasks" <<'PY'
import json, random, sys
path, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(14)
with open(path, "w") as f:
    line = lambda r: f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    line({"type": "cairn_dump", "format": 1})
    statuses = ["open", "open", "done", "cancelled"]
    for i in range(n):
        t = f"2026-12-01T00:{i // 60_000_000:02}:{i // 1_000_000 % 60:02}.{i % 1_000_000:06}Z"
        line({"type": "task", "id": f"{rng.getrandbits(128):032x}",
              "title": f"Task {i}: move the data", "description": "A task of ordinary size, " * 4,
              "tags": ["bench", f"t{i % 10}"], "priority": "normal", "status": statuses[i % 4],
              "claim_holder": None, "claim_expires_at": None, "version": 1,
              "created_at": t, "updated_at": t})
    line({"type": "end", "tasks": n, "notes": 0, "links": 0})
PY

now() { date +%s.%N; }
row() { # what count unit start end
  awk -v w="$1" -v n="$2" -v u="$3" -v s="$4" -v e="$5" \
    'BEGIN { d = e - s; printf "| %s | %d %s | %.2f s | %.0f %s/s |\n", w, n, u, d, n / d, u }'
}
check() { # envelope-file jq-free check that ok is true
  grep -q '"ok":true' "$1" || { echo "failed: $(cat "$1")" >&2; exit 1; }
}

echo "| step | records | wall time | rate |"
echo "|---|---|---|---|"
s=$(now); "$cairn" --db "$work/a.db" import "$work/vault" > "$work/out.json"; e=$(now); check "$work/out.json"
row "import of the vault, fresh SQLite store" "$notes" notes "$s" "$e"
s=$(now); "$cairn" --db "$work/a.db" import "$work/vault" > "$work/out.json"; e=$(now); check "$work/out.json"
grep -q "\"unchanged\":$notes" "$work/out.json" || { echo "second import changed something" >&2; exit 1; }
row "import again (nothing changes)" "$notes" notes "$s" "$e"
s=$(now); "$cairn" --db "$work/a.db" export --markdown "$work/export" > "$work/out.json"; e=$(now); check "$work/out.json"
row "export --markdown" "$notes" notes "$s" "$e"
s=$(now); "$cairn" --db "$work/b.db" import "$work/export" > "$work/out.json"; e=$(now); check "$work/out.json"
row "import of the export, fresh SQLite store" "$notes" notes "$s" "$e"
"$cairn" --db "$work/a.db" dump --output "$work/notes.jsonl" > "$work/out.json"; check "$work/out.json"
s=$(now); "$cairn" --db "$work/c.db" restore "$work/notes.jsonl" > "$work/out.json"; e=$(now); check "$work/out.json"
row "baseline: restore of the same notes and links (one transaction)" "$notes" notes "$s" "$e"

s=$(now); "$cairn" --db "$work/t.db" restore "$work/tasks.jsonl" > "$work/out.json"; e=$(now); check "$work/out.json"
row "restore into a fresh SQLite file" "$tasks" tasks "$s" "$e"
s=$(now); "$cairn" --db "$work/t.db" dump --output "$work/t1.jsonl" > "$work/out.json"; e=$(now); check "$work/out.json"
row "dump of SQLite" "$tasks" tasks "$s" "$e"
cmp -s "$work/tasks.jsonl" "$work/t1.jsonl" || { echo "the SQLite dump differs from the restored one" >&2; exit 1; }
createdb -h 127.0.0.1 -U root "$pgdb"
s=$(now); "$cairn" --db "$pg/$pgdb" restore "$work/t1.jsonl" > "$work/out.json"; e=$(now); check "$work/out.json"
row "restore into a fresh PostgreSQL database" "$tasks" tasks "$s" "$e"
s=$(now); "$cairn" --db "$pg/$pgdb" dump --output "$work/t2.jsonl" > "$work/out.json"; e=$(now); check "$work/out.json"
row "dump of PostgreSQL" "$tasks" tasks "$s" "$e"
cmp -s "$work/t1.jsonl" "$work/t2.jsonl" || { echo "the PostgreSQL dump differs" >&2; exit 1; }

"$cairn" serve --db "$work/serve.db" --bind 127.0.0.1:8797 2>/dev/null &
for _ in $(seq 1 100); do curl -fsS http://127.0.0.1:8797/api/v1/health >/dev/null 2>&1 && break; sleep 0.1; done
cat > "$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"title":"Task: move the data","description":"A task of ordinary size, A task of ordinary size, A task of ordinary size, A task of ordinary size, ","tags":["bench","t1"]}'
LUA
rps=$(wrk -t2 -c64 -d"$duration" -s "$work/post.lua" http://127.0.0.1:8797/api/v1/tasks | awk '/Requests\/sec/ {print $2}')
printf '| baseline: POST /api/v1/tasks one by one (wrk, 64 connections, %s) | | | %.0f tasks/s |\n' "$duration" "$rps"
