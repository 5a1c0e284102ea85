#!/usr/bin/env bash
# The verbs' contract that holds before any node runs: bad nodes and unknown topologies are
# refused with a message, and the network faults are refused by the local backend with the
# reason (they exist only in containers), while heal has nothing to do there.
#   local_nodes_verbs.sh PATH/TO/local-nodes.sh
set -euo pipefail
nodes=${1:?usage: local_nodes_verbs.sh local-nodes.sh}
fail() { echo "FAIL: $*" >&2; exit 1; }
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
export REDLOCK_LOCAL_DIR=$state REDLOCK_TOPOLOGY=local

refused() { # expected-text verb args...
  local want=$1 err; shift
  if err=$(bash "$nodes" "$@" 2>&1); then fail "'$*' accepted"; fi
  [[ $err == *"$want"* ]] || fail "'$*' said '$err', expected '$want'"
}
refused "node must be 1-5" partition 6
refused "node must be 1-5" kill 0
refused "node must be 1-5" heal ""
refused "usage: local-nodes.sh" fly 1
for verb in "partition 2" "loss 2 10" "delay 2 100"; do
  # shellcheck disable=SC2086 # the verb and its arguments
  refused "needs REDLOCK_TOPOLOGY=containers" $verb
done
bash "$nodes" heal 3 || fail "heal refused on the local backend (there is nothing to heal)"
bash "$nodes" heal all || fail "heal all refused on the local backend"
REDLOCK_TOPOLOGY=vm refused "REDLOCK_TOPOLOGY must be local or containers" status
REDLOCK_TOPOLOGY=containers REDLOCK_TLS=1 refused "REDLOCK_TLS=1 needs the local backend" up
echo "local-nodes.sh: bad verbs and nodes refused; network faults only in containers"
