#!/usr/bin/env bash
# The whole test suite: the release build under CTest; then the concurrency test under the
# thread sanitizer and every test again under address+undefined sanitizers (asan preset).
# OFFGRAPH_SKIP_SANITIZERS=1 runs the release lane only. Fails when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh release
ctest --preset release -j "$(nproc)"
if [ "${OFFGRAPH_SKIP_SANITIZERS:-0}" != "1" ]; then
  # Thread sanitizer on the concurrency tests only (the rest is single-threaded per session).
  cmake --preset tsan >/dev/null
  cmake --build build/tsan -j "$(nproc)" --target concurrency_test
  TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/concurrency_test
  bash scripts/build.sh asan
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset asan -j "$(nproc)"
fi
