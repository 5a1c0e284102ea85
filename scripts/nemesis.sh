#!/usr/bin/env bash
# A Jepsen-style run: client processes of the library and of the CLI take locks on the five
# nodes for a while and do their critical sections on state kept outside the nodes (files in
# a directory of their own), while a nemesis faults the nodes on a seeded random schedule;
# then the history checker (redlock_history_check) judges every recorded operation.
#
#   scripts/nemesis.sh [SECONDS]          # default 120
#
# Clients: NEMESIS_WORKERS library processes (redlock_history_worker, 2 threads each) on the
# keys nemesis:a and nemesis:b, each grant a read-modify-write of the key's plain counter file;
# NEMESIS_CLI shell loops of `redlock run` on the same keys and counters, and NEMESIS_FENCED
# loops of `redlock run --fence` on nemesis:fenced, whose commands record their fencing token
# and start time, read-modify-write that key's plain counter, then write once to a fenced store
# (files store.*: a write is accepted only with a token above the highest the store has seen,
# the check and the write one step under flock(1), as a database's conditional update).
# Faults, each held 0.5-2.5 s: kill -9 (back by start), restart (empty), pause, stop, and on the
# container topology partition and 40 % packet loss; sometimes two at once on different nodes,
# sometimes a majority (three nodes paused or, in containers, partitioned). The nemesis faults
# nodes, not clients (every holder finishes well within its validity), unless
# NEMESIS_CLIENT_PAUSES=1: then it also freezes a fenced loop's `redlock run` and its command
# (SIGSTOP, 3 s, longer than the TTL) in the middle of the command's read-modify-write, as a
# garbage collector or a suspended VM would: the plain counter of nemesis:fenced may then lose
# updates (the checker reports them apart), the fenced store must not.
# Verdict: overlapping holders, lost updates, fences out of order, the fenced store's lost or
# out-of-order writes and (without client pauses) its refusals (the checker), and lock keys
# leaked on any node: without an expiry, with a longer one than the run's TTL, or still there
# 130 s after the TTL; all must be 0. Keys that arrived after a fault healed and expired by
# themselves are listed apart (late-keys in the run's directory). The nodes must be up
# (compose/local-nodes.sh up, either backend; REDLOCK_BASE_PORT as there).
#
# Environment: NEMESIS_SEED (default: the time), NEMESIS_WORKERS (3), NEMESIS_CLI (2),
# NEMESIS_FENCED (2), NEMESIS_CLIENT_PAUSES (0),
# BUILD_DIR (build), NEMESIS_DIR (where the files go; default a new temporary directory).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
seconds=${1:-120}
seed=${NEMESIS_SEED:-$(date +%s)}
workers=${NEMESIS_WORKERS:-3}
cli_loops=${NEMESIS_CLI:-2}
fenced_loops=${NEMESIS_FENCED:-2}
client_pauses=${NEMESIS_CLIENT_PAUSES:-0}
nodes_script=$root/compose/local-nodes.sh
base=${REDLOCK_BASE_PORT:-7001}
die() { echo "nemesis: $*" >&2; exit 2; }
[[ $seconds =~ ^[1-9][0-9]*$ ]] || die "SECONDS must be a positive number, got '$seconds'"
[[ $fenced_loops =~ ^[1-9][0-9]*$ ]] || die "NEMESIS_FENCED must be a positive number, got '$fenced_loops'"
[[ $client_pauses =~ ^[01]$ ]] || die "NEMESIS_CLIENT_PAUSES must be 0 or 1, got '$client_pauses'"
command -v flock >/dev/null || die "flock(1) is missing (util-linux)"
for tool in "$build/redlock" "$build/tests/redlock_history_worker" "$build/tests/redlock_history_check"; do
  [[ -x $tool ]] || die "$tool is missing (cmake --build $build --target redlock_cli redlock_history_worker redlock_history_check)"
done
bash "$nodes_script" status >/dev/null || die "the nodes are not all up (compose/local-nodes.sh up)"

dir=${NEMESIS_DIR:-$(mktemp -d /tmp/redlock-nemesis.XXXXXX)}
mkdir -p "$dir"
nodes=""
for n in 1 2 3 4 5; do nodes+="${nodes:+,}127.0.0.1:$((base + n - 1))"; done
ttl_ms=2000
containers=no; [[ ${REDLOCK_TOPOLOGY:-local} == containers ]] && containers=yes
echo "nemesis: seed $seed, ${seconds} s, $workers library processes, $cli_loops CLI loops," \
     "$fenced_loops fenced loops, client pauses $([[ $client_pauses == 1 ]] && echo on || echo off)," \
     "topology ${REDLOCK_TOPOLOGY:-local}, files in $dir"

children=()
cleanup() {
  local pid
  # Nothing stays frozen: a client paused when the run was cut short is let go first.
  for pid in $(cat "$dir"/fenced-*.pid 2>/dev/null || true); do
    kill -CONT "$pid" $(pgrep -P "$pid" || true) 2>/dev/null || true
  done
  for pid in "${children[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${children[@]}"; do wait "$pid" 2>/dev/null || true; done
  bash "$nodes_script" up >/dev/null 2>&1 || true
}
trap cleanup EXIT

# The library: grants recorded with CLOCK_MONOTONIC, one history file per process.
for w in $(seq 1 "$workers"); do
  "$build/tests/redlock_history_worker" "$dir/worker-$w.history" "$nodes" nemesis:a,nemesis:b \
    "$dir" "$ttl_ms" "$((seconds * 1000))" 2 "$((seed + w))" >"$dir/worker-$w.out" 2>&1 &
  children+=($!)
done

redlock=("$build/redlock" -q -n "$nodes" --max-ttl 2s --node-timeout 50ms)
deadline=$((SECONDS + seconds))
# The CLI: the same unprotected read-modify-write as the library's (read, think, write), on
# the same counter files, recorded after the write.
cli_loop() {
  local i=$1 key status
  RANDOM=$((seed + 100 + i))
  while ((SECONDS < deadline)); do
    key=nemesis:a; ((RANDOM % 2)) && key=nemesis:b
    status=0
    "${redlock[@]}" run -t 2s -w 500ms "$key" -- sh -c '
      f="$1/$REDLOCK_KEY.counter"; v=$(cat "$f" 2>/dev/null || echo 0); sleep 0.001
      echo $((v + 1)) > "$f"; echo 1 >> "$1/$REDLOCK_KEY.cli"' _ "$dir" || status=$?
    echo "$status" >> "$dir/cli-status"
  done
}
# The fenced clients. Their command: record the start and the token; read, think and write
# the key's plain counter (unfenced, as the CLI loops'), and record the increment; then one
# write to the fenced store, accepted only with a token above the store's highest
# (store.accepted lists the accepted tokens in order, store.refused each refused "TOKEN HIGHEST").
# It ignores the SIGTERM `run` sends on a loss, as an application whose thread goes on to its
# write without looking at the lost signal: after a pause nothing could look in time anyway
# (without it `run`'s own check on waking wins the race here and the write never happens).
fenced_loop() {
  local i=$1 status
  while ((SECONDS < deadline)); do
    status=0
    "${redlock[@]}" run --fence -t 2s -w 500ms nemesis:fenced -- sh -c '
      trap "" TERM; d=$1; t=$REDLOCK_FENCING_TOKEN
      echo "$(date +%s%N) $t" >> "$d/fenced.starts"
      f="$d/$REDLOCK_KEY.counter"; v=$(cat "$f" 2>/dev/null || echo 0); sleep 0.3
      echo $((v + 1)) > "$f"; echo 1 >> "$d/$REDLOCK_KEY.cli"
      (
        flock 9
        highest=$(cat "$d/store.fence" 2>/dev/null || echo 0)
        if [ "$t" -gt "$highest" ]; then
          n=$(cat "$d/store.value" 2>/dev/null || echo 0)
          echo $((n + 1)) > "$d/store.value"; echo "$t" > "$d/store.fence"
          echo "$t" >> "$d/store.accepted"
        else
          echo "$t $highest" >> "$d/store.refused"
        fi
      ) 9>>"$d/store.lock"' _ "$dir" &
    echo $! > "$dir/fenced-$i.pid"
    wait $! || status=$?
    echo "$status" >> "$dir/fenced-status"
  done
}
for i in $(seq 1 "$cli_loops"); do cli_loop "$i" & children+=($!); done
for i in $(seq 1 "$fenced_loops"); do fenced_loop "$i" & children+=($!); done

# A client pause: fenced loop 1's `redlock run` and its command frozen for 3 s (the lock's
# TTL is 2 s) in the middle of the command's read-modify-write (in its think, after the read),
# as a garbage collector or a suspended VM freezes a client: when it wakes, its write lands on
# whatever the next holder wrote meanwhile.
pause_client() {
  local pid sh tries=0 p
  # Wait (up to 3 s) for the loop's command to be in its think: `run` holds the lock then.
  while true; do
    pid=$(cat "$dir/fenced-1.pid" 2>/dev/null) || return 0
    sh=$(pgrep -P "$pid" | head -n 1 || true)
    [[ -n $sh ]] && pgrep -P "$sh" -x sleep >/dev/null && break
    ((++tries < 300)) || return 0
    sleep 0.01
  done
  # `run` and its command (the think's sleep may end meanwhile: the command stays frozen
  # behind it, as a thread does behind a collector).
  kill -STOP "$pid" "$sh" 2>/dev/null || true
  sleep 3
  kill -CONT "$sh" "$pid" 2>/dev/null || true
  echo nemesis:fenced >> "$dir/client.pauses"
  applied[client-pause]=$(( ${applied[client-pause]:-0} + 1 ))
}

# The nemesis.
RANDOM=$seed
declare -A applied=()
verb() { bash "$nodes_script" "$@" >/dev/null; }
undo() { # kind node
  case $1 in
    kill|stop) verb start "$2" ;;
    pause) verb resume "$2" ;;
    partition|loss) verb heal "$2" ;;
    restart) ;;
  esac
}
fault() { # kind node
  case $1 in
    loss) verb loss "$2" 40 ;;
    *) verb "$1" "$2" ;;
  esac
  applied[$1]=$(( ${applied[$1]:-0} + 1 ))
}
kinds=(kill restart pause stop)
[[ $containers == yes ]] && kinds+=(partition loss)
while ((SECONDS < deadline - 1)); do
  sleep "0.$((RANDOM % 10))"
  if [[ $client_pauses == 1 ]] && ((RANDOM % 4 == 0)); then
    pause_client
    continue
  fi
  active=()
  case $((RANDOM % 6)) in
    0) # a majority at once
       kind=pause; [[ $containers == yes ]] && ((RANDOM % 2)) && kind=partition
       for n in 1 2 3; do fault "$kind" "$n"; active+=("$kind:$n"); done
       applied[majority]=$(( ${applied[majority]:-0} + 1 )) ;;
    1) # two at once, on different nodes
       a=$((RANDOM % 5 + 1)); b=$(( (a + RANDOM % 4) % 5 + 1 ))
       for n in "$a" "$b"; do
         kind=${kinds[RANDOM % ${#kinds[@]}]}; fault "$kind" "$n"; active+=("$kind:$n")
       done ;;
    *) n=$((RANDOM % 5 + 1)); kind=${kinds[RANDOM % ${#kinds[@]}]}
       fault "$kind" "$n"; active+=("$kind:$n") ;;
  esac
  sleep "$((RANDOM % 3)).$((RANDOM % 10))"
  for f in "${active[@]}"; do undo "${f%%:*}" "${f##*:}"; done
done

for pid in "${children[@]}"; do wait "$pid" || die "a client process failed (see $dir)"; done
children=()
bash "$nodes_script" up >/dev/null
# Releases still in flight when a client stopped, and SETs stranded on faulted connections,
# are bounded by the TTL: wait it out, then nothing but fencing counters may remain. Except
# that a command sent into a partition can still reach its node after the heal (a TCP
# retransmission, or Docker's port-forwarding proxy connecting late on the client's behalf,
# even after the client exited): such a key carries the TTL from its arrival. So a lock key
# found then is a leak if it has no expiry or a longer one than any lock here; otherwise it
# is listed as a late arrival (late-keys) and must be gone by itself within the kernel's SYN
# retry span (about 130 s), else it is a leak too.
sleep $((ttl_ms / 1000 + 1))
leaked=0
late=0
: > "$dir/late-keys"
waited=0
while :; do
  present=0
  for n in 1 2 3 4 5; do
    port=$((base + n - 1))
    for key in $(redis-cli -h 127.0.0.1 -p "$port" --scan --pattern 'nemesis*' | grep -v ':fence$' || true); do
      pttl=$(redis-cli -h 127.0.0.1 -p "$port" pttl "$key")
      ((pttl == -2)) && continue # expired between the scan and now
      present=$((present + 1))
      if ((pttl < 0 || pttl > ttl_ms)); then
        echo "nemesis: leaked: node $n key $key pttl $pttl" >&2
        leaked=$((leaked + 1))
        redis-cli -h 127.0.0.1 -p "$port" del "$key" >/dev/null # counted once
      elif ! grep -qx "$n $key" "$dir/late-keys"; then
        echo "$n $key" >> "$dir/late-keys"
        echo "nemesis: arrived late: node $n key $key pttl $pttl (after ${waited} s more)" >&2
        late=$((late + 1))
      fi
    done
  done
  ((present == 0)) && break
  if ((waited >= 130)); then
    echo "nemesis: $present lock keys still there 130 s after the TTL" >&2
    leaked=$((leaked + present))
    break
  fi
  sleep 1
  waited=$((waited + 1))
done

count_status() { if [[ -f $1 ]]; then grep -cx "$2" "$1" || true; else echo 0; fi; }
faults=""
for k in "${!applied[@]}"; do faults+=" $k=${applied[$k]}"; done
echo "nemesis: faults applied:$faults"
echo "nemesis: CLI runs: $(count_status "$dir/cli-status" 0) done, $(count_status "$dir/cli-status" 75) busy," \
     "$(count_status "$dir/cli-status" 69) without quorum, $(count_status "$dir/cli-status" 79) lost;" \
     "fenced runs: $(count_status "$dir/fenced-status" 0) done, $(count_status "$dir/fenced-status" 79) lost;" \
     "fenced store: $(cat "$dir/store.value" 2>/dev/null || echo 0) writes, $(cat "$dir/store.refused" 2>/dev/null | wc -l) refused"
echo "nemesis: library: $(cat "$dir"/worker-*.out | tr '\n' ';')"
verdict=0
"$build/tests/redlock_history_check" "$dir" || verdict=1
echo "nemesis: lock keys after the TTL: $leaked leaked, $late arrived late and expired by themselves"
((leaked == 0)) || verdict=1
((verdict == 0)) && echo "nemesis: 0 violations" || echo "nemesis: VIOLATIONS (files in $dir)"
exit $verdict
