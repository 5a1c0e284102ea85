#!/usr/bin/env bash
# Runs the docker-compose.yml topology as local redis-server processes (no Docker needed):
# five independent masters on 127.0.0.1:7001-7005, no persistence, noeviction. With
# REDLOCK_TOPOLOGY=containers the same verbs drive the compose file's containers instead, on
# the same ports (compose/containers.sh; `up` starts dockerd and builds the node image when
# they are missing).
#
#   local-nodes.sh up | down | status
#   local-nodes.sh stop N | start N | kill N | pause N | resume N | restart N [--aof]
#   local-nodes.sh partition N | loss N PCT | delay N MS | heal N|all
#
# N is 1-5. A killed node stays down until start or restart; restart is kill -9 and a start
# without persistence (empty), or from the AOF with --aof (local backend only). The network
# faults (partition, loss, delay, heal) are real only in containers, inside each container's
# network namespace; the local processes share the host's loopback, so here they are refused
# (heal has nothing to remove): tests that cut local nodes go through tests/support's
# fault_proxy, a proxy per client. Processes are tracked by pid file and stopped by pid,
# never by name.
# Environment: REDLOCK_TOPOLOGY (local, the default, or containers), REDLOCK_LOCAL_DIR (state,
# default compose/.local), REDLOCK_BASE_PORT (node 1's port, default 7001; node N listens on
# base + N - 1), REDLOCK_NODE_IMAGE (containers: the image, default the locally built
# redlock-node:bookworm),
# REDLOCK_TLS=1: each node also speaks TLS on its port + 100 (rediss://localhost:7101...),
# with a test CA and certificate made on first use in $REDLOCK_LOCAL_DIR/tls (ca.crt is the
# CA to trust; the certificate names localhost and 127.0.0.1). Local backend only.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
state=${REDLOCK_LOCAL_DIR:-$here/.local}
base_port=${REDLOCK_BASE_PORT:-7001}
[[ $base_port =~ ^[1-9][0-9]*$ ]] && ((base_port + 104 <= 65535)) ||
  { echo "local-nodes: REDLOCK_BASE_PORT must be a port number up to 65431, got '$base_port'" >&2; exit 2; }
count=5

die() { echo "local-nodes: $*" >&2; exit 2; }
check_node() { [[ $1 =~ ^[1-5]$ ]] || die "node must be 1-$count, got '$1'"; }
usage="usage: local-nodes.sh up|down|status|start N|stop N|kill N|pause N|resume N|restart N [--aof]|partition N|loss N PCT|delay N MS|heal N|all"
command -v redis-cli >/dev/null || die "redis-cli not found (apt-get install redis-tools)"

verb=${1:-}
case $verb in
  up|down|status) ;;
  start|stop|kill|pause|resume|restart|partition|loss|delay) check_node "${2:-}" ;;
  heal) [[ ${2:-} == all ]] || check_node "${2:-}" ;;
  *) die "$usage" ;;
esac
case ${REDLOCK_TOPOLOGY:-local} in
  local) ;;
  containers) [[ ${REDLOCK_TLS:-0} == 1 ]] && die "REDLOCK_TLS=1 needs the local backend"
      exec bash "$here/containers.sh" "$@" ;;
  *) die "REDLOCK_TOPOLOGY must be local or containers, got '$REDLOCK_TOPOLOGY'" ;;
esac
command -v redis-server >/dev/null || die "redis-server not found (apt-get install redis-server)"

port_of() { echo $((base_port + $1 - 1)); }
tls_dir="$state/tls"

make_certificates() {
  [[ -s $tls_dir/server.crt ]] && return 0
  command -v openssl >/dev/null || die "openssl not found (apt-get install openssl)"
  mkdir -p "$tls_dir"
  (cd "$tls_dir"
   openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=redlock local test CA" \
     -keyout ca.key -out ca.crt 2>/dev/null
   openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key \
     -out server.csr 2>/dev/null
   printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > server.ext
   openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
     -extfile server.ext -out server.crt 2>/dev/null) || die "cannot make test certificates in $tls_dir"
}

tls_options() {
  [[ ${REDLOCK_TLS:-0} == 1 ]] || return 0
  echo "--tls-port $(( $(port_of "$1") + 100 )) --tls-cert-file $tls_dir/server.crt" \
       "--tls-key-file $tls_dir/server.key --tls-ca-cert-file $tls_dir/ca.crt --tls-auth-clients no"
}
pid_file() { echo "$state/node-$1/redis.pid"; }
pid_of() { local f; f=$(pid_file "$1"); [[ -s $f ]] && cat "$f" || true; }
# A killed daemon may linger as a zombie until init reaps it: that is not running.
running() { local st; st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [[ -n $st && $st != Z ]]; }
alive() { local pid; pid=$(pid_of "$1"); [[ -n $pid ]] && running "$pid"; }

wait_ping() {
  local port; port=$(port_of "$1")
  # 20 s: a restart from the AOF on a machine busy compiling took more than 5.
  for _ in $(seq 1 400); do
    [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]] && return 0
    sleep 0.05
  done
  # The end of its log says why (a port still taken, a refused option, an AOF it could
  # not load): a fresh-machine run's chroot is gone by the time anyone reads the file.
  tail -n 5 "$state/node-$1/redis.log" >&2 2>/dev/null || true
  die "node $1 (port $port) did not answer PING within 20 s; see $state/node-$1/redis.log"
}

start_node() {
  local n=$1 aof=${2:-no} dir port
  dir="$state/node-$n"; port=$(port_of "$n")
  if alive "$n"; then return 0; fi
  mkdir -p "$dir"
  if [[ ${REDLOCK_TLS:-0} == 1 ]]; then make_certificates; fi
  # Without persistence means empty: nothing a test wrote (an AOF, or an RDB after it turned
  # `save` on or ran SAVE) is read back. The containers get the same from a tmpfs.
  if [[ $aof == no ]]; then rm -f "$dir"/appendonly.aof* "$dir/dump.rdb"; rm -rf "$dir/appendonlydir"; fi
  redis-server --port "$port" --bind 127.0.0.1 --daemonize yes \
    --pidfile "$(pid_file "$n")" --logfile "$dir/redis.log" --dir "$dir" \
    --save "" --appendonly "$aof" --appendfsync always \
    --maxmemory-policy noeviction --protected-mode yes $(tls_options "$n")
  wait_ping "$n"
}

stop_node() {
  local n=$1 signal=${2:-TERM} pid
  pid=$(pid_of "$n")
  [[ -n $pid ]] || return 0
  if running "$pid"; then
    kill -CONT "$pid" 2>/dev/null || true
    if [[ $signal == TERM ]]; then
      # SHUTDOWN is immediate; SIGTERM waits for the next server tick.
      redis-cli -h 127.0.0.1 -p "$(port_of "$n")" shutdown nosave >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
    else
      kill "-$signal" "$pid" 2>/dev/null || true
    fi
    for _ in $(seq 1 200); do running "$pid" || break; sleep 0.02; done
    running "$pid" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$(pid_file "$n")"
}

signal_node() {
  local pid; pid=$(pid_of "$1")
  [[ -n $pid ]] && running "$pid" || die "node $1 is not running"
  kill "-$2" "$pid"
}

cmd=${1:-}; shift || true
case $cmd in
  up) for n in $(seq 1 $count); do start_node "$n"; done
      echo "five masters up on 127.0.0.1:$(port_of 1)-$(port_of $count)" ;;
  down) for n in $(seq 1 $count); do stop_node "$n"; done ;;
  status) rc=0
      for n in $(seq 1 $count); do
        if alive "$n"; then echo "node $n: pid $(pid_of "$n"), port $(port_of "$n")"
        else echo "node $n: down"; rc=1; fi
      done; exit $rc ;;
  start) start_node "$1" ;;
  stop) stop_node "$1" ;;
  kill) stop_node "$1" KILL ;;
  pause) signal_node "$1" STOP ;;
  resume) signal_node "$1" CONT ;;
  restart) n=$1; aof=no
      [[ ${2:-} == --aof ]] && aof=yes
      stop_node "$n" KILL; start_node "$n" "$aof" ;;
  partition|loss|delay)
      die "$cmd needs REDLOCK_TOPOLOGY=containers: local nodes share the host's loopback, where no fault can single out one node (tests cut local nodes with tests/support/fault_proxy, one proxy per client)" ;;
  heal) ;; # no network fault exists on this backend
esac
