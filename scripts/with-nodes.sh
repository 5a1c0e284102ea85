#!/usr/bin/env bash
# Installs what is missing and builds (scripts/setup.sh), starts the local five-node topology
# unless it is already running, runs the given command, and stops what it started.
#   scripts/with-nodes.sh COMMAND [ARGS...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nodes="$root/compose/local-nodes.sh"

bash "$root/scripts/setup.sh"
if ! bash "$nodes" status >/dev/null 2>&1; then
  trap 'bash "$nodes" down' EXIT
  bash "$nodes" up
fi
"$@"
