#!/usr/bin/env bash
# The cost of the rate limiter on `POST /api/v1/tasks`: the same binary
# served twice in the same run, once without a limit and once with a limit
# so high it never refuses (every request still takes its bucket's check
# and gets the RateLimit fields), alternating rounds, a fresh SQLite file
# per round, wrk with 64 connections (all from one address: one bucket,
# the most contended case).
#
#     bash benches/ratelimit_load.sh                  # release build, 10 s rounds
#     PROFILE=debug DURATION=5s bash benches/ratelimit_load.sh
#
# Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
source "$(dirname "$0")/common.sh"
duration="${DURATION:-10s}"
rounds="${ROUNDS:-2}"
profile="${PROFILE:-release}"

if [ "$profile" = release ]; then
  cargo build --release --quiet --bin cairn
else
  cargo build --quiet --bin cairn
fi
bin="$CARGO_TARGET_DIR/$profile/cairn"
work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

cat > "$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"title":"Benchmark the gateway","description":"A task of ordinary size.","tags":["bench"]}'
LUA

round() { # label flags...
  local label=$1; shift
  rm -f "$work"/cairn.db*
  "$bin" serve --db "$work/cairn.db" --bind 127.0.0.1:8797 "$@" 2>/dev/null &
  server=$!
  for _ in $(seq 1 100); do curl -fsS http://127.0.0.1:8797/api/v1/health >/dev/null 2>&1 && break; sleep 0.1; done
  local out rps p50 p99
  out=$(wrk -t2 -c64 -d"$duration" --latency -s "$work/post.lua" http://127.0.0.1:8797/api/v1/tasks)
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  grep -q "Non-2xx" <<<"$out" && echo "warning: $label had non-2xx answers" >&2
  printf '| %s | %s | %s | %s |\n' "$label" "$rps" "$p50" "$p99"
}

echo "| POST /api/v1/tasks ($profile, 64 connections, $duration) | requests/s | p50 | p99 |"
echo "|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
  round "round $r: no rate limit" --rate-limit 0
  round "round $r: rate limit checked on every request" --rate-limit 1000000 --rate-limit-burst 1000000
done
