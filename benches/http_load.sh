#!/usr/bin/env bash
# Load benchmark of the REST gateway against a minimal axum baseline, both
# release builds, measured in the same run with wrk (64 connections).
#
#     bash benches/http_load.sh            # 10 s per measurement
#     DURATION=30s bash benches/http_load.sh
#
# Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"
duration="${DURATION:-10s}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

cargo build --release --quiet --bin cairn --example http_baseline
bin="$CARGO_TARGET_DIR/release"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin/cairn" serve --db "$work/cairn.db" --bind 127.0.0.1:8798 2>/dev/null &
for _ in $(seq 1 100); do curl -fsS http://127.0.0.1:8798/api/v1/health >/dev/null 2>&1 && break; sleep 0.1; done
id=$(curl -fsS -X POST -H 'content-type: application/json' \
  -d '{"title":"Benchmark the gateway","description":"A task of ordinary size.","tags":["bench"]}' \
  http://127.0.0.1:8798/api/v1/tasks | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])')
curl -fsS "http://127.0.0.1:8798/api/v1/tasks/$id" > "$work/get.json"
"$bin/examples/http_baseline" 127.0.0.1:8799 "$work/get.json" &
sleep 0.5

cat > "$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"title":"Benchmark the gateway","description":"A task of ordinary size.","tags":["bench"]}'
LUA

measure() { # name url [script]
  local name=$1 url=$2 script=${3:-}
  local out
  out=$(wrk -t2 -c64 -d"$duration" --latency ${script:+-s "$script"} "$url")
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  printf '| %s | %s | %s | %s |\n' "$name" "$rps" "$p50" "$p99"
}

echo "| endpoint (64 connections, $duration) | requests/s | p50 | p99 |"
echo "|---|---|---|---|"
measure "baseline: same bytes, no store (GET)" "http://127.0.0.1:8799/"
measure "GET /api/v1/tasks/{id}" "http://127.0.0.1:8798/api/v1/tasks/$id"
measure "baseline: same bytes, no store (POST)" "http://127.0.0.1:8799/" "$work/post.lua"
measure "POST /api/v1/tasks" "http://127.0.0.1:8798/api/v1/tasks" "$work/post.lua"
