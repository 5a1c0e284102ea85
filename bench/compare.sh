#!/usr/bin/env bash
# Our benchmarks and node-redlock's, side by side on the same five nodes, in interleaved
# rounds; prints medians, ranges and ratios, and draws the acquire-latency CDF.
#   bench/compare.sh [rounds=3]        (nodes from REDLOCK_NODES, default the local five)
# Installs what it needs and is missing (node, npm, gnuplot, python3) through scripts/setup.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BENCH_BUILD_DIR:-$root/build-bench}
rounds=${1:-3}
out=${BENCH_OUT:-$build/results}
rm -rf "$out"; mkdir -p "$out/samples"

declare -A package_of=([node]=nodejs [npm]=npm [gnuplot]=gnuplot-nox [python3]=python3
                       [redis-benchmark]=redis-tools)
wanted=""
for tool in "${!package_of[@]}"; do
  command -v "$tool" >/dev/null || wanted+=" ${package_of[$tool]}"
done
if [[ -n $wanted ]]; then
  EXTRA_PACKAGES="$wanted" SETUP_SKIP_BUILD=1 bash "$root/scripts/setup.sh"
fi
for tool in node npm redis-benchmark python3 gnuplot; do
  command -v "$tool" >/dev/null || { echo "compare.sh: $tool is missing" >&2; exit 2; }
done
# An optimised build of its own: numbers from a debug build would mean nothing.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target redlock_macro_bench >/dev/null
[[ -d $root/bench/peers/node_modules ]] || (cd "$root/bench/peers" && npm install --silent)
nodes=$(bash "$root/compose/local-nodes.sh" status >/dev/null 2>&1 && echo started || true)
if [[ -z $nodes ]]; then
  trap 'bash "$root/compose/local-nodes.sh" down' EXIT
  bash "$root/compose/local-nodes.sh" up
fi
first_port=${REDLOCK_NODES:-127.0.0.1:7001}; first_port=${first_port%%,*}; first_port=${first_port##*:}

filter='single_set_floor|uncontended_acquire/5|uncontended_acquire/3|uncontended_acquire/1'
filter+='|uncontended_release/5|acquire_release_cycle/5|throughput_distinct_keys|contended_single_key'
filter+='|acquire_one_node_slowed'
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds" >&2
  samples=""; [[ $round == "$rounds" ]] && samples="$out/samples"
  REDLOCK_BENCH_SAMPLES=$samples "$build/bench/redlock_macro_bench" --benchmark_filter="$filter" \
    --benchmark_min_time=2 --benchmark_format=json > "$out/ours-$round.json" 2>/dev/null
  for lib in v5 v4; do
    for workload in latency throughput contended; do
      REDLOCK_BENCH_SAMPLES=$samples node "$root/bench/peers/bench.js" "$lib" "$workload" \
        >> "$out/peers-$round.jsonl"
    done
  done
  redis-benchmark -h 127.0.0.1 -p "$first_port" -c 1 -n 20000 -t set --csv \
    > "$out/redis-benchmark-$round.csv" 2>/dev/null
done
python3 "$root/bench/report.py" "$out" "$rounds"
