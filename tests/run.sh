#!/usr/bin/env bash
# The one test command (README): lint, type checks and every test suite.
# It installs what it needs and starts what its tests need, so it runs the
# same on a fresh machine as on a developer's.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

step() { printf '\n== %s\n' "$*"; }

step "rustfmt"
cargo fmt --check

step "clippy"
cargo clippy --all-targets --locked -- -D warnings

step "rust tests"
cargo nextest run --all-targets --locked --no-fail-fast

step "HTTP contract: redocly lint, schemathesis"
bash tests/contract/run.sh

step "MCP over stdio with the official Python SDK"
cargo build --locked --bin cairn
venv="$CARGO_TARGET_DIR/mcp-stdio-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/mcp_stdio.requirements.txt
"$venv/bin/python" tests/mcp_stdio.py "$CARGO_TARGET_DIR/debug/cairn"
