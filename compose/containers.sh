#!/usr/bin/env bash
# The container backend of compose/local-nodes.sh (REDLOCK_TOPOLOGY=containers): the five
# masters of docker-compose.yml, on the same loopback ports as the local processes, driven by
# the same verbs with the same meaning. Called by local-nodes.sh, which has checked the verb's
# node number and REDLOCK_BASE_PORT.
#
# Faults are real: stop is Redis' SHUTDOWN NOSAVE, kill is SIGKILL to redis-server (the
# container stays down: no restart policy), pause is `docker pause` (the cgroup freezer),
# restart is a kill and a start (empty: Redis writes only to a tmpfs), and the network faults
# act inside the container's own network namespace, entered with nsenter and changed with the
# host's iptables and tc (so any Redis image works, and none needs those tools):
#   partition N   drops every packet of the node's interface, both ways
#   loss N PCT    drops that percentage of them, at random
#   delay N MS    tc netem: the node's packets leave MS later (needs a kernel with netem)
#   heal N|all    removes every network fault of the node (or of all five)
# Clients reach a container through Docker's port forwarding on 127.0.0.1, so a partition cuts
# the node from every client at once: a connection to it is still accepted on the host side
# and then gets no answer, as across a real partition.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
base_port=${REDLOCK_BASE_PORT:-7001}
count=5
default_image=redlock-node:bookworm
image=${REDLOCK_NODE_IMAGE:-$default_image}

die() { echo "local-nodes (containers): $*" >&2; exit 2; }
port_of() { echo $((base_port + $1 - 1)); }
name_of() { echo "redlock-$base_port-node-$1"; }
project="redlock-$base_port"

# Every node's state ("running", "paused", "exited", ... or "missing") and pid, in one docker
# call: each costs tens of milliseconds, and the tests restore the topology before each test.
# Dies when no engine answers, unless told to carry on (`up` starts one).
states=() pids=()
load_states() {
  local names=() n line out
  for n in $(seq 1 $count); do names+=("$(name_of "$n")"); states[n]=missing; pids[n]=0; done
  command -v docker >/dev/null || { [[ ${1:-} == quiet ]] && return 1; die "no docker client (up installs one)"; }
  if ! out=$(docker inspect -f '{{.Name}} {{.State.Status}} {{.State.Pid}}' "${names[@]}" 2>&1); then
    if [[ $out == *"Cannot connect to the Docker daemon"* || $out == *"docker daemon"*"running"* ]]; then
      [[ ${1:-} == quiet ]] && return 1
      die "no Docker engine answers (\`REDLOCK_TOPOLOGY=containers local-nodes.sh up\` starts one)"
    fi
  fi
  while read -r line; do
    [[ $line == /redlock-* ]] || continue
    n=${line%% *}; n=${n##*-}; line=${line#* }
    states[n]=${line%% *}; pids[n]=${line#* }
  done <<< "$out"
}
up_state() { [[ ${states[$1]} == running || ${states[$1]} == paused ]]; }

compose() {
  local n
  for n in $(seq 1 $count); do export "REDLOCK_PORT_$n=$(port_of "$n")"; done
  REDLOCK_NODE_IMAGE=$image REDLOCK_BASE_PORT=$base_port \
    docker-compose --ansi never -p "$project" -f "$here/docker-compose.yml" "$@"
}

wait_ping() {
  local port; port=$(port_of "$1")
  for _ in $(seq 1 200); do
    [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]] && return 0
    sleep 0.05
  done
  die "node $1 (container $(name_of "$1"), port $port) did not answer PING within 10 s"
}

ensure_image() {
  docker image inspect "$image" >/dev/null 2>&1 && return 0
  # Never pulled: no registry is reachable from the test machines, and a test must not
  # depend on one. Only the local image is built; any other must already be there.
  [[ $image == "$default_image" ]] ||
    die "image $image is not on this machine (REDLOCK_NODE_IMAGE); load it or unset it"
  bash "$here/build-image.sh" "$image"
}

compose_up() {
  compose up -d --no-build "$@" >/dev/null 2>&1 ||
    { compose up -d --no-build "$@" >&2 || die "docker-compose up $* failed"; }
}

# Everything running, unpaused, without network faults, and answering. The quick path (all
# five running: one docker call, two nsenter per node) is what restoring before a test costs.
up() {
  local n all=yes
  load_states quiet || all=no
  for n in $(seq 1 $count); do [[ ${states[n]} == running || ${states[n]} == paused ]] || all=no; done
  if [[ $all == no ]]; then
    bash "$here/docker-engine.sh"
    ensure_image
    # compose starts what is stopped and creates what is missing, and leaves the rest.
    compose_up
    load_states
  fi
  tools
  local jobs=()
  # The five at once: on a loaded machine each look takes a fifth of a second.
  for n in $(seq 1 $count); do
    [[ ${states[n]} != paused ]] || docker unpause "$(name_of "$n")" >/dev/null
    { heal_pid "${pids[n]}" && wait_ping "$n"; } &
    jobs+=($!)
  done
  for n in "${jobs[@]}"; do wait "$n"; done
  echo "five masters up in containers on 127.0.0.1:$(port_of 1)-$(port_of $count) ($image)"
}

down() {
  load_states quiet || return 0
  local names=() n
  for n in $(seq 1 $count); do names+=("$(name_of "$n")"); done
  docker rm -f "${names[@]}" >/dev/null 2>&1 || true
  docker network rm "${project}_default" >/dev/null 2>&1 || true
}

unpause() { [[ ${states[$1]} != paused ]] || docker unpause "$(name_of "$1")" >/dev/null; }

stop_node() {
  local n=$1
  up_state "$n" || return 0
  unpause "$n"
  # As on the local backend: SHUTDOWN NOSAVE is immediate and saves nothing, whatever `save`
  # a test configured; docker stop (SIGTERM, then SIGKILL) when Redis cannot be reached.
  if redis-cli -h 127.0.0.1 -p "$(port_of "$n")" shutdown nosave >/dev/null 2>&1 &&
     timeout 10 docker wait "$(name_of "$n")" >/dev/null 2>&1; then
    return 0
  fi
  docker stop -t 2 "$(name_of "$n")" >/dev/null
}

kill_node() {
  local n=$1
  up_state "$n" || return 0
  unpause "$n"
  docker kill -s KILL "$(name_of "$n")" >/dev/null
  timeout 10 docker wait "$(name_of "$n")" >/dev/null
}

start_node() {
  local n=$1
  case ${states[n]} in
    running|paused) return 0 ;;
    missing) ensure_image; compose_up --no-deps "redis-$n" ;;
    *) docker start "$(name_of "$n")" >/dev/null ;;
  esac
  wait_ping "$n"
}

# Redis writes only to a tmpfs (docker-compose.yml), so a killed container starts empty,
# whatever a test turned on with CONFIG SET (save, appendonly).
restart_node() {
  local n=$1
  if up_state "$n"; then kill_node "$n"; states[n]=exited; fi
  start_node "$n"
}

tools() {
  command -v nsenter >/dev/null && command -v iptables >/dev/null && command -v tc >/dev/null ||
    die "network faults need nsenter, iptables and tc (compose/docker-engine.sh installs them)"
}

netns_of() {
  up_state "$1" || die "node $1 is not running (no network namespace to fault)"
  echo "${pids[$1]}"
}

# Appended once each (checked by their exact text). heal removes every DROP rule of the
# namespace, which holds only ours: Docker keeps its own rules on the host.
drop_rules() {
  local pid=$1 chain iface; shift
  for chain in INPUT OUTPUT; do
    [[ $chain == INPUT ]] && iface=(! -i lo) || iface=(! -o lo)
    nsenter -t "$pid" -n iptables -w -C "$chain" "${iface[@]}" "$@" -j DROP 2>/dev/null ||
      nsenter -t "$pid" -n iptables -w -A "$chain" "${iface[@]}" "$@" -j DROP
  done
}

# Removes the rules whose text holds the pattern (all DROP rules: '-j DROP').
remove_rules() {
  local pid=$1 pattern=$2 rule
  while rule=$(nsenter -t "$pid" -n iptables -w -S | grep -m1 -e "$pattern"); do
    # shellcheck disable=SC2086 # the rule's own words, as iptables -S prints them
    nsenter -t "$pid" -n iptables -w ${rule/-A /-D }
  done
}

# One look (one nsenter) first: most nodes have nothing to heal.
heal_pid() {
  local pid=$1 look
  [[ $pid =~ ^[1-9][0-9]*$ ]] || return 0
  look=$(nsenter -t "$pid" -n sh -c 'iptables -w -S; tc qdisc show dev eth0')
  [[ $look == *"-j DROP"* ]] && remove_rules "$pid" '-j DROP'
  [[ $look != *netem* ]] || nsenter -t "$pid" -n tc qdisc del dev eth0 root
}

loss_node() {
  local pid=$1 pct=$2
  [[ $pct =~ ^([0-9]|[1-9][0-9]|100)$ ]] || die "loss is a percentage 0-100, got '$pct'"
  remove_rules "$pid" '--mode random'
  ((pct == 0)) && return 0
  drop_rules "$pid" -m statistic --mode random --probability "$(awk "BEGIN{print $pct/100}")"
}

delay_node() {
  local pid=$1 ms=$2
  [[ $ms =~ ^[0-9]+$ ]] && ((ms <= 60000)) || die "delay is milliseconds 0-60000, got '$ms'"
  if ((ms == 0)); then
    nsenter -t "$pid" -n tc qdisc show dev eth0 | grep -q netem || return 0
    nsenter -t "$pid" -n tc qdisc del dev eth0 root
    return 0
  fi
  nsenter -t "$pid" -n tc qdisc replace dev eth0 root netem delay "${ms}ms" 2>/dev/null ||
    die "tc refused netem: this kernel has no netem (CONFIG_NET_SCH_NETEM), so no delay here; partition and loss work"
}

faults_of() {
  local pid=${pids[$1]} rules out=()
  rules=$(nsenter -t "$pid" -n iptables -w -S 2>/dev/null || true)
  [[ $rules == *"! -i lo -j DROP"* ]] && out+=(partitioned)
  [[ $rules == *"--mode random"* ]] &&
    out+=("loss $(grep -m1 -o 'probability [0-9.]*' <<< "$rules" | cut -d' ' -f2)")
  rules=$(nsenter -t "$pid" -n tc qdisc show dev eth0 2>/dev/null | grep -o 'delay [0-9.]*[mu]*s' || true)
  [[ -n $rules ]] && out+=("$rules")
  ((${#out[@]} == 0)) || echo ", ${out[*]}"
}

cmd=${1:-}; shift || true
case $cmd in
  up) up ;;
  down) down ;;
  status) load_states quiet || { echo "no Docker engine"; exit 1; }
      rc=0
      for n in $(seq 1 $count); do
        if up_state "$n"; then
          echo "node $n: container $(name_of "$n") ${states[n]}, pid ${pids[n]}, port $(port_of "$n")$(faults_of "$n")"
        else echo "node $n: down (${states[n]})"; rc=1; fi
      done; exit $rc ;;
  start) load_states; start_node "$1" ;;
  stop) load_states; stop_node "$1" ;;
  kill) load_states; kill_node "$1" ;;
  pause) load_states; [[ ${states[$1]} != running ]] || docker pause "$(name_of "$1")" >/dev/null
      up_state "$1" || die "node $1 is not running" ;;
  resume) load_states; up_state "$1" || die "node $1 is not running"
      unpause "$1" ;;
  restart) [[ ${2:-} == --aof ]] &&
        die "restart --aof needs the local backend: a container starts from its compose command (appendonly no), so nothing it wrote is read back"
      load_states; restart_node "$1" ;;
  partition) load_states; tools; pid=$(netns_of "$1"); drop_rules "$pid" ;;
  loss) load_states; tools; pid=$(netns_of "$1"); loss_node "$pid" "${2:-}" ;;
  delay) load_states; tools; pid=$(netns_of "$1"); delay_node "$pid" "${2:-}" ;;
  heal) load_states; tools
      if [[ $1 == all ]]; then for n in $(seq 1 $count); do heal_pid "${pids[n]}"; done
      else heal_pid "${pids[$1]}"; fi ;;
  *) die "unknown verb '$cmd'" ;;
esac
