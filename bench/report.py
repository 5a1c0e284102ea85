#!/usr/bin/env python3
"""Turns bench/compare.sh's raw results into the comparison table and the CDF plot.

usage: report.py RESULTS_DIR ROUNDS
Medians over the rounds, with [min-max] ranges; ratios are of medians measured in the same run.
"""
import csv
import glob
import json
import os
import statistics
import subprocess
import sys

out_dir, rounds = sys.argv[1], int(sys.argv[2])


def ours(round_no):
    with open(os.path.join(out_dir, f"ours-{round_no}.json")) as f:
        data = json.load(f)
    return {b["name"].replace("/manual_time", "").replace("/iterations:1", ""): b
            for b in data["benchmarks"]}


def peers(round_no):
    rows = {}
    with open(os.path.join(out_dir, f"peers-{round_no}.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            rows.setdefault(r["library"], {}).update(r)
    return rows


def redis_benchmark(round_no):
    with open(os.path.join(out_dir, f"redis-benchmark-{round_no}.csv")) as f:
        for row in csv.DictReader(f):
            return float(row["p50_latency_ms"]) * 1000.0
    return float("nan")


series = {}


def add(name, value):
    series.setdefault(name, []).append(value)


for r in range(1, rounds + 1):
    o, p = ours(r), peers(r)
    add("floor_p50", o["single_set_floor"]["p50_us"])
    add("redis_benchmark_p50", redis_benchmark(r))
    for n in (1, 3, 5):
        add(f"acquire{n}_p50", o[f"uncontended_acquire/{n}"]["p50_us"])
    add("acquire5_p99", o["uncontended_acquire/5"]["p99_us"])
    add("release5_p50", o["uncontended_release/5"]["p50_us"])
    add("cycle5_p50", o["acquire_release_cycle/5"]["p50_us"])
    add("cycle5_p99", o["acquire_release_cycle/5"]["p99_us"])
    for c in (1, 16, 64, 256):
        add(f"tp{c}", o[f"throughput_distinct_keys/{c}"]["cycles_per_s"])
    add("contended", o["contended_single_key/16"]["grants_per_s"])
    add("proxied_p50", o["acquire_one_node_slowed/0"]["p50_us"])
    add("slowed_p50", o["acquire_one_node_slowed/20"]["p50_us"])
    for lib in ("v5", "v4"):
        add(f"{lib}_acquire_p50", p[lib]["acquire_p50_us"])
        add(f"{lib}_acquire_p99", p[lib]["acquire_p99_us"])
        add(f"{lib}_cycle_p50", p[lib]["cycle_p50_us"])
        add(f"{lib}_cycle_p99", p[lib]["cycle_p99_us"])
        add(f"{lib}_tp64", p[lib]["cycles_per_s"])
        add(f"{lib}_contended", p[lib]["grants_per_s"])


def med(name):
    return statistics.median(series[name])


def cell(name, digits=0):
    v = series[name]
    return f"{statistics.median(v):,.{digits}f} [{min(v):,.{digits}f}-{max(v):,.{digits}f}]"


print(f"\n{rounds} interleaved rounds; medians [min-max]. Latencies in microseconds.\n")
rows = [
    ("acquire p50, N=5", "acquire5_p50", "v5_acquire_p50", "v4_acquire_p50", True),
    ("acquire p99, N=5", "acquire5_p99", "v5_acquire_p99", "v4_acquire_p99", True),
    ("acquire+release p50, N=5", "cycle5_p50", "v5_cycle_p50", "v4_cycle_p50", True),
    ("acquire+release p99, N=5", "cycle5_p99", "v5_cycle_p99", "v4_cycle_p99", True),
    ("cycles/s, 64 distinct keys", "tp64", "v5_tp64", "v4_tp64", False),
    ("grants/s, 16 waiters on 1 key", "contended", "v5_contended", "v4_contended", False),
]
print("| measure | redlock (C++) | node-redlock v5 | redlock@4 | vs v5 | vs v4 |")
print("| --- | --- | --- | --- | --- | --- |")
for label, mine, v5, v4, lower_is_better in rows:
    r5, r4 = med(mine) / med(v5), med(mine) / med(v4)
    word = "x their time" if lower_is_better else "x their rate"
    print(f"| {label} | {cell(mine)} | {cell(v5)} | {cell(v4)} | {r5:.2f}{word} | {r4:.2f}{word} |")

print("\n| measure | value | x the floor |")
print("| --- | --- | --- |")
floor = med("floor_p50")
print(f"| floor: one SET, one node, sync hiredis, p50 | {cell('floor_p50', 1)} | 1.00 |")
print(f"| redis-benchmark -c 1 -t set, p50 | {cell('redis_benchmark_p50', 1)} | "
      f"{med('redis_benchmark_p50') / floor:.2f} |")
for n in (1, 3, 5):
    print(f"| acquire p50, N={n} | {cell(f'acquire{n}_p50', 1)} | {med(f'acquire{n}_p50') / floor:.2f} |")
print(f"| release p50, N=5 | {cell('release5_p50', 1)} | {med('release5_p50') / floor:.2f} |")
print(f"| acquire p50, N=5, one node behind the proxy, +0 ms | {cell('proxied_p50', 1)} | {med('proxied_p50') / floor:.2f} |")
print(f"| acquire p50, N=5, one node behind the proxy, +20 ms | {cell('slowed_p50', 1)} | {med('slowed_p50') / floor:.2f} |")
for c in (1, 16, 64, 256):
    print(f"| cycles/s, {c} concurrent distinct keys | {cell(f'tp{c}')} | |")

targets = [
    ("acquire p50 N=5 <= 1.4x floor", med("acquire5_p50") / floor, 1.4, True),
    ("release p50 N=5 <= 1.2x floor", med("release5_p50") / floor, 1.2, True),
    ("acquire p50 N=5 <= 0.85x node-redlock v5", med("acquire5_p50") / med("v5_acquire_p50"), 0.85, True),
    ("cycles/s at 64 keys >= 5x node-redlock v5", med("tp64") / med("v5_tp64"), 5.0, False),
    ("slowed-node acquire p50 <= 1.2x healthy (same proxy at +0 ms)",
     med("slowed_p50") / med("proxied_p50"), 1.2, True),
]
print("\n| target | measured | met |")
print("| --- | --- | --- |")
for label, value, bound, upper in targets:
    met = value <= bound if upper else value >= bound
    print(f"| {label} | {value:.2f} | {'yes' if met else 'NO'} |")

# The CDF: every sample of the last round.
samples = os.path.join(out_dir, "samples")
curves = [("single_set_floor.txt", "one SET (floor)"),
          ("uncontended_acquire_5.txt", "redlock acquire, N=5"),
          ("acquire_one_node_slowed_20.txt", "redlock acquire, N=5, one node +20 ms"),
          ("node_redlock_v5_acquire.txt", "node-redlock v5 acquire, N=5"),
          ("node_redlock_v4_acquire.txt", "redlock@4 acquire, N=5")]
plot = []
for file, title in curves:
    path = os.path.join(samples, file)
    if not os.path.exists(path):
        continue
    values = sorted(float(x) for x in open(path) if x.strip())
    cdf = path + ".cdf"
    with open(cdf, "w") as f:
        step = max(1, len(values) // 2000)
        for i in range(0, len(values), step):
            f.write(f"{values[i]} {(i + 1) / len(values)}\n")
        f.write(f"{values[-1]} 1.0\n")
    plot.append(f"'{cdf}' using 1:2 with lines lw 2 title '{title}'")
if plot:
    image = os.path.join(os.path.dirname(out_dir.rstrip("/")), "latency-cdf.png")
    script = f"""set terminal pngcairo size 900,520 font ',10' noenhanced
set output '{image}'
set logscale x
set xlabel 'latency (microseconds, log scale)'
set ylabel 'fraction of acquires'
set key bottom right
set grid
set xrange [20:100000]
plot {', '.join(plot)}
"""
    subprocess.run(["gnuplot"], input=script.encode(), check=True)
    print(f"\nCDF: {image}")
