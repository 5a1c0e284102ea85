#!/usr/bin/env bash
# Builds the libFuzzer targets with clang 14 (+ AddressSanitizer and UBSan) and runs each for
# a bounded time on a copy of its seed corpus: configuration parsing (tests/fuzz/corpus) and
# the reply stream a node sends (tests/fuzz/reply_corpus).
#   scripts/fuzz.sh [seconds]     # per target, default 60
#   scripts/fuzz.sh build         # only builds them (CI builds while other stages run)
# A crash leaves its input in the build directory and fails the script.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
[[ $seconds == build || $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: seconds must be a whole number (or 'build')" >&2; exit 2; }
command -v clang++-14 >/dev/null || { echo "fuzz.sh: clang++-14 missing (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function -fno-sanitize-recover=all"
CXX=clang++-14 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" -DREDLOCK_BUILD_FUZZERS=ON \
  -DREDLOCK_BUILD_BENCHMARKS=OFF -DREDLOCK_BUILD_EXAMPLES=OFF -DREDLOCK_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target redlock_config_fuzzer redlock_reply_stream_fuzzer
[[ $seconds == build ]] && exit 0
run() { # target seed-corpus
  local corpus="$build/corpus-$1"
  mkdir -p "$corpus"
  cp -n "$2"/* "$corpus"/
  (cd "$build" && "./tests/redlock_$1_fuzzer" -max_total_time="$seconds" -timeout=5 \
     -rss_limit_mb=2048 -print_final_stats=1 "$corpus")
}
run config "$root/tests/fuzz/corpus"
run reply_stream "$root/tests/fuzz/reply_corpus"
