#!/usr/bin/env bash
# Acquire latency over TLS against plaintext on the same redis-server processes (each listens
# on both), on one node and on five, in interleaved rounds; prints the median p50/p99 of each
# and their ratio, next to redis-benchmark's own SET (one client, one node) over both: the
# cost of TLS on the server and in OpenSSL, which no client can avoid.
#   bench/tls.sh [rounds=5]
# Starts its own nodes (REDLOCK_TLS=1 compose/local-nodes.sh, node 1 on port 7601 unless
# REDLOCK_BASE_PORT is set) and stops them on exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BENCH_BUILD_DIR:-$root/build-bench}
rounds=${1:-5}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "tls.sh: rounds must be a positive number" >&2; exit 2; }
export REDLOCK_BASE_PORT=${REDLOCK_BASE_PORT:-7601}
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
  plain+="${plain:+,}127.0.0.1:$((REDLOCK_BASE_PORT + n - 1))"
  tls+="${tls:+,}rediss://localhost:$((REDLOCK_BASE_PORT + 100 + n - 1))"
done
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds" >&2
  for kind in plain tls; do
    nodes=$plain; [[ $kind == tls ]] && nodes=$tls
    REDLOCK_NODES=$nodes REDLOCK_TLS_CA=$REDLOCK_LOCAL_DIR/tls/ca.crt \
      "$build/bench/redlock_macro_bench" --benchmark_filter='^uncontended_acquire/(1|5)/' \
      --benchmark_min_time=2 --benchmark_format=json > "$out/$kind-$round.json"
  done
  redis-benchmark -h 127.0.0.1 -p "$REDLOCK_BASE_PORT" -c 1 -n 20000 -t set --csv \
    2>/dev/null | tail -1 > "$out/redis-plain-$round.csv"
  redis-benchmark -h 127.0.0.1 -p $((REDLOCK_BASE_PORT + 100)) --tls \
    --cacert "$REDLOCK_LOCAL_DIR/tls/ca.crt" -c 1 -n 20000 -t set --csv \
    2>/dev/null | tail -1 > "$out/redis-tls-$round.csv"
done

python3 - "$out" "$rounds" <<'PY'
import csv, json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def ours(kind, nodes):
    rows = []
    for r in range(1, rounds + 1):
        with open(f"{out}/{kind}-{r}.json") as f:
            found = [b for b in json.load(f)["benchmarks"]
                     if b["name"].startswith(f"uncontended_acquire/{nodes}/")]
        if not found or found[0].get("error_occurred"):
            sys.exit(f"{kind} round {r}: no result for {nodes} nodes")
        rows.append(found[0])
    return rows
def redis_p50(kind):
    # redis-benchmark --csv: test, rps, avg, min, p50, p95, p99, max (milliseconds)
    values = []
    for r in range(1, rounds + 1):
        with open(f"{out}/redis-{kind}-{r}.csv") as f:
            values.append(float(next(csv.reader(f))[4]) * 1000)
    return values
def line(label, p, t):
    print(f"  {label}: plaintext {statistics.median(p):.1f} [{min(p):.1f}-{max(p):.1f}]"
          f"  tls {statistics.median(t):.1f} [{min(t):.1f}-{max(t):.1f}]"
          f"  ratio {statistics.median(t) / statistics.median(p):.2f}")
print(f"{rounds} interleaved rounds; medians [min-max] in microseconds")
for nodes in (1, 5):
    plain, tls = ours("plain", nodes), ours("tls", nodes)
    for q in ("p50_us", "p99_us"):
        line(f"acquire, {nodes} node{'s' if nodes > 1 else ''}, {q[:3]}",
             [b[q] for b in plain], [b[q] for b in tls])
line("redis-benchmark SET, 1 node, p50", redis_p50("plain"), redis_p50("tls"))
PY
