#!/usr/bin/env bash
# One task read and rewritten by 64 connections at once, on PostgreSQL:
# `GET /api/v1/tasks/{id}` and `PATCH /api/v1/tasks/{id}` (a new title, no
# If-Match, so every PATCH writes) against one gateway, with wrk. Prints one
# Markdown row per build, with the PATCHes wrk saw answered and the task's
# version after them: every 200 is a write, so the version is one more than
# the PATCHes answered plus those still in flight when wrk stopped (at most
# one per connection).
#
#     bash benches/pg_point_load.sh BIN [BIN ...]      # release builds of cairn
#     DURATION=30s PG=postgres://postgres@127.0.0.1:5432 bash benches/pg_point_load.sh BIN
#
# Each build gets a fresh database on $PG (default postgres://root@127.0.0.1:5432),
# dropped when its run ends. Run the builds in turn, more than once: only
# rounds of the same run compare.
set -euo pipefail
source "$(dirname "$0")/common.sh"
duration="${DURATION:-8s}"
pg="${PG:-postgres://root@127.0.0.1:5432}"
[ $# -gt 0 ] || { echo "usage: $0 BIN [BIN ...]" >&2; exit 2; }

row() { # wrk's output
  awk '/Requests\/sec/ {r=$2} $1=="50%" {m=$2} $1=="99%" {n=$2} /Non-2xx/ {e=$NF}
    END {printf "%s req/s, p50 %s, p99 %s, non-2xx %d", r, m, n, e}' <<<"$1"
}

run() { # bin
  local bin=$1 db="cairn_point_$$_$RANDOM" work
  work=$(mktemp -d)
  psql "$pg/postgres" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE $db" >/dev/null
  "$bin" serve --db "$pg/$db" --bind 127.0.0.1:8798 2>/dev/null &
  local pid=$!
  for _ in $(seq 1 100); do curl -fsS http://127.0.0.1:8798/api/v1/health >/dev/null 2>&1 && break; sleep 0.1; done
  local id
  id=$(curl -fsS -X POST -H 'content-type: application/json' \
    -d '{"title":"Benchmark the gateway","description":"A task of ordinary size.","tags":["bench"]}' \
    http://127.0.0.1:8798/api/v1/tasks | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])')
  cat >"$work/patch.lua" <<'LUA'
wrk.method = "PATCH"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"title":"Renamed by the benchmark"}'
LUA
  local get patch version
  get=$(wrk -t2 -c64 -d"$duration" --latency "http://127.0.0.1:8798/api/v1/tasks/$id")
  patch=$(wrk -t2 -c64 -d"$duration" --latency -s "$work/patch.lua" "http://127.0.0.1:8798/api/v1/tasks/$id")
  answered=$(awk '/requests in/ {print $1}' <<<"$patch")
  version=$(curl -fsS "http://127.0.0.1:8798/api/v1/tasks/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["version"])')
  printf '| %s | %s | %s | %s / %s |\n' "$bin" "$(row "$get")" "$(row "$patch")" "$answered" "$version"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  psql "$pg/postgres" -qAt -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
  rm -rf "$work"
}

echo "| build | GET /api/v1/tasks/{id} (64 connections, $duration) | PATCH /api/v1/tasks/{id} | PATCHes answered / version after |"
echo "|---|---|---|---|"
for bin in "$@"; do run "$bin"; done
