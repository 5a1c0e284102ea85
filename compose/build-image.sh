#!/usr/bin/env bash
# Builds the local node image for the container topology when it is missing: no image
# registry is reachable here, so `redis:7` cannot be pulled. A Debian 12 minbase system with
# Debian's redis-server, made by debootstrap from the mirror this host's apt uses, imported
# as an image (about two minutes, about 100 MB).
#
#   compose/build-image.sh [IMAGE]     # default: redlock-node:bookworm
#
# The image holds Redis only: the faults (partition, delay) run the host's iptables and tc
# inside each container's network namespace, so they work on any Redis image, the official
# one included. The compose file sets every Redis option it relies on, so Debian's defaults
# (protected mode, a config file) do not matter.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
image=${1:-redlock-node:bookworm}
die() { echo "build-image: $*" >&2; exit 2; }

bash "$here/docker-engine.sh"
docker image inspect "$image" >/dev/null 2>&1 && exit 0

# The Debian mirror of this host's apt sources (a fresh machine uses the same).
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [[ -f $f ]] && sources+=("$f")
done
((${#sources[@]})) || die "no apt source on this host to take the Debian mirror from"
mirror=$(sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+bookworm[[:space:]].*/\2/p' \
         "${sources[@]}" | grep -E 'debian' | grep -v security | head -n 1 || true)
[[ -n $mirror ]] || die "cannot find a Debian mirror in this host's apt sources"

echo "build-image: making $image from Debian 12 packages (about two minutes)" >&2
dir=$(mktemp -d /var/tmp/redlock-node-image.XXXXXX)
trap 'rm -rf --one-file-system "$dir"' EXIT
log=/var/tmp/redlock-node-image.log
debootstrap --variant=minbase --include=redis-server bookworm "$dir/root" "$mirror" \
  >"$log" 2>&1 || { tail -n 20 "$log" >&2; die "debootstrap failed; whole log: $log"; }
# What a container never uses: downloaded packages, package lists, documentation.
rm -rf "$dir"/root/var/cache/apt/archives/*.deb "$dir"/root/var/lib/apt/lists/* \
       "$dir"/root/usr/share/doc "$dir"/root/usr/share/man "$dir"/root/usr/share/locale
tar --numeric-owner -C "$dir/root" -c . |
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'EXPOSE 6379' \
    --change 'CMD ["redis-server", "--protected-mode", "no"]' \
    - "$image" >/dev/null || die "docker import failed"
echo "build-image: $image ready" >&2
