#!/usr/bin/env bash
# The handoff of one key between 16 waiters, ours and our peers', side by side on the same five
# nodes in interleaved rounds (the machine may be shared and noisy: only numbers of one run are
# compared). Each measurement runs its own baseline first: one client's back-to-back
# acquire+release for 2 s, then 16 waiters on one key for 2 s.
#   bench/compare-handoff.sh [rounds=3]    (nodes from REDLOCK_NODES, default the local five)
# Needs a Release build of redlock_macro_bench in $BENCH_BUILD_DIR (default build-bench) and
# bench/peers/node_modules (npm install in bench/peers).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BENCH_BUILD_DIR:-$root/build-bench}
rounds=${1:-3}
out=${BENCH_OUT:-$build/results-handoff}
rm -rf "$out"; mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds" >&2
  "$build/bench/redlock_macro_bench" --benchmark_filter='handoff_single_key' \
    --benchmark_format=json > "$out/ours-$round.json" 2>/dev/null
  for lib in v5 mutex semaphore; do
    node "$root/bench/peers/bench.js" "$lib" handoff >> "$out/peers-$round.jsonl"
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
series = {}
for r in range(1, rounds + 1):
    with open(os.path.join(out, f"ours-{r}.json")) as f:
        for b in json.load(f)["benchmarks"]:
            name = {"handoff_single_key/1/iterations:1": "redlock (C++), handoff",
                    "handoff_single_key/0/iterations:1": "redlock (C++), polling 0-2 ms"}[b["name"]]
            series.setdefault(name, []).append(b)
    with open(os.path.join(out, f"peers-{r}.jsonl")) as f:
        for line in f:
            p = json.loads(line)
            name = {"v5": "node-redlock v5 (retry 1 ms + 2 ms jitter)",
                    "mutex": "redis-semaphore RedlockMutex (retry 1 ms)",
                    "semaphore": "redis-semaphore RedlockSemaphore, 1 permit (retry 1 ms)"}[p["library"]]
            series.setdefault(name, []).append(p)
def med(rows, key):
    return statistics.median(float(x[key]) for x in rows)
print(f"\n{rounds} interleaved rounds; medians [ratio min-max]. 16 waiters on one key; ours: baseline "
      "and handoff in alternating 250 ms slices, 2 s each; peers: 2 s baseline, then 2 s handoff.\n")
print("| library | baseline cycles/s | grants/s | ratio | wait p50 (ms) | wait p99 (ms) | least/most grants per waiter | Jain |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for name, rows in series.items():
    print(f"| {name} | {med(rows, 'base_cycles_per_s'):,.0f} | {med(rows, 'grants_per_s'):,.0f} | "
          f"{med(rows, 'ratio'):.2f} [{min(float(x['ratio']) for x in rows):.2f}-{max(float(x['ratio']) for x in rows):.2f}] | "
          f"{med(rows, 'wait_p50_us') / 1000:.1f} | {med(rows, 'wait_p99_us') / 1000:.1f} | "
          f"{med(rows, 'grants_least_waiter'):.0f}/{med(rows, 'grants_most_waiter'):.0f} | "
          f"{med(rows, 'jain_fairness'):.3f} |")
PY
