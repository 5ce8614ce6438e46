#!/usr/bin/env bash
# Load benchmark of the REST gateway against a minimal axum baseline, both
# release builds, measured in the same run with wrk (64 connections).
#
#     bash benches/http_load.sh            # 10 s per measurement
#     DURATION=30s bash benches/http_load.sh
#     CAIRN_BIN=/path/to/other/cairn bash benches/http_load.sh   # e.g. a build of main
#     NO_BUILD=1 ...                       # use the release builds already there
#
# The store is seeded with 2,000 tasks across the board's four columns
# (benches/seed_board.py); `GET /api/v1/board` (default page, every column)
# is measured against a second baseline serving the board's bytes. During the
# board run the server's RSS peak (VmHWM) and threads are read from /proc, and
# again 30 s after the load ends.
#
# Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
source "$(dirname "$0")/common.sh"
duration="${DURATION:-10s}"

[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet --bin cairn --example http_baseline
bin="$CARGO_TARGET_DIR/release"
cairn="${CAIRN_BIN:-$bin/cairn}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

"$cairn" serve --db "$work/cairn.db" --bind 127.0.0.1:8798 2>/dev/null &
pid=$!
for _ in $(seq 1 100); do curl -fsS http://127.0.0.1:8798/api/v1/health >/dev/null 2>&1 && break; sleep 0.1; done
id=$(python3 benches/seed_board.py http://127.0.0.1:8798 2000)
curl -fsS "http://127.0.0.1:8798/api/v1/tasks/$id" > "$work/get.json"
curl -fsS "http://127.0.0.1:8798/api/v1/board" > "$work/board.json"
"$bin/examples/http_baseline" 127.0.0.1:8799 "$work/get.json" &
"$bin/examples/http_baseline" 127.0.0.1:8800 "$work/board.json" &
sleep 0.5
status() { awk -v k="$1:" '$1==k {print $2}' "/proc/$pid/status"; }

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
measure "baseline: same bytes, no store (board, $(wc -c <"$work/board.json") bytes)" "http://127.0.0.1:8800/"
rss_idle=$(status VmRSS) threads_idle=$(status Threads)
measure "GET /api/v1/board (2,000 tasks)" "http://127.0.0.1:8798/api/v1/board"
rss_peak=$(status VmHWM) threads_load=$(status Threads)
sleep 30
rss_after=$(status VmRSS) threads_after=$(status Threads)
measure "baseline: same bytes, no store (POST)" "http://127.0.0.1:8799/" "$work/post.lua"
measure "POST /api/v1/tasks" "http://127.0.0.1:8798/api/v1/tasks" "$work/post.lua"
echo
echo "memory (board load): RSS before $((rss_idle / 1024)) MiB, $threads_idle threads;" \
  "peak (VmHWM) $((rss_peak / 1024)) MiB, $threads_load threads at the end of the load;" \
  "30 s after $((rss_after / 1024)) MiB, $threads_after threads"
