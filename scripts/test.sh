#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, starts the local five-node
# topology (unless it is already running), runs every test through CTest, and stops
# what it started.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
nodes="$root/compose/local-nodes.sh"

bash "$root/scripts/setup.sh"
if ! bash "$nodes" status >/dev/null 2>&1; then
  trap 'bash "$nodes" down' EXIT
  bash "$nodes" up
fi
ctest --test-dir "$build" --output-on-failure -j2 "$@"
