#!/usr/bin/env bash
# The error of offgraph's math modes and of llama.cpp, each against the float64 reference, on
# the same checkpoint and tokens:
#   [SEED=11] scripts/math_error.sh PROGRAM.ogp HF_DIR MODEL.gguf [TOKENS=64]
# offgraph's side runs `logits --math exact` and `--math fast` (a bf16 program); llama.cpp's
# runs the GGUF through scripts/llamacpp_logits.cc (f32 KV, so only its arithmetic differs);
# the reference is `offgraph reference -m HF_DIR`. Prints max |d| / max |ref|, RMS of d over
# RMS of ref, and top-1 agreement with the reference, over all TOKENS positions.
set -euo pipefail
cd "$(dirname "$0")/.."
program=$1 hf=$2 gguf=$3 n=${4:-64} seed=${SEED:-11}
offgraph=${OFFGRAPH:-build/release/src/cli/offgraph}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source scripts/llamacpp_logits.sh
llamacpp_logits_setup "$program" "$work" "$n" "$seed"
"$offgraph" reference -m "$hf" --tokens-file "$work/tokens" --out "$work/ref.npy" >/dev/null
for math in exact fast; do
  "$offgraph" logits -m "$program" --tokens-file "$work/tokens" --math "$math" --out "$work/og_$math.npy"
done
"$work/llamacpp_logits" "$gguf" "$work/tokens" f32 f32 "$n" "$work/llama.npy" "$(nproc)" 2>/dev/null
/usr/bin/python3 - "$work" <<'EOF'
import sys
import numpy as np
work = sys.argv[1]
ref = np.load(f"{work}/ref.npy").astype(np.float64)
print("| engine | max abs err / max abs logit | rms err / rms logit | top-1 agreement with float64 |")
print("|---|---:|---:|---:|")
for name, f in (("offgraph --math exact", "og_exact"), ("offgraph --math fast", "og_fast"), ("llama.cpp", "llama")):
    x = np.load(f"{work}/{f}.npy").astype(np.float64)
    d = x - ref
    print(f"| {name} | {np.abs(d).max() / np.abs(ref).max():.2e} | {np.sqrt((d * d).mean()) / np.sqrt((ref * ref).mean()):.2e} "
          f"| {(x.argmax(1) == ref.argmax(1)).mean():.3f} |")
EOF
