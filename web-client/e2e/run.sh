#!/usr/bin/env bash
# End-to-end tests: installs Debian's Chromium when missing, builds the SPA
# (when missing) and cairn, which embeds it, then runs the scenarios (e2e/run.mjs starts and stops the server).
# With CAIRN_BIN set, that binary is used and nothing is compiled; add
# CAIRN_WEB_DIR=$PWD/dist to test a freshly built SPA instead of the embedded one.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian's chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# The SPA first: the binary embeds web-client/dist when it is built.
[ -f dist/index.html ] || npm run -s build
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"
[ -n "${CAIRN_BIN:-}" ] || (cd .. && cargo build --locked --bin cairn)
node e2e/run.mjs "$@"
