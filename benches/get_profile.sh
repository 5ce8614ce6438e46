#!/usr/bin/env bash
# Where a cached `GET /api/v1/tasks/{id}` spends the server's time: one
# build of cairn under wrk's 64 connections, profiled by perf with DWARF call
# graphs, then the inclusive share of each frame named in benches/perf_frames.txt
# (the samples whose stack holds it) printed by benches/perf_share.py.
#
#     bash benches/get_profile.sh BIN [OUT]     # OUT defaults to /tmp/get-profile
#
# Needs perf (Debian's linux-perf) and a build with symbols and line tables
# (`cargo build --profile profiling --bin cairn`).
set -euo pipefail
source "$(dirname "$0")/common.sh"
command -v perf >/dev/null || { apt-get update -qq && apt-get install -y -qq linux-perf >/dev/null; }
[ $# -ge 1 ] || { echo "usage: $0 BIN [OUT]" >&2; exit 2; }
bin=$1 out=${2:-/tmp/get-profile}
work=$(mktemp -d)
"$bin" --db "$work/c.db" serve --bind 127.0.0.1:8931 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do curl -fs localhost:8931/api/v1/health >/dev/null 2>&1 && break; sleep 0.1; done
id=$(curl -fsS -XPOST localhost:8931/api/v1/tasks -H 'content-type: application/json' \
  -d '{"title":"bench"}' | python3 -c 'import sys, json; print(json.load(sys.stdin)["data"]["id"])')
wrk -t2 -c64 -d12s "http://127.0.0.1:8931/api/v1/tasks/$id" >"$out.wrk" &
load=$!
sleep 2
perf record -q -F 499 --call-graph dwarf,16384 -p "$server" -o "$out.data" -- sleep 6 2>/dev/null
wait $load
grep Requests/sec "$out.wrk"
perf script -i "$out.data" 2>/dev/null >"$out.txt"
python3 benches/perf_share.py "$out.txt" benches/perf_frames.txt
