#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 14, AddressSanitizer + UBSan) and runs each for a
# bounded time on a copy of its seed corpus: configuration parsing (tests/fuzz/corpus) and
# the reply stream a node sends (tests/fuzz/reply_corpus).
#   scripts/fuzz.sh [seconds]     # per target, default 60
#   scripts/fuzz.sh build         # only builds them
# They live in the AddressSanitizer build (scripts/sanitize.sh address configure: the library
# there carries libFuzzer's coverage instrumentation), FUZZ_BUILD_DIR (default build-address),
# so CI's AddressSanitizer build already holds them.
# A crash leaves its input in the build directory and fails the script.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
[[ $seconds == build || $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: seconds must be a whole number (or 'build')" >&2; exit 2; }
build=${FUZZ_BUILD_DIR:-$root/build-address}
SANITIZE_BUILD_DIR="$build" bash "$root/scripts/sanitize.sh" address configure
cmake --build "$build" -j"$(nproc)" --target redlock_config_fuzzer redlock_reply_stream_fuzzer
[[ $seconds == build ]] && exit 0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run() { # target seed-corpus; everything it says goes to its log, setting up included
  {
    local corpus="$build/corpus-$1"
    mkdir -p "$corpus"
    cp -n "$2"/* "$corpus"/
    cd "$build"
    "./tests/redlock_$1_fuzzer" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
      -print_final_stats=1 "$corpus"
  } >"$build/fuzz-$1.log" 2>&1
}
# The two at once, one per core (each fuzzer runs one process, up to 2 GB), each into its
# own log: the run takes `seconds`, not twice that. A failure prints its fuzzer's log; both
# are waited for, and stopped if this script is.
run config "$root/tests/fuzz/corpus" &
config=$!
run reply_stream "$root/tests/fuzz/reply_corpus" &
reply_stream=$!
trap 'kill "$config" "$reply_stream" 2>/dev/null || true' EXIT
failed=0
for target in config reply_stream; do
  if wait "${!target}"; then
    { grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' \
        "$build/fuzz-$target.log" || true; } | sed "s/^/fuzz.sh: $target: /"
  else
    tail -n 60 "$build/fuzz-$target.log" || true
    echo "fuzz.sh: the $target fuzzer failed (whole log: $build/fuzz-$target.log)" >&2
    failed=1
  fi
done
exit "$failed"
