#!/usr/bin/env bash
# The cost of idempotency bookkeeping on `POST /api/v1/tasks`: the same create
# without a key, with a fresh `Idempotency-Key` per request (claim + stored
# answer: two more writes per create), and with one key repeated (every
# request after the first a replay), against one `cairn serve` in one run,
# with wrk (2 threads, 64 connections).
#
#     bash benches/idempotency_load.sh               # release build, 10 s per row
#     PROFILE=debug DURATION=5s bash benches/idempotency_load.sh
#
# Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
source "$(dirname "$0")/common.sh"
duration="${DURATION:-10s}"
profile="${PROFILE:-release}"

if [ "$profile" = release ]; then
  cargo build --release --quiet --bin cairn
else
  cargo build --quiet --bin cairn
fi
bin="$CARGO_TARGET_DIR/$profile/cairn"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port="${PORT:-8797}"

"$bin" serve --db "$work/cairn.db" --bind "127.0.0.1:$port" 2>/dev/null &
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/api/v1/health" >/dev/null 2>&1 && break; sleep 0.1; done

body='{"title":"Benchmark the gateway","description":"A task of ordinary size.","tags":["bench"]}'
cat > "$work/plain.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
LUA
# A key per request: the thread's number and a counter (wrk runs one Lua state per thread).
cat > "$work/keyed.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
local threads, n = 0, 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
function request()
  n = n + 1
  -- wrk.format takes the headers given instead of wrk.headers, not besides them.
  return wrk.format(nil, nil, {
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = "bench-" .. tid .. "-" .. n,
  })
end
LUA
cat > "$work/replay.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Idempotency-Key"] = "bench-replay"
wrk.body = '$body'
LUA

measure() { # name script
  local out rps p50 p99
  out=$(wrk -t2 -c64 -d"$duration" --latency -s "$2" "http://127.0.0.1:$port/api/v1/tasks")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  # Every answer must be a 201 (or a replayed one): anything else would be
  # measured as if it were a create.
  bad=$(awk '/Non-2xx or 3xx responses/ {print $NF}' <<<"$out")
  printf '| %s | %s | %s | %s | %s |\n' "$1" "$rps" "$p50" "$p99" "${bad:-0}"
}

echo "| POST /api/v1/tasks ($profile, 64 connections, $duration) | requests/s | p50 | p99 | non-2xx |"
echo "|---|---|---|---|---|"
measure "no Idempotency-Key" "$work/plain.lua"
measure "a fresh Idempotency-Key per request" "$work/keyed.lua"
measure "one key repeated (replays)" "$work/replay.lua"
measure "no Idempotency-Key (again, for drift)" "$work/plain.lua"
