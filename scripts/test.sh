#!/usr/bin/env bash
# The whole test suite: the release build under CTest, then the unit tests again under
# address+undefined sanitizers (the asan preset). Fails when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh release
ctest --preset release -j "$(nproc)"
if [ "${OFFGRAPH_SKIP_ASAN:-0}" != "1" ]; then
  bash scripts/build.sh asan
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset asan -j "$(nproc)"
fi
