#!/usr/bin/env bash
# The main job: installs what is missing, builds, starts the local five-node topology
# (unless it is already running), replays the flash-sale incident under each lock strategy
# (redlock demo), and stops what it started. Extra arguments go to `redlock demo`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec bash "$root/scripts/with-nodes.sh" "${BUILD_DIR:-$root/build}/redlock" demo "$@"
