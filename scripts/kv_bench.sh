#!/usr/bin/env bash
# Decode at depth with each KV cache dtype, offgraph beside llama-bench, interleaved:
#   scripts/kv_bench.sh PROGRAM.ogp MODEL.gguf [DEPTH=4096] [ROUNDS=1]
# Each round runs, one after the other: offgraph bench --ctx DEPTH with --kv-dtype fp32, q8_0,
# q4_0, then llama-bench -d DEPTH -fa 1 with -ctk/-ctv f16 (its default), q8_0 and q4_0; 16
# decoded tokens, 2 runs each (median / mean as each tool reports). Prints one table row per
# run. llama.cpp comes from ../shared/anchors (LLAMA_CPP=... to point elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
program=$1 gguf=$2 depth=${3:-4096} rounds=${4:-1}
llama=${LLAMA_CPP:-$(cd .. && pwd)/anchors/llama.cpp}
offgraph=${OFFGRAPH:-build/release/src/cli/offgraph}
threads=$(nproc)
echo "| round | engine | kv | tg16 @ $depth tok/s |"
echo "|---:|---|---|---:|"
for round in $(seq "$rounds"); do
  for kv in fp32 q8_0 q4_0; do
    tps=$("$offgraph" bench -m "$program" -p 16 -n 16 -r 2 --ctx "$depth" --kv-dtype "$kv" --threads "$threads" --json |
      /usr/bin/python3 -c 'import json, sys; print("%.2f" % json.load(sys.stdin)["decode_tok_s"])')
    echo "| $round | offgraph | $kv | $tps |"
  done
  for kv in f16 q8_0 q4_0; do
    tps=$(LD_LIBRARY_PATH="$llama/build/bin" "$llama/build/bin/llama-bench" -m "$gguf" -t "$threads" -p 0 -n 16 -r 2 \
      -d "$depth" -fa 1 -ctk "$kv" -ctv "$kv" -o json 2>/dev/null |
      /usr/bin/python3 -c 'import json, sys; print("%.2f" % json.load(sys.stdin)[0]["avg_ts"])')
    echo "| $round | llama.cpp | $kv | $tps |"
  done
done
