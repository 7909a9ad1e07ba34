#!/usr/bin/env bash
# Runs libFuzzer targets: scripts/fuzz.sh [SECONDS] [TARGET...] (default 60 s, all targets).
# New inputs that raise coverage land in fuzz/corpus/<target>/ (commit the small ones);
# crashes land in build/fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"; shift || true
targets=("$@"); [ ${#targets[@]} -eq 0 ] && targets=(fuzz_safetensors fuzz_config fuzz_program fuzz_cache_file)
cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j "$(nproc)" --target "${targets[@]}"
mkdir -p build/fuzz/artifacts
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  echo "== $t for ${seconds}s"
  ASAN_OPTIONS=detect_leaks=1 "build/fuzz/fuzz/$t" "fuzz/corpus/$t" -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=4096 -artifact_prefix=build/fuzz/artifacts/ -print_final_stats=1 2>&1 | tail -4
done
