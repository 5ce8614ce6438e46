# Sourced by the load scripts in benches/: run from the repository root,
# build into the shared target folder unless told otherwise, and have wrk
# (Debian's) when the script needs it (`NEEDS_WRK=0` to skip).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"
if [ "${NEEDS_WRK:-1}" = 1 ]; then
  command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
fi
