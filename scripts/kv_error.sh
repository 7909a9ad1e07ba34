#!/usr/bin/env bash
# The KV cache quantization's error, offgraph beside llama.cpp on the same checkpoint:
#   scripts/kv_error.sh PROGRAM.ogp MODEL.gguf [CONTEXT=4096] [LAST=256]
# Feeds CONTEXT random token ids (seeded, the same for both) and keeps the logits of the last
# LAST positions with fp32/f32 KV, q8_0 and q4_0 (keys and values alike), then prints per
# engine and kv dtype the error against that engine's own fp32-KV logits: max |d| / max |ref|,
# RMS of d over RMS of ref, and top-1 agreement (teacher-forced greedy over the LAST positions).
# llama.cpp comes from ../shared/anchors (LLAMA_CPP=... to point elsewhere); its side is
# scripts/llamacpp_logits.cc, compiled here against libllama. Flash attention on for llama.cpp
# (its quantized V needs it).
set -euo pipefail
cd "$(dirname "$0")/.."
program=$1 gguf=$2 ctx=${3:-4096} last=${4:-256}
offgraph=${OFFGRAPH:-build/release/src/cli/offgraph}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source scripts/llamacpp_logits.sh
llamacpp_logits_setup "$program" "$work" "$ctx" 7
for kv in fp32 q8_0 q4_0; do
  "$offgraph" logits -m "$program" --tokens-file "$work/tokens" --last "$last" --kv-dtype "$kv" --out "$work/og_$kv.npy"
  llama_kv=$([ "$kv" = fp32 ] && echo f32 || echo "$kv")
  "$work/llamacpp_logits" "$gguf" "$work/tokens" "$llama_kv" "$llama_kv" "$last" "$work/ll_$kv.npy" "$(nproc)" 2>/dev/null
done
/usr/bin/python3 - "$work" "$ctx" "$last" <<'EOF'
import sys
import numpy as np
work, ctx, last = sys.argv[1], sys.argv[2], sys.argv[3]
print(f"| engine | kv | max abs err / max abs logit | rms err / rms logit | top-1 agreement ({last} positions after {ctx}) |")
print("|---|---|---:|---:|---:|")
for engine, tag in (("offgraph", "og"), ("llama.cpp", "ll")):
    ref = np.load(f"{work}/{tag}_fp32.npy").astype(np.float64)
    for kv in ("q8_0", "q4_0"):
        x = np.load(f"{work}/{tag}_{kv}.npy").astype(np.float64)
        d = x - ref
        print(f"| {engine} | {kv} | {np.abs(d).max() / np.abs(ref).max():.2e} | "
              f"{np.sqrt((d * d).mean()) / np.sqrt((ref * ref).mean()):.2e} | {(x.argmax(1) == ref.argmax(1)).mean():.3f} |")
EOF
