#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine, for the container topology
# (REDLOCK_TOPOLOGY=containers compose/local-nodes.sh): installs what is missing from Debian's
# packages through scripts/setup.sh (its container list: docker.io, docker-compose, ...), then
# starts dockerd when none answers and waits for its socket. Only the container topology
# needs any of this: the README's plain test command never calls it.
#
# dockerd started here keeps running after the caller ends (it is the machine's engine, not a
# test's); its log is /var/log/redlock-dockerd.log.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "docker-engine: $*" >&2; exit 2; }

for tool in dockerd docker-compose debootstrap nsenter iptables tc; do
  if ! command -v "$tool" >/dev/null; then
    REDLOCK_TOPOLOGY=containers SETUP_SKIP_BUILD=1 bash "$root/scripts/setup.sh"
    break
  fi
done
command -v docker >/dev/null || die "no docker client after installing docker.io"

docker version >/dev/null 2>&1 && exit 0
[[ $(id -u) -eq 0 ]] || die "no Docker engine answers and starting one needs root"
echo "docker-engine: starting dockerd (log: /var/log/redlock-dockerd.log)" >&2
# A session of its own: the engine outlives the script (and the test) that started it.
setsid dockerd >/var/log/redlock-dockerd.log 2>&1 < /dev/null &
for _ in $(seq 1 300); do
  docker version >/dev/null 2>&1 && exit 0
  sleep 0.1
done
tail -n 20 /var/log/redlock-dockerd.log >&2 || true
die "dockerd did not answer within 30 s"
