#!/usr/bin/env bash
# The store's SQL on PostgreSQL, before and after issue #15's one-statement
# reads, replayed with pgbench on one database in one run (see BENCHMARKS.md,
# "At 100,000 tasks with all four columns populated").
#   bash benches/pg_store_sql/run.sh postgres://root@127.0.0.1:5432/pg100k [transactions]
# Before: the statements sent one by one by their text (extended protocol,
# unnamed, planned per call): board.sql, list.sql, search_old.sql (main at
# 47cc381), search_new.sql (the windows, before one statement). After: the
# one statement each (board_one.sql and search_one.sql prepared once, as
# the store does; list_one.sql by its text). The first page's cursor is
# passed as ('infinity', 'z') since pgbench has no NULL. board_one.sql and
# search_one.sql are the store's statements written out, `$n` as pgbench
# variables; unit tests in src/store/postgres fail when they drift
# (`CAIRN_BLESS=1 cargo test --lib bench_script` rewrites them).
set -euo pipefail
cd "$(dirname "$0")"
db="$1"
n="${2:-300}"
now="-D now=2026-12-02T02:00:00Z"
page="-D cap1=1001 -D lo=0 -D hi=500 -D lim=20 -D skip=0"
run() { # label, pgbench arguments...
  local label="$1"
  shift
  printf '%-44s %s\n' "$label" "$(pgbench -n -t "$n" "$@" "$db" 2>&1 | sed -n 's/latency average = //p')"
}
run "board, 8 statements (before)" -M extended -f board.sql $now
run "board, one prepared statement (after)" -M prepared -f board_one.sql $now \
  -D rows=51 -D counted=1001 -D after_at=infinity -D after_id=z
run "list, 2 statements (before)" -M extended -f list.sql $now
run "list, one statement (after)" -M extended -f list_one.sql $now
for q in "'parser' & 'schema'" "'migration'"; do
  run "search $q, main (2 statements)" -M extended -f search_old.sql -D "query=$q"
  run "search $q, windows (2 statements)" -M extended -f search_new.sql -D "query=$q"
  run "search $q, one prepared statement (after)" -M prepared -f search_one.sql $page -D "query=$q"
done
