#!/usr/bin/env bash
# Runs libFuzzer targets: scripts/fuzz.sh [SECONDS] [TARGET...] (default 60 s, all targets).
# New inputs that raise coverage land in fuzz/corpus/<target>/ (merge them into a fresh
# directory with -merge=1 before committing, see docs/fuzzing.md); crashes, hangs (-timeout)
# and leaks land in build/fuzz/artifacts/, full logs in build/fuzz/logs/. FUZZ_JOBS sets the
# build parallelism (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"; shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_safetensors fuzz_config fuzz_program fuzz_cache_file fuzz_tokenizer fuzz_chat_template fuzz_json_schema)
cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j "${FUZZ_JOBS:-$(nproc)}" --target "${targets[@]}"
mkdir -p build/fuzz/artifacts build/fuzz/logs
failed=0
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  echo "== $t for ${seconds}s"
  rc=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "build/fuzz/fuzz/$t" "fuzz/corpus/$t" -max_total_time="$seconds" -max_len=65536 -timeout=20 \
    -rss_limit_mb=4096 -artifact_prefix=build/fuzz/artifacts/ -print_final_stats=1 \
    >"build/fuzz/logs/$t.log" 2>&1 || rc=$?
  grep -E '^#[0-9]+ +DONE|^stat::|ERROR|SUMMARY' "build/fuzz/logs/$t.log" || true
  if [ "$rc" -ne 0 ]; then echo "!! $t exited $rc: build/fuzz/logs/$t.log, build/fuzz/artifacts/"; failed=1; fi
done
exit "$failed"
