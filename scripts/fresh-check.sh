#!/usr/bin/env bash
# Does the README work on a bare Debian 12? Runs one of its commands, from a clean clone of
# this repository's HEAD, in a debootstrap minbase chroot of Debian 12 (bookworm), as root and
# without sudo, exactly as a new user would: only the project's own scripts install anything.
# Listing the commands our scripts call would not catch what tools call behind our back (CPack
# runs `file` and `dpkg-shlibdeps`); only running the set-up on a bare system does.
#
#   scripts/fresh-check.sh              # scripts/test.sh -L packaging: set-up, build, packaging
#   scripts/fresh-check.sh --all        # scripts/test.sh: the README's whole test command
#   scripts/fresh-check.sh -- CMD...    # any command, run in the clone's top directory
#
# The chroot runs in its own mount and PID namespaces (unshare): its mounts and every process
# it started (the Redis nodes too) are gone when it ends, however it ends. It shares the
# host's network, so the local nodes' ports (7001-7005) must be free.
#
# Environment:
#   FRESH_CACHE_DIR  where the pristine chroot (a tarball, remade after 30 days or with
#                    FRESH_REFRESH=1) and the downloaded .deb files are kept between runs
#                    (default /var/cache/redlock-fresh). Only downloads are reused: every run
#                    starts from the pristine minbase system, nothing installed.
#   FRESH_KEEP=1     keep the chroot after the run (its path is printed).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "fresh-check: $*" >&2; exit 2; }

command=(./scripts/test.sh -L packaging)
case "${1:-}" in
  "") ;;
  --all) command=(./scripts/test.sh) ;;
  --) shift; (($#)) || die "no command after --"; command=("$@") ;;
  *) die "usage: fresh-check.sh [--all | -- COMMAND...]" ;;
esac

[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap, chroot, mount namespaces)"
# What this check itself needs on the host goes through the same set-up as everything else.
EXTRA_PACKAGES="debootstrap ${EXTRA_PACKAGES:-}" SETUP_SKIP_BUILD=1 bash "$root/scripts/setup.sh"
for tool in debootstrap unshare chroot git; do
  command -v "$tool" >/dev/null || die "$tool not found"
done

cache=${FRESH_CACHE_DIR:-/var/cache/redlock-fresh}
base=$cache/bookworm-minbase.tar
mkdir -p "$cache/archives/partial"
# The packages this host already downloaded (its own set-up above installed the same ones)
# need not cross the network again: hard links, so nothing is copied (skipped across
# filesystems). apt in the chroot still installs every package from scratch and checks each
# file against its index; only the download is saved, as with a local mirror.
cp -n -l /var/cache/apt/archives/*.deb "$cache/archives/" 2>/dev/null || true

# The Debian mirror this host's apt uses (a fresh machine would use the same), and the
# source files that name it, copied into the chroot as its own apt sources.
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [[ -f $f ]] && grep -qE '^[^#]*(debian|bookworm)' "$f" && sources+=("$f")
done
((${#sources[@]})) || die "no Debian apt source on this host to take the mirror from"
mirror=$(sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+bookworm[[:space:]].*/\2/p' \
         "${sources[@]}" | grep -v security | head -n 1)
[[ -n $mirror ]] || die "cannot find the Debian mirror in ${sources[*]}"

if [[ ! -s $base || ${FRESH_REFRESH:-0} == 1 ]] || [[ -n $(find "$base" -mtime +30 2>/dev/null) ]]; then
  echo "fresh-check: making a Debian 12 minbase system (about two minutes)" >&2
  fresh=$(mktemp -d "$cache/debootstrap.XXXXXX")
  trap 'rm -rf "$fresh"' EXIT
  debootstrap --variant=minbase --cache-dir="$cache/archives" bookworm "$fresh" "$mirror" \
    >"$cache/debootstrap.log" 2>&1 ||
    die "debootstrap failed; see $cache/debootstrap.log"
  rm -f "$fresh"/etc/apt/sources.list
  mkdir -p "$fresh/etc/apt/sources.list.d"
  for f in "${sources[@]}"; do cp "$f" "$fresh/etc/apt/sources.list.d/"; done
  tar --numeric-owner -C "$fresh" -cf "$base.new" . && mv "$base.new" "$base"
  rm -rf "$fresh"
  trap - EXIT
fi

chroot_dir=$(mktemp -d /var/tmp/redlock-fresh.XXXXXX)
if [[ ${FRESH_KEEP:-0} != 1 ]]; then
  trap 'rm -rf --one-file-system "$chroot_dir"' EXIT
fi
# Owners by number: the chroot's users (apt's _apt) are not the host's.
tar --numeric-owner -C "$chroot_dir" -xf "$base"
# Its root directory as on any machine: the tarball's "." came from mktemp (mode 700), and
# other users (apt's _apt, a test's nobody) must reach /usr.
chmod 755 "$chroot_dir"
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf" 2>/dev/null || true
# What the Debian installer writes on every machine (debootstrap leaves it to the installer).
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$chroot_dir/etc/hosts"
# A clean clone of what is committed: work in progress must not make the check pass.
if [[ -n $(git -C "$root" status --porcelain 2>/dev/null) ]]; then
  echo "fresh-check: note: uncommitted changes are not part of the check (it clones HEAD)" >&2
fi
git clone --quiet --no-hardlinks "$root" "$chroot_dir/src/redlock"
git -C "$chroot_dir/src/redlock" checkout --quiet --detach "$(git -C "$root" rev-parse HEAD)"

echo "fresh-check: running '${command[*]}' in a fresh Debian 12 ($chroot_dir)" >&2
printf -v quoted '%q ' "${command[@]}"
status=0
unshare --mount --pid --fork --propagation private bash -euo pipefail -c '
  dir=$1; cache=$2; shift 2
  mount -t proc proc "$dir/proc"
  mount -t sysfs sysfs "$dir/sys"
  mount --rbind /dev "$dir/dev"
  mount -t tmpfs tmpfs "$dir/dev/shm"
  mount -t tmpfs tmpfs "$dir/tmp"
  mount --bind "$cache/archives" "$dir/var/cache/apt/archives"
  exec chroot "$dir" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CI="${CI:-}" \
    bash -c "cd /src/redlock && $*"
' fresh-check "$chroot_dir" "$cache" "$quoted" || status=$?

if ((status)); then
  echo "fresh-check: FAILED (exit $status) on a fresh Debian 12" >&2
else
  echo "fresh-check: passed on a fresh Debian 12" >&2
fi
[[ ${FRESH_KEEP:-0} == 1 ]] && echo "fresh-check: chroot kept in $chroot_dir" >&2
exit "$status"
