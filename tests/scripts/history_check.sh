#!/usr/bin/env bash
# redlock_history_check, the judge of scripts/nemesis.sh, finds each kind of violation in
# files made to hold one, and passes a clean run.
#   history_check.sh PATH/TO/redlock_history_check
set -euo pipefail
check=${1:?usage: history_check.sh redlock_history_check}
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect pass|fail WHAT PATTERN: the judge's verdict on the files as they are now, and its
# output (left in $out) matching PATTERN (a glob).
expect() {
  local verdict=$1 what=$2 pattern=$3 status=0
  out=$("$check" "$dir") || status=$?
  if [[ $verdict == pass ]]; then
    ((status == 0)) || fail "$what: judged a violation: $out"
  else
    ((status != 0)) || fail "$what: passed: $out"
  fi
  # shellcheck disable=SC2053 # a glob on purpose
  [[ $out == $pattern ]] || fail "$what: $out"
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Clean: two grants one after the other, each counted; one CLI increment; fences in order.
printf 'k 100 200 1\nk 300 400 1\n' > "$dir/worker-1.history"
echo 1 > "$dir/k.cli"
echo 3 > "$dir/k.counter"
printf '10 1\n20 2\n' > "$dir/fenced.starts"
expect pass "a clean run" '*0 overlapping holders, 0 lost updates, 0 fences out of order*'

# Each violation alone.
printf 'k 100 350 1\nk 300 400 1\n' > "$dir/worker-1.history"
expect fail "an overlap" '*1 overlapping holders*'
printf 'k 100 200 1\nk 300 400 1\n' > "$dir/worker-1.history"

echo 2 > "$dir/k.counter"
expect fail "a lost update" '*1 lost updates*'
echo 3 > "$dir/k.counter"

printf '10 2\n20 1\n' > "$dir/fenced.starts"
expect fail "fences out of order" '*1 fences out of order*'
printf '10 1\n20 2\n' > "$dir/fenced.starts"

# The fenced store: two accepted writes, counted; clean.
printf '1\n2\n' > "$dir/store.accepted"
echo 2 > "$dir/store.value"
expect pass "a clean fenced store" '*2 fenced store writes (0 refused)*0 fenced store errors*'
# A write it accepted and lost, and tokens it accepted out of order.
echo 1 > "$dir/store.value"
expect fail "a lost store write" '*1 fenced store errors*'
echo 2 > "$dir/store.value"
printf '2\n2\n' > "$dir/store.accepted"
expect fail "store tokens out of order" '*1 fenced store errors*'
printf '1\n2\n' > "$dir/store.accepted"
# A refusal without a client pause: a stale holder reached the store, the lock failed.
echo "1 2" > "$dir/store.refused"
expect fail "a refusal without a pause" '*1 fenced store errors*'

# Under a client pause of k's clients: the refusal, fences out of order and k's lost update
# are fencing's business and counted apart; a lost update on another key still fails.
echo k > "$dir/client.pauses"
printf '10 2\n20 1\n' > "$dir/fenced.starts"
echo 2 > "$dir/k.counter"
expect pass "what a client pause explains" '*1 client pauses (1 lost updates and 1 fences out of order under them)*'
[[ $out == *"0 lost updates, 0 fences out of order, 0 fenced store errors"* ]] || fail "pause: $out"
printf 'j 100 200 1\n' > "$dir/worker-2.history"
echo 0 > "$dir/j.counter"
expect fail "a lost update on an unpaused key" '*violations: 0 overlapping holders, 1 lost updates*'
echo "redlock_history_check: finds overlaps, lost updates, fences out of order and the fenced store's errors, and tells client pauses apart"
