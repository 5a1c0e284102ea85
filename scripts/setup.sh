#!/usr/bin/env bash
# Installs what the build and tests need from Debian 12 packages (only what is missing),
# then configures and builds into ${BUILD_DIR:-build}.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}

# Also what tools run behind our back: CPack's DEB generator runs `file` and `dpkg-shlibdeps`
# (dpkg-dev). The man page is made by help2man; the packaging test reads it with man (man-db).
# scripts/fresh-check.sh runs this on a bare Debian 12 to prove the list whole.
packages=(build-essential cmake pkg-config python3 libboost1.81-dev libboost-program-options1.81-dev
          libboost-json1.81-dev libhiredis-dev liblua5.1-0-dev libssl-dev openssl libgtest-dev
          libbenchmark-dev redis-server redis-tools libjemalloc2
          clang-14 libclang-rt-14-dev doxygen file dpkg-dev help2man man-db)
# The container topology (REDLOCK_TOPOLOGY=containers, compose/local-nodes.sh): the Docker
# engine and Compose, debootstrap for the node image, and what the network faults run inside
# a container's namespace (nsenter, iptables, tc). Only then: the plain test command needs
# no Docker.
if [[ ${REDLOCK_TOPOLOGY:-local} == containers ]]; then
  packages+=(docker.io docker-compose debootstrap iptables iproute2 util-linux)
fi
# EXTRA_PACKAGES: more for a caller (bench/compare.sh); SETUP_SKIP_BUILD=1: packages only.
read -r -a extra <<< "${EXTRA_PACKAGES:-}"
packages+=("${extra[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=(); [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  # A bare system (a container, debootstrap) has no sudo and needs none: root is enough.
  if ((${#sudo[@]})) && ! command -v sudo >/dev/null; then
    echo "setup: not root and no sudo: install as root: ${missing[*]}" >&2
    exit 1
  fi
  apt=(apt-get -o Acquire::Retries=3)
  "${sudo[@]}" "${apt[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" "${apt[@]}" install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

[[ ${SETUP_SKIP_BUILD:-0} == 1 ]] && exit 0
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
  -DREDLOCK_WARNINGS_AS_ERRORS=ON ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
