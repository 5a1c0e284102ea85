#!/usr/bin/env bash
# Acquire latency over TLS against plaintext on the same five redis-server processes (each
# listens on both), in interleaved rounds; prints the median p50/p99 of each and their ratio.
#   bench/tls.sh [rounds=5]
# Starts its own nodes (REDLOCK_TLS=1 compose/local-nodes.sh, base port 7600 unless
# REDLOCK_BASE_PORT is set) and stops them on exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BENCH_BUILD_DIR:-$root/build-bench}
rounds=${1:-5}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "tls.sh: rounds must be a positive number" >&2; exit 2; }
export REDLOCK_BASE_PORT=${REDLOCK_BASE_PORT:-7600}
export REDLOCK_LOCAL_DIR=${REDLOCK_LOCAL_DIR:-$build/tls-nodes}
export REDLOCK_TLS=1
out=$build/tls-results
rm -rf "$out"; mkdir -p "$out"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target redlock_macro_bench >/dev/null
trap 'bash "$root/compose/local-nodes.sh" down' EXIT
bash "$root/compose/local-nodes.sh" up >/dev/null

plain="" tls=""
for n in 1 2 3 4 5; do
  plain+="${plain:+,}127.0.0.1:$((REDLOCK_BASE_PORT + n))"
  tls+="${tls:+,}rediss://localhost:$((REDLOCK_BASE_PORT + 100 + n))"
done
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds" >&2
  for kind in plain tls; do
    nodes=$plain; [[ $kind == tls ]] && nodes=$tls
    REDLOCK_NODES=$nodes REDLOCK_TLS_CA=$REDLOCK_LOCAL_DIR/tls/ca.crt \
      "$build/bench/redlock_macro_bench" --benchmark_filter='^uncontended_acquire/5$' \
      --benchmark_min_time=2 --benchmark_format=json > "$out/$kind-$round.json"
  done
done

python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def counters(kind):
    rows = []
    for r in range(1, rounds + 1):
        with open(f"{out}/{kind}-{r}.json") as f:
            bench = json.load(f)["benchmarks"][0]
        if bench.get("error_occurred"):
            sys.exit(f"{kind} round {r}: {bench.get('error_message')}")
        rows.append(bench)
    return rows
plain, tls = counters("plain"), counters("tls")
print(f"acquire on 5 nodes, {rounds} interleaved rounds; medians [min-max] in microseconds")
for q in ("p50_us", "p99_us"):
    p = [b[q] for b in plain]; t = [b[q] for b in tls]
    print(f"  {q[:-3]}: plaintext {statistics.median(p):.1f} [{min(p):.1f}-{max(p):.1f}]"
          f"  tls {statistics.median(t):.1f} [{min(t):.1f}-{max(t):.1f}]"
          f"  ratio {statistics.median(t) / statistics.median(p):.2f}")
PY
