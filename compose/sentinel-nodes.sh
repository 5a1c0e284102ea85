#!/usr/bin/env bash
# Runs a Redis Sentinel topology as local processes (no Docker needed): SENTINEL_GROUPS groups
# named group1..groupN, each a primary and one replica, watched by three Sentinels (quorum 2,
# down-after-milliseconds 1000, failover-timeout 5000). Data nodes have no persistence, so a
# killed and revived server comes back empty; it also uses repl-diskless-sync-delay 0, so a
# (re)joining replica syncs at once instead of after the default 5 s.
#
#   sentinel-nodes.sh up | down | status
#   sentinel-nodes.sh primary G                 host:port of group G's primary per 2 of 3 Sentinels
#   sentinel-nodes.sh kill-primary G            kill -9 it, leave it down; prints its host:port
#   sentinel-nodes.sh wait-failover G OLD [S]   wait (default 30 s) until 2 of 3 Sentinels name
#                                               a primary other than OLD (host:port); prints it
#   sentinel-nodes.sh revive G [--stale]        restart G's killed data node, empty, as a replica
#                                               of the current primary (or as the primary, when
#                                               no failover happened); waits until every Sentinel
#                                               sees it healthy. --stale: start it as an empty
#                                               master and return at once, the way a restarted old
#                                               primary comes back: it takes writes until Sentinel
#                                               turns it into a replica, about 10 s later
#   sentinel-nodes.sh freeze-replica G [--keep-link] | thaw-replica G
#   sentinel-nodes.sh isolate-primary G         cut group G's primary off from its replica and
#                                               the Sentinels, not from the clients connected to
#                                               it already (a split brain); prints its host:port
#
# freeze-replica SIGSTOPs group G's replica and then closes the primary's link to it (CLIENT
# KILL TYPE replica), so nothing written to the primary afterwards reaches the replica: a
# SIGSTOP alone loses nothing, as what the primary sends waits in the stopped replica's socket
# buffer and is applied on SIGCONT. --keep-link is the SIGSTOP alone. thaw-replica SIGCONTs it.
# To make a promoted replica lack an acknowledged write: freeze-replica G; SET on the primary;
# old=$(kill-primary G); thaw-replica G at once (a replica still stopped when the Sentinels pick
# one, about 1 s after the kill, makes them give up and retry 10 s later); wait-failover G $old.
# Sentinel will not start another failover of a group within 2 x failover-timeout (10 s) of an
# attempt, and with down-after 1000 ms a Sentinel sometimes makes a short-lived spurious attempt
# just after a switch: a second kill-primary soon after a failover can take ~12 s to fail over.
#
# Ports (127.0.0.1): group g's first primary on SENTINEL_BASE_PORT + 2(g-1) (default 7801), its
# replica on the next port; the Sentinels on SENTINEL_PORTS_BASE .. +2 (default 27801).
# Environment: SENTINEL_GROUPS (1-5, default 1), SENTINEL_BASE_PORT, SENTINEL_PORTS_BASE,
# SENTINEL_DIR (state, default /tmp/redlock-sentinel), SENTINEL_DATA_PASSWORD (data nodes
# requirepass and masterauth, and the Sentinels' auth-pass), SENTINEL_PASSWORD (the Sentinels'
# requirepass, which they also use with each other). `up` records all of these in
# $SENTINEL_DIR/topology.env (mode 600) and the other verbs read them from there.
# Processes are tracked by pid file and stopped by pid, never by name.
set -euo pipefail

state=${SENTINEL_DIR:-/tmp/redlock-sentinel}
usage="usage: sentinel-nodes.sh up|down|status|primary G|kill-primary G|isolate-primary G|wait-failover G HOST:PORT [SECONDS]|revive G [--stale]|freeze-replica G [--keep-link]|thaw-replica G"
die() { echo "sentinel-nodes: $*" >&2; exit 2; }
fail() { echo "sentinel-nodes: $*" >&2; exit 1; }
note() { echo "sentinel-nodes: $*" >&2; }
command -v redis-cli >/dev/null || die "redis-cli not found (apt-get install redis-tools)"
command -v redis-server >/dev/null || die "redis-server not found (apt-get install redis-server)"

verb=${1:-}
# A killed daemon may linger as a zombie until init reaps it: that is not running.
proc_state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true; }
running() { local st; st=$(proc_state "$1"); [[ -n $st && $st != Z ]]; }
anything_running() {
  local f
  for f in "$state"/node-*/redis.pid "$state"/sentinel-*/redis.pid; do
    [[ -s $f ]] && running "$(cat "$f")" && return 0
  done
  return 1
}
# The layout `up` recorded wins while anything of it runs (a fresh `up` takes the environment).
if [[ -s $state/topology.env && $verb != down ]] && { [[ $verb != up ]] || anything_running; }; then
  source "$state/topology.env"
fi
groups=${SENTINEL_GROUPS:-1}
base_port=${SENTINEL_BASE_PORT:-7801}
sentinel_base=${SENTINEL_PORTS_BASE:-27801}
data_pw=${SENTINEL_DATA_PASSWORD:-}
sentinel_pw=${SENTINEL_PASSWORD:-}
[[ $groups =~ ^[1-5]$ ]] || die "SENTINEL_GROUPS must be 1-5, got '$groups'"
[[ $base_port =~ ^[1-9][0-9]*$ ]] && ((base_port + 2 * groups - 1 <= 65535)) ||
  die "SENTINEL_BASE_PORT must be a port number with room for $((2 * groups)) ports, got '$base_port'"
[[ $sentinel_base =~ ^[1-9][0-9]*$ ]] && ((sentinel_base + 2 <= 65535)) ||
  die "SENTINEL_PORTS_BASE must be a port number up to 65533, got '$sentinel_base'"
((sentinel_base + 2 < base_port || sentinel_base > base_port + 2 * groups - 1)) ||
  die "the Sentinel ports $sentinel_base-$((sentinel_base + 2)) overlap the data ports $base_port-$((base_port + 2 * groups - 1))"
[[ $data_pw != *[[:space:]\"\']* && $sentinel_pw != *[[:space:]\"\']* ]] ||
  die "passwords may not contain spaces or quotes"

check_group() { [[ ${1:-} =~ ^[1-9][0-9]*$ ]] && (($1 <= groups)) || die "group must be 1-$groups, got '${1:-}'"; }
check_hostport() { [[ ${1:-} =~ ^[^:]+:[0-9]+$ ]] || die "expected HOST:PORT, got '${1:-}'"; }
case $verb in
  up|down|status) (($# == 1)) || die "$usage" ;;
  primary|kill-primary|isolate-primary|thaw-replica) (($# == 2)) || die "$usage"; check_group "$2" ;;
  revive) (($# == 2)) || { (($# == 3)) && [[ $3 == --stale ]]; } || die "$usage"; check_group "$2" ;;
  freeze-replica) (($# == 2)) || { (($# == 3)) && [[ $3 == --keep-link ]]; } || die "$usage"
      check_group "$2" ;;
  wait-failover) (($# == 3 || $# == 4)) || die "$usage"; check_group "$2"; check_hostport "$3"
      [[ ${4:-30} =~ ^[1-9][0-9]*$ ]] || die "SECONDS must be a positive integer, got '$4'" ;;
  *) die "$usage" ;;
esac

group_ports() { echo $((base_port + 2 * ($1 - 1))) $((base_port + 2 * ($1 - 1) + 1)); }
sentinel_ports() { echo "$sentinel_base" $((sentinel_base + 1)) $((sentinel_base + 2)); }
node_dir() { echo "$state/node-$1"; }
sentinel_dir() { echo "$state/sentinel-$1"; }
pid_in() { [[ -s $1/redis.pid ]] && cat "$1/redis.pid" || true; }
stopped() { [[ $(proc_state "$1") == T ]]; }
alive_in() { local pid; pid=$(pid_in "$1"); [[ -n $pid ]] && running "$pid"; }
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# redis-cli with a deadline (a SIGSTOPped server accepts the connection and never answers)
# and the password passed in the environment, not on the command line.
cli() {
  local port=$1 pw=$2; shift 2
  local -a env_pw=()
  [[ -n $pw ]] && env_pw=(REDISCLI_AUTH="$pw")
  env "${env_pw[@]}" timeout 2 redis-cli -h 127.0.0.1 -p "$port" "$@" 2>/dev/null || true
}
dcli() { local port=$1; shift; cli "$port" "$data_pw" "$@"; }
scli() { local port=$1; shift; cli "$port" "$sentinel_pw" "$@"; }
# Value of KEY in a flat key/value reply (SENTINEL MASTER), one item a line.
field() { awk -v k="$1" 'NR % 2 == 1 && $0 == k { getline; print; exit }'; }
# One line "port flags master-link-status" per replica in a SENTINEL REPLICAS reply.
replica_lines() {
  awk 'NR % 2 == 1 { k = $0; next }
       k == "name" && port != "" { print port, flags, link; port = flags = link = "" }
       k == "port" { port = $0 } k == "flags" { flags = $0 } k == "master-link-status" { link = $0 }
       END { if (port != "") print port, flags, link }'
}

# The host:port that at least 2 of the 3 Sentinels give for group G, or nothing.
majority_primary() {
  local s addr
  for s in $(sentinel_ports); do
    addr=$(scli "$s" sentinel get-master-addr-by-name "group$1" | paste -sd:)
    [[ $addr =~ ^[^:]+:[0-9]+$ ]] && echo "$addr"
  done | sort | uniq -c | awk '$1 >= 2 && !found { print $2; found = 1 }'
}
sentinel_views() {
  local s out=""
  for s in $(sentinel_ports); do
    out+=" $s:$(scli "$s" sentinel get-master-addr-by-name "group$1" | paste -sd:)"
  done
  echo "${out# }"
}
current_primary_port() {
  local addr; addr=$(majority_primary "$1")
  [[ -n $addr ]] || fail "no 2 of the 3 Sentinels agree on group$1's primary (${2:-}Sentinels say: $(sentinel_views "$1"))"
  local port=${addr##*:} p
  for p in $(group_ports "$1"); do [[ $p == "$port" ]] && { echo "$port"; return 0; }; done
  fail "the Sentinels name $addr for group$1, which is not one of its data nodes ($(group_ports "$1"))"
}
other_port() { local p; for p in $(group_ports "$1"); do [[ $p != "$2" ]] && echo "$p"; done; }

# poll SECONDS COMMAND...: run COMMAND every 0.1 s until it succeeds, or fail after SECONDS.
poll() {
  local seconds=$1 deadline; shift
  deadline=$(($(now_ms) + seconds * 1000))
  until "$@"; do
    (($(now_ms) < deadline)) || return 1
    sleep 0.1
  done
}

write_data_config() {
  local port=$1 dir; dir=$(node_dir "$port")
  mkdir -p "$dir"
  (umask 077
   {
     echo "port $port"
     echo "bind 127.0.0.1"
     echo "protected-mode yes"
     echo "daemonize yes"
     echo "pidfile $dir/redis.pid"
     echo "logfile $dir/redis.log"
     echo "dir $dir"
     echo "save \"\""
     echo "appendonly no"
     echo "maxmemory-policy noeviction"
     echo "repl-diskless-sync-delay 0"
     if [[ -n $data_pw ]]; then echo "requirepass $data_pw"; echo "masterauth $data_pw"; fi
   } > "$dir/redis.conf")
}

# start_data PORT [PRIMARY_PORT]: without persistence, as a replica of PRIMARY_PORT if given.
# The config file may have been rewritten by Sentinel (CONFIG REWRITE): the command line's
# replicaof wins over the file's.
start_data() {
  local port=$1 primary=${2:-} dir; dir=$(node_dir "$port")
  port_taken "$port" && die "port $port is already in use by another process"
  rm -f "$dir/dump.rdb" "$dir"/appendonly.aof*; rm -rf "$dir/appendonlydir"
  local -a role=(--replicaof no one)
  [[ -n $primary ]] && role=(--replicaof 127.0.0.1 "$primary")
  redis-server "$dir/redis.conf" "${role[@]}" ||
    { tail -n 5 "$dir/redis.log" >&2 2>/dev/null || true; die "redis-server on port $port did not start"; }
  poll 20 pinged "$port" || {
    tail -n 5 "$dir/redis.log" >&2 2>/dev/null || true
    fail "data node $port did not answer PING within 20 s; see $dir/redis.log"; }
}
pinged() { [[ $(dcli "$1" ping) == PONG ]]; }
spinged() { [[ $(scli "$1" ping) == PONG ]]; }

start_sentinel() {
  local port=$1 dir g p; dir=$(sentinel_dir "$port")
  port_taken "$port" && die "port $port is already in use by another process"
  mkdir -p "$dir"
  (umask 077
   {
     echo "port $port"
     echo "bind 127.0.0.1"
     echo "daemonize yes"
     echo "pidfile $dir/redis.pid"
     echo "logfile $dir/sentinel.log"
     echo "dir $dir"
     [[ -n $sentinel_pw ]] && echo "requirepass $sentinel_pw"
     for g in $(seq 1 "$groups"); do
       p=$(group_ports "$g"); p=${p%% *}
       echo "sentinel monitor group$g 127.0.0.1 $p 2"
       [[ -n $data_pw ]] && echo "sentinel auth-pass group$g $data_pw"
       echo "sentinel down-after-milliseconds group$g 1000"
       echo "sentinel failover-timeout group$g 5000"
     done
   } > "$dir/sentinel.conf")
  redis-server "$dir/sentinel.conf" --sentinel ||
    { tail -n 5 "$dir/sentinel.log" >&2 2>/dev/null || true; die "Sentinel on port $port did not start"; }
  poll 20 spinged "$port" || {
    tail -n 5 "$dir/sentinel.log" >&2 2>/dev/null || true
    fail "Sentinel $port did not answer PING within 20 s; see $dir/sentinel.log"; }
}

# Items of a reply, one a line, carriage returns dropped (INFO ends its lines with them).
reply() { local out; out=$(dcli "$@"); echo "${out//$'\r'/}"; }
replica_linked() { [[ $'\n'$(reply "$1" info replication)$'\n' == *$'\nmaster_link_status:up\n'* ]]; }
no_replicas() { [[ $'\n'$(reply "$1" info replication)$'\n' == *$'\nconnected_slaves:0\n'* ]]; }
role_of() { local out; out=$(reply "$1" role); echo "${out%%$'\n'*}"; }
gone() { ! running "$1"; }
revived_primary_ok() { replica_linked "$3" && all_sentinels_see "$1" "$2" "$3"; }
# Sentinel S sees group G healthy: its primary at port P up, 2 other Sentinels, and the
# replica R as a healthy replica (or, with R empty, any healthy replica).
sentinel_sees() {
  local s=$1 g=$2 p=$3 r=$4 m
  m=$(scli "$s" sentinel master "group$g")
  [[ $(field port <<<"$m") == "$p" && $(field flags <<<"$m") == master &&
     $(field num-other-sentinels <<<"$m") == 2 ]] || return 1
  local lines; lines=$'\n'$(scli "$s" sentinel replicas "group$g" | replica_lines)$'\n'
  [[ $lines == *$'\n'"$r slave ok"$'\n'* ]]
}
all_sentinels_see() {
  local g=$1 p=$2 r=$3 s
  for s in $(sentinel_ports); do sentinel_sees "$s" "$g" "$p" "$r" || return 1; done
}
ready_group() {
  local g=$1 p r
  p=$(majority_primary "$g"); p=${p##*:}
  [[ -n $p ]] || return 1
  r=$(other_port "$g" "$p")
  replica_linked "$r" && all_sentinels_see "$g" "$p" "$r"
}
wait_ready() {
  local g
  for g in $(seq 1 "$groups"); do
    poll 30 ready_group "$g" ||
      fail "timed out after 30 s waiting for every Sentinel to know group$g's primary, its replica (linked) and the other two Sentinels (Sentinels say: $(sentinel_views "$g")); logs in $state"
  done
}

all_dirs() { compgen -G "$state/node-*" || true; compgen -G "$state/sentinel-*" || true; }
stop_in() {
  local dir=$1 pid; pid=$(pid_in "$dir")
  [[ -n $pid ]] || return 0
  if running "$pid"; then
    kill -CONT "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do running "$pid" || break; sleep 0.02; done
    running "$pid" && kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do running "$pid" || break; sleep 0.02; done
  fi
  rm -f "$dir/redis.pid"
}

do_up() {
  local d any=0 all=1 g p r s
  for d in $(all_dirs); do alive_in "$d" && any=1; done
  for g in $(seq 1 "$groups"); do
    for p in $(group_ports "$g"); do alive_in "$(node_dir "$p")" || all=0; done
  done
  for s in $(sentinel_ports); do alive_in "$(sentinel_dir "$s")" || all=0; done
  if ((any && all)) && [[ -s $state/topology.env ]]; then
    wait_ready
    echo "already up: $groups group(s), Sentinels on 127.0.0.1:$sentinel_base-$((sentinel_base + 2))"
    return 0
  fi
  ((any)) && die "some processes of an earlier run are still running in $state: run 'sentinel-nodes.sh down' first"
  for d in $(all_dirs); do rm -rf "$d"; done
  mkdir -p "$state"
  (umask 077
   printf 'SENTINEL_GROUPS=%q\nSENTINEL_BASE_PORT=%q\nSENTINEL_PORTS_BASE=%q\nSENTINEL_DATA_PASSWORD=%q\nSENTINEL_PASSWORD=%q\n' \
     "$groups" "$base_port" "$sentinel_base" "$data_pw" "$sentinel_pw" > "$state/topology.env")
  for g in $(seq 1 "$groups"); do
    read -r p r <<<"$(group_ports "$g")"
    write_data_config "$p"; write_data_config "$r"
    start_data "$p"; start_data "$r" "$p"
  done
  for s in $(sentinel_ports); do start_sentinel "$s"; done
  wait_ready
  echo "up: $groups group(s) (group1..group$groups) on 127.0.0.1:$base_port-$((base_port + 2 * groups - 1)), Sentinels on 127.0.0.1:$sentinel_base-$((sentinel_base + 2))"
}

do_down() {
  local d
  for d in $(all_dirs); do stop_in "$d"; done
  for d in $(all_dirs); do rm -rf "$d"; done
  rm -f "$state/topology.env"
  rmdir "$state" 2>/dev/null || true
}

do_status() {
  local rc=0 g p s pid dir role
  [[ -s $state/topology.env ]] || { echo "not up (no $state/topology.env)"; exit 1; }
  for s in $(sentinel_ports); do
    dir=$(sentinel_dir "$s"); pid=$(pid_in "$dir")
    if [[ -n $pid ]] && running "$pid"; then echo "sentinel $s: pid $pid"
    else echo "sentinel $s: down"; rc=1; fi
  done
  for g in $(seq 1 "$groups"); do
    echo "group$g: primary per 2 of 3 Sentinels: $(majority_primary "$g") ($(sentinel_views "$g"))"
    for p in $(group_ports "$g"); do
      dir=$(node_dir "$p"); pid=$(pid_in "$dir")
      if [[ -z $pid ]] || ! running "$pid"; then echo "  node $p: down"; rc=1
      elif stopped "$pid"; then echo "  node $p: pid $pid, frozen (SIGSTOP)"
      else
        role=$(role_of "$p")
        echo "  node $p: pid $pid, ${role:-no answer}"
      fi
    done
  done
  exit $rc
}

do_kill_primary() {
  local g=$1 p pid dir
  p=$(current_primary_port "$g"); dir=$(node_dir "$p"); pid=$(pid_in "$dir")
  [[ -n $pid ]] && running "$pid" || fail "group$g's primary 127.0.0.1:$p is already down"
  kill -KILL "$pid"
  poll 5 gone "$pid" || fail "pid $pid (127.0.0.1:$p) still runs 5 s after kill -9"
  rm -f "$dir/redis.pid"
  note "killed group$g's primary 127.0.0.1:$p (pid $pid)"
  echo "127.0.0.1:$p"
}

# A split brain without a network of its own: the primary takes a password nobody else has
# (connections already logged in stay so), then drops its replica's link and the Sentinels'
# connections, which cannot log in again. The Sentinels see it down and promote the replica;
# the clients connected before still reach it, and it still says role:master to them.
do_isolate_primary() {
  local g=$1 p ids id pw="isolated-$RANDOM$RANDOM"
  p=$(current_primary_port "$g")
  alive_in "$(node_dir "$p")" || fail "group$g's primary 127.0.0.1:$p is down"
  [[ $(dcli "$p" config set requirepass "$pw") == OK ]] ||
    fail "CONFIG SET requirepass on 127.0.0.1:$p failed"
  ids=$(cli "$p" "$pw" client list | awk '/ name=sentinel-/ { sub("id=", "", $1); print $1 }')
  for id in $ids; do cli "$p" "$pw" client kill id "$id" >/dev/null; done
  cli "$p" "$pw" client kill type replica >/dev/null
  note "isolated group$g's primary 127.0.0.1:$p from its replica and the Sentinels ($(echo $ids | wc -w) Sentinel connections closed)"
  echo "127.0.0.1:$p"
}

differs_from() {
  local g=$1 old=$2 addr
  addr=$(majority_primary "$g")
  [[ -n $addr && $addr != "$old" ]] || return 1
  [[ $(role_of "${addr##*:}") == master ]]
}
do_wait_failover() {
  local g=$1 old=$2 seconds=${3:-30}
  poll "$seconds" differs_from "$g" "$old" ||
    fail "timed out after $seconds s waiting for 2 of 3 Sentinels to name a primary for group$g other than $old that answers ROLE as master (Sentinels say: $(sentinel_views "$g"))"
  majority_primary "$g"
}

do_revive() {
  local g=$1 stale=${2:-} p dead="" cand primary
  for cand in $(group_ports "$g"); do alive_in "$(node_dir "$cand")" || dead+=" $cand"; done
  dead=${dead# }
  [[ -n $dead ]] || fail "both data nodes of group$g are running: nothing to revive"
  [[ $dead != *" "* ]] || fail "both data nodes of group$g ($dead) are down: run down and up"
  primary=$(current_primary_port "$g")
  if [[ -n $stale ]]; then
    start_data "$dead"
    note "started 127.0.0.1:$dead as an empty master; Sentinel should turn it into a replica of 127.0.0.1:$primary within ~10 s"
  elif [[ $primary == "$dead" ]]; then
    # No failover happened: it comes back as the (empty) primary the Sentinels still name.
    start_data "$dead"
    p=$(other_port "$g" "$dead")
    poll 30 revived_primary_ok "$g" "$dead" "$p" ||
      fail "timed out after 30 s waiting for 127.0.0.1:$p to resync from the revived primary 127.0.0.1:$dead and every Sentinel to see both healthy"
    note "revived 127.0.0.1:$dead as group$g's primary (empty)"
  else
    start_data "$dead" "$primary"
    poll 30 revived_primary_ok "$g" "$primary" "$dead" ||
      fail "timed out after 30 s waiting for 127.0.0.1:$dead to sync from 127.0.0.1:$primary and every Sentinel to list it as a healthy replica"
    note "revived 127.0.0.1:$dead as a replica of 127.0.0.1:$primary"
  fi
  echo "127.0.0.1:$dead"
}

do_freeze() {
  local g=$1 keep=${2:-} p r pid
  p=$(current_primary_port "$g"); r=$(other_port "$g" "$p"); pid=$(pid_in "$(node_dir "$r")")
  [[ -n $pid ]] && running "$pid" || fail "group$g's replica 127.0.0.1:$r is down"
  stopped "$pid" && fail "group$g's replica 127.0.0.1:$r is already frozen"
  alive_in "$(node_dir "$p")" || fail "group$g's primary 127.0.0.1:$p is down"
  kill -STOP "$pid"
  if [[ -z $keep ]]; then
    [[ $(dcli "$p" client kill type replica) =~ ^[0-9]+$ ]] ||
      fail "CLIENT KILL TYPE replica on 127.0.0.1:$p failed; the replica is frozen"
    poll 5 no_replicas "$p" ||
      fail "127.0.0.1:$p still lists a replica 5 s after CLIENT KILL TYPE replica"
  fi
  note "froze group$g's replica 127.0.0.1:$r (pid $pid)${keep:+, link kept}"
  echo "127.0.0.1:$r"
}

do_thaw() {
  local g=$1 p pid n=0
  for p in $(group_ports "$g"); do
    pid=$(pid_in "$(node_dir "$p")")
    if [[ -n $pid ]] && stopped "$pid"; then
      kill -CONT "$pid"; n=$((n + 1))
      poll 5 pinged "$p" || fail "127.0.0.1:$p did not answer PING within 5 s of SIGCONT"
      note "thawed 127.0.0.1:$p (pid $pid)"
      echo "127.0.0.1:$p"
    fi
  done
  ((n > 0)) || fail "no data node of group$g is frozen"
}

case $verb in
  up) do_up ;;
  down) do_down ;;
  status) do_status ;;
  primary) echo "127.0.0.1:$(current_primary_port "$2")" ;;
  kill-primary) do_kill_primary "$2" ;;
  wait-failover) do_wait_failover "$2" "$3" "${4:-30}" ;;
  revive) do_revive "$2" "${3:-}" ;;
  freeze-replica) do_freeze "$2" "${3:-}" ;;
  thaw-replica) do_thaw "$2" ;;
  isolate-primary) do_isolate_primary "$2" ;;
esac
