#!/usr/bin/env bash
# REDLOCK_BASE_PORT is node 1's port: local-nodes.sh starts node N on base + N - 1, nothing
# on base - 1 or base + 5, and refuses a base that is not a port.
#   local_nodes_base_port.sh PATH/TO/local-nodes.sh
set -euo pipefail
nodes=${1:?usage: local_nodes_base_port.sh local-nodes.sh}
fail() { echo "FAIL: $*" >&2; exit 1; }
answers() { [[ $(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null) == PONG ]]; }

state=$(mktemp -d)
export REDLOCK_LOCAL_DIR=$state
trap 'bash "$nodes" down >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
# A base of our own, away from the test topology (7001-7005), from other runs, and below the
# kernel's ephemeral ports (32768 and up), which a client socket may hold.
base=$((20000 + ($$ % 1200) * 10))
export REDLOCK_BASE_PORT=$base
out=$(bash "$nodes" up)
[[ $out == *"127.0.0.1:$base-$((base + 4))"* ]] || fail "up reported '$out', expected $base-$((base + 4))"
for n in 0 1 2 3 4; do answers $((base + n)) || fail "node $((n + 1)) not on port $((base + n))"; done
answers $((base - 1)) && fail "a node answers on base - 1 ($((base - 1)))"
answers $((base + 5)) && fail "a node answers on base + 5 ($((base + 5)))"
bash "$nodes" down >/dev/null

for bad in 0 abc 65432 -1; do
  if err=$(REDLOCK_BASE_PORT=$bad bash "$nodes" status 2>&1); then
    fail "REDLOCK_BASE_PORT=$bad accepted"
  fi
  [[ $err == *"REDLOCK_BASE_PORT must be a port number"* ]] || fail "REDLOCK_BASE_PORT=$bad: '$err'"
done
echo "local-nodes.sh: node N on REDLOCK_BASE_PORT + N - 1; bad bases refused"
