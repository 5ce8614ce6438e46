#!/usr/bin/env bash
# Soak: the release build under a mixed load of reads and writes (wrk, 64
# connections, benches/soak.lua) for MINUTES one-minute rounds back to back,
# after a warm-up round. Per round it records throughput, p50/p99, every
# status seen, and the server's RSS, open file descriptors and threads.
#
#     bash benches/soak.sh                 # 10 rounds of 60 s
#     MINUTES=2 bash benches/soak.sh       # a short try
#
# The documented answers under this load are 200, 201, 409 (claim_held,
# claim_not_held) and an honest 503 (store_busy, timeout); any other status
# is counted as unexpected and makes the script exit 1.
set -euo pipefail
source "$(dirname "$0")/common.sh"
minutes="${MINUTES:-10}"
port="${PORT:-8796}"

cargo build --release --quiet --bin cairn
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
base="http://127.0.0.1:$port"

"$CARGO_TARGET_DIR/release/cairn" serve --db "$work/soak.db" --bind "127.0.0.1:$port" 2>"$work/server.log" &
pid=$!
for _ in $(seq 1 100); do curl -fsS "$base/api/v1/health" >/dev/null 2>&1 && break; sleep 0.1; done

# Seed: 500 tasks and 100 notes, so reads hit a store of some size.
for i in $(seq 1 500); do
  curl -fsS -X POST -H 'content-type: application/json' \
    -d "{\"title\":\"Seed task $i\",\"description\":\"A seeded task about review and deploy.\",\"tags\":[\"seed\"]}" \
    "$base/api/v1/tasks"
  echo
done | python3 -c 'import json,sys; [print(json.loads(l)["data"]["id"]) for l in sys.stdin if l.strip()]' >"$work/ids"
for i in $(seq 1 100); do
  curl -fsS -X POST -H 'content-type: application/json' \
    -d "{\"title\":\"Seed note $i\",\"content\":\"Notes on the migration and its index, number $i.\"}" \
    "$base/api/v1/notes"
  echo
done | python3 -c 'import json,sys; [print(json.loads(l)["data"]["id"]) for l in sys.stdin if l.strip()]' >"$work/notes"

sample() { # rss_kib fds threads
  printf '%s %s %s\n' "$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")" \
    "$(ls "/proc/$pid/fd" | wc -l)" "$(awk '/^Threads/ {print $2}' "/proc/$pid/status")"
}
round() { # seconds -> "rps p50 p99 statuses unexpected"
  local out
  out=$(wrk -t2 -c64 -d"$1s" --latency -s benches/soak.lua "$base" -- "$work/ids" "$work/notes")
  local rps p50 p99 statuses unexpected
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  statuses=$(awk '$1=="status" {printf "%s%s: %s", sep, $2, $3; sep=", "}' <<<"$out")
  unexpected=$(awk '$1=="status" && $2!~/^(200|201|409|503)$/ {n+=$3} END {print n+0}' <<<"$out")
  # wrk counts socket errors apart from statuses: a reset or timeout is unexpected too.
  local errors
  errors=$(awk '/Socket errors/ {gsub(/,/, ""); print $4+$6+$8+$10}' <<<"$out")
  printf '%s|%s|%s|%s|%s\n' "$rps" "$p50" "$p99" "$statuses" "$((unexpected + ${errors:-0}))"
}

round 30 >/dev/null
read -r rss0 fds0 threads0 < <(sample)
echo "after a 30 s warm-up: RSS $((rss0 / 1024)) MiB, $fds0 fds, $threads0 threads"
echo
echo "| minute | requests/s | p50 | p99 | statuses | unexpected | RSS MiB | fds | threads |"
echo "|---|---|---|---|---|---|---|---|---|"
bad=0
for minute in $(seq 1 "$minutes"); do
  IFS='|' read -r rps p50 p99 statuses unexpected < <(round 60)
  read -r rss fds threads < <(sample)
  bad=$((bad + unexpected))
  echo "| $minute | $rps | $p50 | $p99 | $statuses | $unexpected | $((rss / 1024)) | $fds | $threads |"
done
read -r rss fds threads < <(sample)
echo
echo "end: RSS $((rss / 1024)) MiB ($(( (rss - rss0) * 100 / rss0 ))% against warm-up), $fds fds (warm-up $fds0), $threads threads (warm-up $threads0)"
echo "server log lines at ERROR: $(grep -c ' ERROR ' "$work/server.log" || true)"
kill -0 "$pid" || { echo "the server died" >&2; exit 1; }
[ "$bad" -eq 0 ] || { echo "$bad answers outside the documented set" >&2; exit 1; }
