#!/usr/bin/env bash
# The whole test suite: the release build under CTest; then the concurrency test under the
# thread sanitizer and every test again under address+undefined sanitizers (asan preset).
# OFFGRAPH_SKIP_SANITIZERS=1 runs the release lane only. Fails when any test fails.
# Prints the minutes each lane took at the end (docs/ci.md records them).
set -euo pipefail
cd "$(dirname "$0")/.."
lanes=()
lane_start=$SECONDS
lane() {  # records the time since the previous lane ended
  lanes+=("$(awk -v n="$1" -v s=$((SECONDS - lane_start)) 'BEGIN { printf "%-24s %5.1f min", n, s / 60 }')")
  lane_start=$SECONDS
}
report() { printf '\nminutes per lane:\n'; printf '  %s\n' "${lanes[@]}"; }
trap report EXIT
# Runs "$@" (a test command) with TMPDIR set to an empty directory of its own, and fails if
# the tests left anything in it: a test that leaks its temporary files fills the disk over
# many runs (pytest keeps its last three base directories by design, so those are allowed).
run_tests_checking_tmp() {
  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/offgraph-ci-XXXXXX")
  local rc=0
  TMPDIR="$tmp" "$@" || rc=$?
  local left
  left=$(find "$tmp" -mindepth 1 -maxdepth 1 ! -name 'pytest-of-*' -printf '%f\n' | head -20 || true)
  rm -rf "$tmp"
  if [ -n "$left" ]; then
    printf 'tests left these in their temporary directory:\n%s\n' "$left" >&2
    [ "$rc" -ne 0 ] || rc=1
  fi
  return "$rc"
}
bash scripts/install-deps.sh
lane "dependencies"
bash scripts/build.sh release
lane "release build"
run_tests_checking_tmp ctest --preset release -j "$(nproc)"
lane "release tests"
if [ "${OFFGRAPH_SKIP_SANITIZERS:-0}" != "1" ]; then
  # Thread sanitizer on the concurrency tests only (the rest is single-threaded per session):
  # the scheduler under many submitting threads, and the HTTP transport (one I/O thread,
  # handler threads, exchanges crossing between them).
  cmake --preset tsan >/dev/null
  cmake --build build/tsan -j "$(nproc)" --target concurrency_test http_server_test
  TSAN_OPTIONS=halt_on_error=1 run_tests_checking_tmp build/tsan/tests/concurrency_test
  TSAN_OPTIONS=halt_on_error=1 run_tests_checking_tmp build/tsan/tests/http_server_test
  lane "tsan build + test"
  bash scripts/build.sh asan
  lane "asan build"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_tests_checking_tmp ctest --preset asan -j "$(nproc)"
  lane "asan tests"
fi
