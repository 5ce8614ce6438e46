#!/usr/bin/env bash
# HTTP contract checks: the committed OpenAPI document lints clean (redocly,
# warnings are errors), and a property-based schemathesis run against a live
# `cairn serve` on a fresh database finds no server error and no response
# that breaks the document.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"

echo "-- redocly lint"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error && npx redocly lint "$root/openapi/openapi.json" --config redocly.yaml)

echo "-- schemathesis"
venv="$HOME/.cache/cairn-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"

cargo build --quiet --locked --bin cairn
work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$CARGO_TARGET_DIR/debug/cairn" serve --db "$work/cairn.db" --bind "127.0.0.1:$port" 2>"$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/api/v1/health" >/dev/null 2>&1 && break
  sleep 0.1
done

status=0
"$venv/bin/schemathesis" run "http://127.0.0.1:$port/openapi.json" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-25}" \
  --seed 20261130 \
  --request-timeout 10 \
  --no-color \
  || status=$?
if [ "$status" -ne 0 ]; then
  echo "schemathesis failed; server log:"; tail -50 "$work/server.log"
fi
exit "$status"
