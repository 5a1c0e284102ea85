#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, starts the local five-node
# topology (unless it is already running), runs every test through CTest (unit, simulation,
# integration, packaging, API reference), and stops what it started. Extra arguments go to
# ctest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec bash "$root/scripts/with-nodes.sh" ctest --test-dir "${BUILD_DIR:-$root/build}" \
  --output-on-failure -j2 "$@"
