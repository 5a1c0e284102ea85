#!/usr/bin/env bash
# Mutation score of the deterministic simulation (docs/reliability.md, "Mutation score of the
# simulation"): each deliberate defect of tests/simulation/mutants/*.patch is applied to a
# copy of the sources (never to this tree), the simulation built there and run on the same
# seeds, and a table printed: mutant, schedules, failing schedules, first failing seed.
# A mutant with 0 failing schedules is a gap in the simulation (a missing fault, workload or
# invariant) to close, not a mutant to drop.
# A manual tool, not run by CI (six builds and runs take several minutes on two cores).
#   scripts/mutants.sh [schedules] [first-seed] [mutant-name-regex]
# Defaults: 20000 schedules from seed 1, every mutant. Environment: MUTANTS_DIR (the copy and
# its build, default /tmp/redlock-mutants), SIM_JOBS (build -j, default 2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
schedules=${1:-20000}
first=${2:-1}
only=${3:-}
[[ $schedules =~ ^[0-9]+$ && $first =~ ^[0-9]+$ ]] || { echo "mutants.sh: schedules and first-seed must be whole numbers" >&2; exit 2; }
work=${MUTANTS_DIR:-/tmp/redlock-mutants}
copy=$work/src
build=$work/build
mkdir -p "$copy"
# The tree as it is now (committed or not), without build directories and git's own. Only
# files whose contents differ are replaced, with a new mtime: an older copy's build then
# rebuilds exactly what changed (keeping a source's mtime could leave stale objects).
rm -rf "$work/incoming" && mkdir -p "$work/incoming"
tar -C "$root" --exclude='./build*' --exclude=./.git --exclude=./compose/.local -cf - . |
  tar -C "$work/incoming" -xf -
(cd "$work/incoming" && find . -type f -print0) | while IFS= read -r -d '' f; do
  if ! cmp -s "$work/incoming/$f" "$copy/$f"; then
    mkdir -p "$copy/$(dirname "$f")" && cp "$work/incoming/$f" "$copy/$f"
  fi
done
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$copy" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DREDLOCK_WARNINGS_AS_ERRORS=ON "${launcher[@]}" >/dev/null
fi
rows=()
for patch in "$root"/tests/simulation/mutants/*.patch; do
  name=$(basename "$patch" .patch)
  [[ -z $only || $name =~ $only ]] || continue
  (cd "$copy" && patch -s -p1 < "$patch")
  if ! cmake --build "$build" -j"${SIM_JOBS:-2}" --target redlock_simulation >"$work/$name.build.log" 2>&1; then
    (cd "$copy" && patch -s -R -p1 < "$patch")
    rows+=("$name|build failed (see $work/$name.build.log)||")
    continue
  fi
  REDLOCK_SIM_SCHEDULES=$schedules REDLOCK_SIM_FIRST=$first REDLOCK_SIM_REGRESSION=0 \
    REDLOCK_SIM_MAX_PRINTED=0 "$build/tests/simulation/redlock_simulation" >"$work/$name.log" 2>&1 || true
  (cd "$copy" && patch -s -R -p1 < "$patch")
  failing=$(sed -n 's/.* \([0-9][0-9]*\) failing schedules$/\1/p' "$work/$name.log")
  seed=$(sed -n 's/^FAILED seed \([0-9][0-9]*\):.*/\1/p' "$work/$name.log" | head -1)
  rows+=("$name|$schedules|${failing:-?}|${seed:--}")
done
# The unmutated tree last, so that the copy's build ends as the sources are.
cmake --build "$build" -j"${SIM_JOBS:-2}" --target redlock_simulation >/dev/null
printf '%-36s %10s %10s %16s\n' mutant schedules failing first-failing-seed
status=0
for row in "${rows[@]}"; do
  IFS='|' read -r name n failing seed <<<"$row"
  printf '%-36s %10s %10s %16s\n' "$name" "$n" "$failing" "$seed"
  [[ $failing =~ ^[1-9] ]] || status=1
done
exit $status
