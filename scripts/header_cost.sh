#!/usr/bin/env bash
# The include cost of each public header: the compile time (CPU seconds, user + system) of a
# translation unit that includes only that header, syntax only at -O0 (what every file of a
# user that includes it pays), the median of 5 runs. Prints a Markdown table (docs/api.md
# keeps one).
#
#   scripts/header_cost.sh [compiler]      # default g++; e.g. clang++
set -euo pipefail
cd "$(dirname "$0")/.."
compiler="${1:-g++}"
runs=5
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# The build's generated headers are not needed: the public headers include only the
# standard library, Boost and each other.
echo "| header | CPU seconds, median of $runs |"
echo "| --- | --- |"
echo "" > "$scratch/empty.cpp"
for header in baseline include/redlock/*.hpp; do
    if [ "$header" = baseline ]; then
        tu="$scratch/empty.cpp"
        name="(empty file)"
    else
        name="$(basename "$header")"
        tu="$scratch/$name.cpp"
        printf '#include <redlock/%s>\n' "$name" > "$tu"
    fi
    times=()
    for _ in $(seq "$runs"); do
        # CPU time (user + system) of the compiler rather than wall time: on a shared
        # machine the wall clock measures the other jobs as much as the header.
        TIMEFORMAT='%U %S'
        cpu=$({ time "$compiler" -std=c++20 -O0 -fsyntax-only -Iinclude "$tu"; } 2>&1)
        times+=("$(echo "$cpu" | awk '{print $1 + $2}')")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")
    printf '| `%s` | %.2f |\n' "$name" "$median"
done
