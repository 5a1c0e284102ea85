#!/usr/bin/env bash
# Builds with clang 14 and a sanitizer, then runs the tests under it.
#   scripts/sanitize.sh address [STEP]  # AddressSanitizer + UndefinedBehaviorSanitizer (+ leaks)
#   scripts/sanitize.sh thread [STEP]   # ThreadSanitizer
# STEP is one of:
#   configure  only configures the build directory (scripts/fuzz.sh builds its targets there)
#   build      configures and builds what the other steps run
#   test       runs the unit and integration tests an earlier `build` made; they expect the
#              five nodes to be running (scripts/test.sh or compose/local-nodes.sh up)
#   simulate   (address only) a shorter run of the deterministic simulation with its
#              regression seeds: no nodes needed, so CI runs it while other stages run
#   all        (the default) build, test, and simulate under AddressSanitizer
# What each build holds, and why:
# - AddressSanitizer: every unit and integration test, the simulation, and the libFuzzer
#   targets (scripts/fuzz.sh): the library is compiled once with libFuzzer's coverage
#   instrumentation (-fsanitize=fuzzer-no-link) and serves the tests and the fuzzers alike,
#   instead of a third compile of the library for the fuzzers alone.
# - ThreadSanitizer: the tests where threads meet (REDLOCK_TEST_SET=threads in
#   tests/CMakeLists.txt): a race needs two threads, and the other tests run the client on
#   one. No simulation (single-threaded, nothing to see).
# Neither compiles the public headers one by one (REDLOCK_HEADER_CHECKS=OFF): that checks the
# headers, not the code, and the main build does it.
# -fno-sanitize=function: clang 14 cannot emit that one UBSan check for coroutines (the
# assembler fails with "Cannot represent a difference across sections"); every other
# UBSan check stays on.
# -gline-tables-only: reports need file and line, not variables; full debug info would make
# these builds about a quarter slower to compile.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: sanitize.sh address|thread [configure|build|test|simulate|all]"
kind=${1:?$usage}
step=${2:-all}
[[ $step =~ ^(configure|build|test|simulate|all)$ ]] || { echo "sanitize.sh: $usage" >&2; exit 2; }
case $kind in
  address)
    flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize=function -fno-sanitize-recover=all"
    test_set=all ;;
  # ThreadSanitizer cannot see std::atomic_thread_fence, which Asio's reference counts
  # use (detail/atomic_count.hpp: a release decrement, then an acquire fence before the
  # delete): two threads letting go of copies of one executor read as a race. Without
  # std::atomic Asio counts with acquire-release operations, which TSan understands.
  thread)
    flags="-fsanitize=thread -DBOOST_ASIO_DISABLE_STD_ATOMIC"
    test_set=threads ;;
  *) echo "sanitize.sh: unknown sanitizer '$kind'" >&2; exit 2 ;;
esac
[[ $step == simulate && $kind != address ]] && { echo "sanitize.sh: simulate runs under address only" >&2; exit 2; }
command -v clang++-14 >/dev/null || { echo "sanitize.sh: clang++-14 missing (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }
build=${SANITIZE_BUILD_DIR:-$root/build-$kind}

if [[ $step == configure || $step == build || $step == all ]]; then
  # Benchmarks and examples run no test: not built here (the main build compiles them).
  CXX=clang++-14 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" \
    -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only" -DREDLOCK_WARNINGS_AS_ERRORS=ON \
    -DREDLOCK_BUILD_BENCHMARKS=OFF -DREDLOCK_BUILD_EXAMPLES=OFF -DREDLOCK_HEADER_CHECKS=OFF \
    -DREDLOCK_TEST_SET=$test_set -DREDLOCK_BUILD_FUZZERS=$([[ $kind == address ]] && echo ON || echo OFF) \
    >/dev/null
fi
[[ $step == configure ]] && exit 0
if [[ $step == build || $step == all ]]; then
  # redlock_history_check: the judge scripts.history_check (a unit test) runs.
  targets=(redlock_unit_tests redlock_integration_tests redlock_history_check)
  [[ $kind == address ]] && targets+=(redlock_simulation redlock_simulation_selftest
    redlock_sim_conformance redlock_config_fuzzer redlock_reply_stream_fuzzer)
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
fi
[[ $step == build ]] && exit 0

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The path quoted for the sanitizers' option parser (a space or a colon in it).
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions='$root/tests/tsan_suppressions.txt'"
if [[ $step == test || $step == all ]]; then
  # The ThreadSanitizer build does not build the simulation's conformance test (an
  # integration test against redis-server): left out of its run.
  skip=""
  [[ $kind == thread ]] && skip="sim_conformance"
  ctest --test-dir "$build" -L 'unit|integration' ${skip:+-E "$skip"} --output-on-failure -j2
fi
# The simulation is single-threaded: under AddressSanitizer a shorter run of it, with the
# regression seeds. 600 schedules: since the simulated clients run the real connection code
# (node_connection over simulated byte streams), 3,000 took 593 s at nice 19 in CI, the last
# of its background work and 6 minutes on its critical path; 1,000 still left 47 s of it
# on that path once the role changes were simulated (2026-12-06), with CI over its budget.
if [[ $kind == address && ($step == simulate || $step == all) ]]; then
  REDLOCK_SIM_SCHEDULES=${SANITIZE_SIM_SCHEDULES:-600} \
    ctest --test-dir "$build" -L simulation --output-on-failure -j2
fi
