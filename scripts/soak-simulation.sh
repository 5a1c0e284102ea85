#!/usr/bin/env bash
# Long soak of the deterministic simulation: N schedules (default 5,000,000) from a random
# first seed, in chunks run one after the other so that progress shows. Each chunk ends with
# its per-defect summary (seeds included); the script goes on through every chunk and exits
# non-zero if any chunk found a violation (SIM_STOP_ON_FAILURE=1 stops at the first one).
#   scripts/soak-simulation.sh [N] [first-seed]
# Environment: SIM_BUILD_DIR (default build), SIM_CHUNK (default 200000), SIM_JOBS (build -j,
# default 2), REDLOCK_SIM_MAX_PRINTED (failures printed with a trace per chunk, default 0).
# REDLOCK_SIM_PROFILE=<calm|chaos|noscript_cleanup|renewal_deadline> soaks one mix.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
total=${1:-5000000}
first=${2:-$(( $(date +%s%N) % 1000000000000 ))}
[[ $total =~ ^[0-9]+$ && $first =~ ^[0-9]+$ ]] || { echo "soak-simulation.sh: N and first-seed must be whole numbers" >&2; exit 2; }
build=${SIM_BUILD_DIR:-$root/build}
chunk=${SIM_CHUNK:-200000}
if [[ ! -f $build/build.ninja && ! -f $build/Makefile ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDLOCK_WARNINGS_AS_ERRORS=ON >/dev/null
fi
cmake --build "$build" -j"${SIM_JOBS:-2}" --target redlock_simulation
binary=$build/tests/simulation/redlock_simulation
done_count=0
status=0
failing=()
while (( done_count < total )); do
  n=$(( total - done_count < chunk ? total - done_count : chunk ))
  seed=$(( first + done_count ))
  echo "== seeds $seed .. $(( seed + n - 1 ))"
  # The regression seeds run once, with the first chunk only.
  regression=$(( done_count == 0 ? 1 : 0 ))
  if ! REDLOCK_SIM_SCHEDULES=$n REDLOCK_SIM_FIRST=$seed REDLOCK_SIM_REGRESSION=$regression \
       REDLOCK_SIM_MAX_PRINTED=${REDLOCK_SIM_MAX_PRINTED:-0} "$binary"; then
    status=1
    failing+=("$seed..$(( seed + n - 1 ))")
    if [[ ${SIM_STOP_ON_FAILURE:-0} == 1 ]]; then
      done_count=$(( done_count + n ))
      break
    fi
  fi
  done_count=$(( done_count + n ))
done
echo "soak-simulation.sh: $done_count schedules from seed $first, exit $status"
if (( status != 0 )); then
  echo "soak-simulation.sh: violations in seed ranges ${failing[*]}; replay one with REDLOCK_SIM_SEED=<seed> $binary" >&2
fi
exit $status
