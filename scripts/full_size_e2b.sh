#!/usr/bin/env bash
# The full-size gemma-4-E2B shape, end to end: generate it with random bf16 weights (its
# 262144 x 8960 per-layer table as an all-zero file hole: 4.7 GB of disk saved), export a
# bf16 program, then report load time, a one-token forward's time and peak resident memory,
# and check the logits are finite.
#
# usage: bash scripts/full_size_e2b.sh [WORK_DIR]     (default build/bench; needs ~14 GB of disk)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$root/build/bench}"
bin="${OFFGRAPH:-$root/build/release/src/cli/offgraph}"
config="${CONFIG:-$root/../shared/configs/gemma-4-E2B-it.json}"
mkdir -p "$work"
ckpt="$work/gemma-4-e2b-hf" prog="$work/gemma-4-e2b.bf16.ogp"
if [ ! -f "$ckpt/config.json" ]; then
  text_config=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["text_config"]))' "$config")
  /usr/bin/time -f "generate: %e s, peak RSS %M KB" "$bin" gen-model --family gemma4 -o "$ckpt" --dtype bf16 \
    --zero-tensors-from 1000000000 --set "$text_config"
fi
[ -f "$prog" ] || /usr/bin/time -f "export: %e s, peak RSS %M KB" "$bin" export -m "$ckpt" -o "$prog" --dtype bf16
"$bin" inspect "$prog" | head -9
/usr/bin/time -f "load (inspect: open, verify header, validate): %e s, peak RSS %M KB" "$bin" inspect "$prog" >/dev/null
/usr/bin/time -f "load + one-token forward: %e s, peak RSS %M KB" "$bin" logits -m "$prog" --tokens 2 -o "$work/e2b.npy"
/usr/bin/python3 -c 'import numpy as np, sys; a = np.load(sys.argv[1]); print("logits", a.shape, "finite:", bool(np.isfinite(a).all()), "range", a.min(), a.max()); sys.exit(0 if np.isfinite(a).all() else 1)' "$work/e2b.npy"
echo "program file: $(stat -c %s "$prog") bytes"
