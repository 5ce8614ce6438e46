#!/usr/bin/env bash
# Load benchmark of the scale-out topology, release builds, measured in the
# same run with wrk (64 connections): creates/s (POST /api/v1/tasks) and
# reads/s (GET /api/v1/tasks/{id}) on
#   1. one gateway on SQLite,
#   2. one gateway on PostgreSQL,
#   3. two gateways on PostgreSQL behind nginx (deploy/cairn-proxy.conf),
# with the gateways' CPU time per request (utime+stime from /proc/PID/stat,
# before and after each wrk run; nginx and PostgreSQL are not counted).
#
#     bash benches/scale_out_load.sh            # 10 s per measurement
#     DURATION=30s bash benches/scale_out_load.sh
#     PG=postgres://postgres@127.0.0.1:5432 bash benches/scale_out_load.sh
#
# Creates a fresh PostgreSQL database on $PG (default
# postgres://root@127.0.0.1:5432) and drops it at the end. Prints a Markdown
# table for BENCHMARKS.md.
set -euo pipefail
NEEDS_WRK=0 source "$(dirname "$0")/common.sh"
duration="${DURATION:-10s}"
pg="${PG:-postgres://root@127.0.0.1:5432}"
need() { command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ] || { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }; }
need wrk wrk
need nginx nginx
need psql postgresql-client
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

cargo build --release --quiet --bin cairn
cairn="$CARGO_TARGET_DIR/release/cairn"
work="$(mktemp -d)"
chmod 755 "$work" # nginx workers may run as nobody
dbname="cairn_bench_$$"
psql "$pg/postgres" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE $dbname" >/dev/null
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  wait 2>/dev/null || true
  psql "$pg/postgres" -qAt -c "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

pids=() # of the last started gateway(s)
serve() { # db port
  # Behind nginx a gateway answers to the name clients use: 127.0.0.1, any port.
  CAIRN_LOG=warn "$cairn" serve --db "$1" --bind "127.0.0.1:$2" --allowed-hosts 127.0.0.1 \
    2>>"$work/cairn.log" &
  pids+=($!)
  ready "http://127.0.0.1:$2"
}
ready() {
  for _ in $(seq 1 100); do curl -fsS "$1/api/v1/health/ready" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "nothing ready at $1; log:" >&2; cat "$work/cairn.log" >&2; exit 1
}

sqlite_pids=(); pg1_pids=(); pg2_pids=()
serve "$work/cairn.db" 8801; sqlite_pids=("${pids[@]}"); pids=()
serve "$pg/$dbname" 8802; pg1_pids=("${pids[@]}"); pids=()
serve "$pg/$dbname" 8803; serve "$pg/$dbname" 8804; pg2_pids=("${pids[@]}"); pids=()

mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" <<NGINX
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/nginx/client_body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    upstream cairn { server 127.0.0.1:8803; server 127.0.0.1:8804; keepalive 64; }
    upstream cairn_mcp { hash \$remote_addr consistent; server 127.0.0.1:8803; server 127.0.0.1:8804; keepalive 64; }
    server {
        listen 127.0.0.1:8805;
        include $PWD/deploy/cairn-proxy.conf;
    }
}
NGINX
"$nginx_bin" -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" &
ready http://127.0.0.1:8805

body='{"title":"Benchmark the gateway","description":"A task of ordinary size.","tags":["bench"]}'
cat > "$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
LUA
task_id() { # base url
  curl -fsS -X POST -H 'content-type: application/json' -d "$body" "$1/api/v1/tasks" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])'
}

ticks=$(getconf CLK_TCK)
cpu_ticks() { # pids...: utime+stime summed
  local total=0 pid
  for pid in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done
  echo "$total"
}

# One wrk run; prints "requests/s CPU-ms-per-request".
run() { # url script pids...
  local url=$1 script=$2; shift 2
  local before after out requests rps
  before=$(cpu_ticks "$@")
  out=$(wrk -t2 -c64 -d"$duration" ${script:+-s "$script"} "$url")
  after=$(cpu_ticks "$@")
  grep -q 'Non-2xx' <<<"$out" && { echo "errors during the run:" >&2; echo "$out" >&2; exit 1; }
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  awk -v r="$rps" -v d=$((after - before)) -v n="$requests" -v t="$ticks" \
    'BEGIN { printf "%s | %.3f", r, 1000 * d / t / n }'
}

row() { # name base-url pids...
  local name=$1 base=$2; shift 2
  local id creates reads
  id=$(task_id "$base")
  creates=$(run "$base/api/v1/tasks" "$work/post.lua" "$@")
  reads=$(run "$base/api/v1/tasks/$id" "" "$@")
  printf '| %s | %s | %s |\n' "$name" "$creates" "$reads"
}

echo "| setup (64 connections, $duration each) | creates/s | gateway CPU ms/create | reads/s | gateway CPU ms/read |"
echo "|---|---|---|---|---|"
row "1 gateway, SQLite" http://127.0.0.1:8801 "${sqlite_pids[@]}"
row "1 gateway, PostgreSQL" http://127.0.0.1:8802 "${pg1_pids[@]}"
row "2 gateways, PostgreSQL, nginx" http://127.0.0.1:8805 "${pg2_pids[@]}"
