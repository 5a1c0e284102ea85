#!/usr/bin/env bash
# Two revisions of the library, side by side on the same nodes, in interleaved rounds: did a
# change make the acquire slower? Prints each benchmark's median p50 and p99 per revision, the
# ratio new/old, and each revision's cost over the bare rounds of the same commands measured
# in the same round (quorum_round_floor): acquire at N = 5 over the bare SET round, release
# over the bare release.lua round, acquire at N = 1 over one synchronous SET
# (single_set_floor).
#   bench/compare-revisions.sh OLD [NEW=HEAD] [rounds=5]
# OLD and NEW are any git revisions; each gets an optimised build of its own in a worktree
# under ${BENCH_REVISIONS_DIR:-/tmp/redlock-revisions} (kept, so a second run builds little).
# Nodes from REDLOCK_NODES (default the local five, started and stopped here if not running).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: compare-revisions.sh OLD [NEW=HEAD] [rounds=5]"
old=${1:?$usage}
new=${2:-HEAD}
rounds=${3:-5}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare-revisions.sh: rounds must be a positive number" >&2; exit 2; }
work=${BENCH_REVISIONS_DIR:-/tmp/redlock-revisions}
filter='uncontended_acquire/[15]|uncontended_release/5|acquire_release_cycle/5|quorum_round_floor|single_set_floor'

build_revision() { # name revision -> path of its redlock_macro_bench
  local name=$1 revision commit tree
  revision=$(git -C "$root" rev-parse --verify "$2^{commit}") ||
    { echo "compare-revisions.sh: '$2' is no revision of this repository" >&2; exit 2; }
  tree=$work/$name
  if [[ ! -d $tree ]]; then
    git -C "$root" worktree add --detach --force "$tree" "$revision" >/dev/null
  else
    git -C "$tree" checkout --quiet --detach "$revision"
  fi
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DREDLOCK_BUILD_BENCHMARKS=ON \
    -DREDLOCK_HEADER_CHECKS=OFF "${launcher[@]}" >/dev/null
  cmake --build "$tree/build" -j"$(nproc)" --target redlock_macro_bench >/dev/null
  commit=$(git -C "$tree" rev-parse --short HEAD)
  echo "$tree/build/bench/redlock_macro_bench $commit"
}
read -r old_bench old_commit < <(build_revision old "$old")
read -r new_bench new_commit < <(build_revision new "$new")

if ! bash "$root/compose/local-nodes.sh" status >/dev/null 2>&1; then
  trap 'bash "$root/compose/local-nodes.sh" down' EXIT
  bash "$root/compose/local-nodes.sh" up
fi

out=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds" >&2
  # Alternating which goes first, so that neither always runs on a machine warmed by the other.
  order=(old new); ((round % 2 == 0)) && order=(new old)
  for which in "${order[@]}"; do
    bench=$old_bench; [[ $which == new ]] && bench=$new_bench
    "$bench" --benchmark_filter="$filter" --benchmark_min_time=1 --benchmark_format=json \
      > "$out/$which-$round.json" 2>/dev/null
  done
done

python3 - "$out" "$rounds" "$old_commit" "$new_commit" <<'PY'
import json, statistics, sys
out, rounds, old_commit, new_commit = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = {"old": [], "new": []}
for which in runs:
    for r in range(1, rounds + 1):
        with open(f"{out}/{which}-{r}.json") as f:
            runs[which].append({b["name"].split("/manual_time")[0]: b
                                for b in json.load(f)["benchmarks"]})
def values(which, name, counter):
    return [run[name][counter] for run in runs[which] if name in run]
names = sorted({n for run in runs["old"] + runs["new"] for n in run})
print(f"old {old_commit}, new {new_commit}: {rounds} interleaved rounds, medians (us)")
print(f"{'benchmark':34} {'old p50':>9} {'new p50':>9} {'new/old':>8} {'old p99':>9} {'new p99':>9} {'new/old':>8}")
for name in names:
    row = [name[:34].ljust(34)]
    for counter in ("p50_us", "p99_us"):
        o, n = values("old", name, counter), values("new", name, counter)
        if not o or not n:
            row.append(f"{'-':>9} {'-':>9} {'-':>8}")
            continue
        mo, mn = statistics.median(o), statistics.median(n)
        row.append(f"{mo:9.1f} {mn:9.1f} {mn / mo:8.2f}")
    print(" ".join(row))
# Each round's operations against their bare rounds in the same round: the library's cost,
# free of the machine's load. quorum_round_floor's p50 is its release.lua round; its SET
# round's p50 is the counter set_round_p50_us.
floors = (("uncontended_acquire/5", "quorum_round_floor", "set_round_p50_us", "bare SET round"),
          ("uncontended_release/5", "quorum_round_floor", "p50_us", "bare release round"),
          ("uncontended_acquire/1", "single_set_floor", "p50_us", "one synchronous SET"))
for which in ("old", "new"):
    for op, floor, counter, what in floors:
        ratios = [run[op]["p50_us"] / run[floor][counter] for run in runs[which]
                  if op in run and floor in run and counter in run[floor]]
        if ratios:
            print(f"{which}: {op} p50 / {what} p50, per round: "
                  + ", ".join(f"{r:.2f}" for r in ratios)
                  + f"; median {statistics.median(ratios):.2f}")
PY
rm -rf "$out"
