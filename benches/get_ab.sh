#!/usr/bin/env bash
# `GET /api/v1/tasks/{id}` (or, with ROUTE=board, `GET /api/v1/board` over
# 2,000 tasks seeded by benches/seed_board.py) of several builds of cairn,
# each beside bare axum writing the same bytes (examples/http_baseline), in
# turn, ROUNDS times: the same-run comparison of two builds on the embedded
# SQLite store. wrk, 64 connections, 5 s a measurement; prints one line per
# build and round: requests a second, cairn's p99, and each server's CPU a
# request (user + system, and each apart, from /proc/PID/stat, over the wrk
# run).
#
#     bash benches/get_ab.sh 3 BIN_BEFORE BIN_AFTER
#     PIN=1 bash benches/get_ab.sh 3 BIN...   # servers on CPU 0, wrk on CPU 1
#     ROUTE=board BASELINE=path/to/http_baseline DURATION=10s bash benches/get_ab.sh 3 BIN...
#     SAME_HEAD=1 bash benches/get_ab.sh 3 BIN...   # the baseline sends cairn's header fields too
#
# BASELINE defaults to the profiling build's example
# (`cargo build --profile profiling --example http_baseline`).
set -euo pipefail
source "$(dirname "$0")/common.sh"
# PIN=1: each server on CPU 0 and wrk on CPU 1, so that the load generator
# does not preempt the server it measures.
server_cpu=() wrk_cpu=()
if [ "${PIN:-0}" = 1 ]; then server_cpu=(taskset -c 0) wrk_cpu=(taskset -c 1); fi
[ $# -gt 1 ] || { echo "usage: $0 ROUNDS BIN [BIN ...]" >&2; exit 2; }
rounds=$1; shift
duration="${DURATION:-5s}"
baseline="${BASELINE:-$CARGO_TARGET_DIR/profiling/examples/http_baseline}"

# CPU ticks a process has used so far: user, then system.
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }

# wrk against URL: "R req/s, p99 P, C µs CPU a request (U user, S system)"
# of server PID.
measure() {
  local pid=$1 url=$2 before after out
  before=$(ticks "$pid")
  out=$("${wrk_cpu[@]}" wrk -t2 -c64 -d"$duration" --latency "$url")
  after=$(ticks "$pid")
  awk -v before="$before" -v after="$after" -v hz="$(getconf CLK_TCK)" '
    /requests in/ {n=$1} /Requests\/sec/ {r=$2} $1=="99%" {p=$2}
    END {
      split(before, b, " "); split(after, a, " ")
      us = 1e6 / hz / n; user = (a[1] - b[1]) * us; sys = (a[2] - b[2]) * us
      printf "%s req/s, p99 %s, %.1f µs CPU a request (%.1f user, %.1f system)\n", r, p, user + sys, user, sys
    }' <<<"$out"
}

for round in $(seq 1 "$rounds"); do
  for bin in "$@"; do
    work=$(mktemp -d)
    "${server_cpu[@]}" "$bin" --db "$work/c.db" serve --bind 127.0.0.1:8921 2>/dev/null &
    server=$!
    for _ in $(seq 50); do curl -fs localhost:8921/api/v1/health >/dev/null 2>&1 && break; sleep 0.1; done
    if [ "${ROUTE:-task}" = board ]; then
      python3 benches/seed_board.py http://127.0.0.1:8921 2000 >/dev/null
      path=/api/v1/board
    else
      id=$(curl -fsS -XPOST localhost:8921/api/v1/tasks -H 'content-type: application/json' \
        -d '{"title":"bench"}' | python3 -c 'import sys, json; print(json.load(sys.stdin)["data"]["id"])')
      path="/api/v1/tasks/$id"
    fi
    curl -fsS -D "$work/get.head" "localhost:8921$path" >"$work/get.json"
    head=()
    if [ "${SAME_HEAD:-0}" = 1 ]; then head=("$work/get.head"); fi
    "${server_cpu[@]}" "$baseline" 127.0.0.1:8922 "$work/get.json" "${head[@]}" &
    bare=$!
    sleep 0.3
    axum=$(measure "$bare" http://127.0.0.1:8922/)
    ours=$(measure "$server" "http://127.0.0.1:8921$path")
    echo "round $round $bin: bare axum $axum; cairn $ours"
    kill "$server" "$bare"
    wait "$server" "$bare" 2>/dev/null || true
    rm -rf "$work"
  done
done
