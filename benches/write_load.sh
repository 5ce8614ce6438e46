#!/usr/bin/env bash
# Creates under load on the SQLite store: `POST /api/v1/tasks` at 64
# connections (wrk, 2 threads) against this build, optionally an earlier
# build or several given as BEFORE (paths, space-separated), and a bare axum handler answering the same bytes,
# all in one run. After each load the acknowledged creates (every 201 wrk
# received) are counted against the rows in the database file, and the
# writes per commit are read from /metrics (cairn_store_commit_writes).
# With PG=postgres://user@host:port (no database), each measurement runs on a
# fresh PostgreSQL database instead, made and dropped here.
#
#     bash benches/write_load.sh
#     BEFORE="/tmp/cairn-main /tmp/cairn-v2" DURATION=20s bash benches/write_load.sh
#     CAIRN_BIN=/path/to/cairn NO_BUILD=1 ...   # measure builds already there
#
# Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
source "$(dirname "$0")/common.sh"
duration="${DURATION:-10s}"
connections="${CONNECTIONS:-64}"

[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet --bin cairn --example http_baseline
bin="$CARGO_TARGET_DIR/release"
cairn="${CAIRN_BIN:-$bin/cairn}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port=8796
body='{"title":"Benchmark the writer","description":"A task of ordinary size.","tags":["bench"]}'

cat > "$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
local threads = {}
created = 0
function setup(thread) table.insert(threads, thread) end
function response(status) if status == 201 then created = created + 1 end end
function done()
  local n = 0
  for _, t in ipairs(threads) do n = n + t:get("created") end
  io.write("created ", n, "\n")
end
LUA

# wrk's figures: requests/s, p50, p99, and the 201s the script counted.
load() { # url
  local out
  out=$(wrk -t2 -c"$connections" -d"$duration" --latency -s "$work/post.lua" "$1")
  awk '/Requests\/sec/ {rps=$2} $1=="50%" {p50=$2} $1=="99%" {p99=$2} $1=="created" {n=$2}
       END {printf "%s | %s | %s | %s", rps, p50, p99, n}' <<<"$out"
}

wait_up() {
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/api/v1/health" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "the server did not start" >&2; exit 1
}

measure() { # name binary
  local name=$1 cairn=$2 db="$work/$RANDOM.db"
  if [ -n "${PG:-}" ]; then
    db="$PG/cairn_write_load_$RANDOM"
    psql -q "$PG/postgres" -c "CREATE DATABASE ${db##*/}"
  fi
  "$cairn" serve --db "$db" --bind "127.0.0.1:$port" 2>/dev/null &
  local pid=$!
  wait_up
  local row per_commit rows
  row=$(load "http://127.0.0.1:$port/api/v1/tasks")
  per_commit=$(curl -fsS "http://127.0.0.1:$port/metrics" | awk '
    /^cairn_store_commit_writes_sum/ {s=$2} /^cairn_store_commit_writes_count/ {c=$2}
    END {if (c > 0) printf "%.1f", s / c; else print "n/a"}')
  kill "$pid"; wait "$pid" 2>/dev/null || true
  if [ -n "${PG:-}" ]; then
    rows=$(psql -tAq "$db" -c "SELECT count(*) FROM tasks")
    psql -q "$PG/postgres" -c "DROP DATABASE ${db##*/}"
  else
    rows=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from tasks").fetchone()[0])' "$db")
  fi
  printf '| %s | %s | %s | %s |\n' "$name" "$row" "$rows" "$per_commit"
}

curl_baseline_bytes() {
  "$cairn" serve --db "$work/shape.db" --bind "127.0.0.1:$port" 2>/dev/null &
  local pid=$!
  wait_up
  curl -fsS -X POST -H 'content-type: application/json' -d "$body" "http://127.0.0.1:$port/api/v1/tasks" > "$work/created.json"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

curl_baseline_bytes
"$bin/examples/http_baseline" "127.0.0.1:$((port + 1))" "$work/created.json" &
sleep 0.5

echo "| POST /api/v1/tasks (${PG:+PostgreSQL, }$connections connections, $duration) | creates/s | p50 | p99 | 201s received | rows stored | writes per commit |"
echo "|---|---|---|---|---|---|---|"
printf '| baseline: same bytes, no store | %s | | | |\n' "$(load "http://127.0.0.1:$((port + 1))/")"
for before in ${BEFORE:-}; do
  measure "$(basename "$before")" "$before"
done
measure "this build" "$cairn"
