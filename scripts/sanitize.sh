#!/usr/bin/env bash
# Builds with clang 14 and a sanitizer, then runs the unit and integration tests under it
# (and, under AddressSanitizer, a short run of the deterministic simulation).
#   scripts/sanitize.sh address [build|test]  # AddressSanitizer + UndefinedBehaviorSanitizer (+ leaks)
#   scripts/sanitize.sh thread [build|test]   # ThreadSanitizer
# `build` only builds, `test` only runs what an earlier `build` made (CI builds while other
# stages run), neither does both. The tests expect the five nodes to be running
# (scripts/test.sh or compose/local-nodes.sh up).
# -fno-sanitize=function: clang 14 cannot emit that one UBSan check for coroutines (the
# assembler fails with "Cannot represent a difference across sections"); every other
# UBSan check stays on.
# -gline-tables-only: reports need file and line, not variables; full debug info would make
# these builds about a quarter slower to compile.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: sanitize.sh address|thread [build|test]"
kind=${1:?$usage}
step=${2:-all}
[[ $step == build || $step == test || $step == all ]] || { echo "sanitize.sh: $usage" >&2; exit 2; }
case $kind in
  address) flags="-fsanitize=address,undefined -fno-sanitize=function -fno-sanitize-recover=all" ;;
  # ThreadSanitizer cannot see std::atomic_thread_fence, which Asio's reference counts
  # use (detail/atomic_count.hpp: a release decrement, then an acquire fence before the
  # delete): two threads letting go of copies of one executor read as a race. Without
  # std::atomic Asio counts with acquire-release operations, which TSan understands.
  thread) flags="-fsanitize=thread -DBOOST_ASIO_DISABLE_STD_ATOMIC" ;;
  *) echo "sanitize.sh: unknown sanitizer '$kind'" >&2; exit 2 ;;
esac
command -v clang++-14 >/dev/null || { echo "sanitize.sh: clang++-14 missing (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }
build=${SANITIZE_BUILD_DIR:-$root/build-$kind}
# Only what runs under this sanitizer: ThreadSanitizer runs no simulation (single-threaded,
# nothing to see), so its build leaves the simulation out.
targets=(redlock_unit_tests redlock_integration_tests)
[[ $kind == address ]] && targets+=(redlock_simulation redlock_simulation_selftest redlock_sim_conformance)
if [[ $step != test ]]; then
  # Benchmarks and examples run no test: not built here (the main build compiles them).
  CXX=clang++-14 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" \
    -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only" -DREDLOCK_WARNINGS_AS_ERRORS=ON \
    -DREDLOCK_BUILD_BENCHMARKS=OFF -DREDLOCK_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
fi
[[ $step == build ]] && exit 0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# Under ThreadSanitizer, not the suites whose client runs on one thread against servers
# (hostile nodes, TLS, ACL, secrets): AddressSanitizer covers them, and there is no
# sharing between threads for TSan to see. Nor the load test: its 200 contenders share one
# client thread, which ThreadSanitizer slows beyond what the nodes' timeouts allow (commands
# wait unread until the connection's patience resets it); AddressSanitizer runs it.
skip=""
[[ $kind == thread ]] && skip="hostile|tls_test|tls_cli_test|acl_test|^secrets\.|two_hundred_contenders|sim_conformance"
ctest --test-dir "$build" -L 'unit|integration' ${skip:+-E "$skip"} --output-on-failure -j2
# The simulation is single-threaded: under AddressSanitizer a shorter run of it, with the
# regression seeds; ThreadSanitizer would have nothing to see.
if [[ $kind == address ]]; then
  REDLOCK_SIM_SCHEDULES=${SANITIZE_SIM_SCHEDULES:-3000} \
    ctest --test-dir "$build" -L simulation --output-on-failure -j2
fi
