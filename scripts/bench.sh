#!/usr/bin/env bash
# Benchmarks offgraph on random-weight models with the exact shapes of real ones
# (Llama-3.2-1B, gemma-3-1b, Qwen3-0.6B from ../shared/configs): generates each checkpoint
# once (bf16, exact HF format), exports bf16 and fp32 programs from it (bf16 values are
# exact in fp32), runs `offgraph bench --json` on each and prints one table.
#
# usage: bash scripts/bench.sh [WORK_DIR]        (default WORK_DIR: build/bench)
# environment:
#   MODELS    subset of "llama-3.2-1b gemma-3-1b qwen3-0.6b" (default: all three)
#   DTYPES    programs (default: "bf16 fp32 q8 q4"): fp32/bf16/fp16 weights, or q8 / q4 =
#             bf16 with --qlinear 8w / 4w and --qembedding 8w (the head is 8w either way),
#             int8 activations; q8f / q4f: the same with --qactivations f32; bf16x: bf16
#             with --qactivations bf16 (vdpbf16ps)
#   SIMD      --simd (e.g. AVX2: the kernels of an AVX2-only machine; default: the best)
#   P N R     prefill tokens, decode tokens, runs (default: 128 64 3)
#   THREADS   --threads (default 0: physical cores);  CTX: --ctx (default 0: decode after the prefill)
#   OFFGRAPH  the binary (default: build/release/src/cli/offgraph)
#   CONFIGS   directory of the real config.json files (default: ../shared/configs)
#   KEEP=0    delete each program after benching it (checkpoints are kept for reruns)
#   BATCH     --batch sizes of the batched-decode rows (default "1,2,4,8"; empty: none)
#   P_LONG    a second, long prefill (default 1024; empty: none), its own bench run
#   MODELS may add qwen3-30b-a3b: a mixture of experts (Qwen3-30B-A3B's config, as many
#             layers as gen-model's 2^32 elements allow: 5), for the MoE decode floor
#
# Disk: checkpoints 2.5 + 2.0 + 1.2 GB (qwen3-30b-a3b: 7.4 GB); programs the same in bf16, twice that in fp32,
# about half (q8) and a third (q4).
# Time: gen-model writes about 12M parameters/s (1.5 min for a 1B model) on one core.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$root/build/bench}"
bin="${OFFGRAPH:-$root/build/release/src/cli/offgraph}"
configs="${CONFIGS:-$root/../shared/configs}"
models="${MODELS:-llama-3.2-1b gemma-3-1b qwen3-0.6b}"
dtypes="${DTYPES:-bf16 fp32 q8 q4}"
P="${P:-128}" N="${N:-64}" R="${R:-3}" THREADS="${THREADS:-0}" CTX="${CTX:-0}" KEEP="${KEEP:-1}" SIMD="${SIMD:-}"
BATCH="${BATCH-1,2,4,8}" P_LONG="${P_LONG-1024}"

[ -x "$bin" ] || { echo "no offgraph binary at $bin (bash scripts/build.sh, or set OFFGRAPH)" >&2; exit 1; }
mkdir -p "$work"

family_and_config() {
  case "$1" in
    llama-3.2-1b) echo "llama $configs/Llama-3.2-1B-Instruct.json" ;;
    gemma-3-1b) echo "gemma3_text $configs/gemma-3-1b-it.json" ;;
    qwen3-0.6b) echo "qwen3 $configs/Qwen3-0.6B.json" ;;
    # Mixture of experts: the real config (tests/data/configs), fewer layers (see below).
    qwen3-30b-a3b) echo "qwen3_moe $root/tests/data/configs/Qwen3-30B-A3B.json" ;;
    *) echo "unknown model '$1' (expected llama-3.2-1b, gemma-3-1b, qwen3-0.6b or qwen3-30b-a3b)" >&2; return 1 ;;
  esac
}

results=()
for m in $models; do
  read -r family config < <(family_and_config "$m")
  ckpt="$work/$m-hf"
  if [ ! -f "$ckpt/config.json" ]; then
    echo "== generating $m ($family, shape of $config) in $ckpt" >&2
    start=$(date +%s)
    # The real config.json is the merge patch: every field of the real model, random weights.
    if ! "$bin" gen-model --family "$family" --out "$ckpt" --dtype bf16 --set "$(cat "$config")"; then
      # gen-model refuses checkpoints above 2^32 elements (Qwen3-30B-A3B has 3.05e10): keep
      # every dimension and drop layers until it fits; the table says how many layers ran.
      layers=$(python3 - "$config" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
H, hd = c["hidden_size"], c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
attention = H * (2 * c["num_attention_heads"] * hd + 2 * c["num_key_value_heads"] * hd)
mlp = c["num_experts"] * (3 * H * c["moe_intermediate_size"] + H) if c.get("num_experts") else 3 * H * c["intermediate_size"]
embeddings = c["vocab_size"] * H * (1 if c.get("tie_word_embeddings", False) else 2)
print(min(c["num_hidden_layers"], (2**32 - embeddings) // (attention + mlp)))
PY
)
      echo "   too large for gen-model: generating $layers layers of the same shape instead" >&2
      "$bin" gen-model --family "$family" --out "$ckpt" --dtype bf16 --set "$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["num_hidden_layers"]=int(sys.argv[2]); print(json.dumps(c))' "$config" "$layers")"
    fi
    echo "   generated in $(( $(date +%s) - start )) s" >&2
  fi
  for d in $dtypes; do
    prog="$work/$m.$d.ogp"
    case "$d" in
      q8) flags=(--dtype bf16 --qlinear 8w --qembedding 8w) ;;
      q4) flags=(--dtype bf16 --qlinear 4w --qembedding 8w) ;;
      q8f) flags=(--dtype bf16 --qlinear 8w --qembedding 8w --qactivations f32) ;;
      q4f) flags=(--dtype bf16 --qlinear 4w --qembedding 8w --qactivations f32) ;;
      bf16x) flags=(--dtype bf16 --qactivations bf16) ;;
      *) flags=(--dtype "$d") ;;
    esac
    [ -f "$prog" ] || "$bin" export -m "$ckpt" -o "$prog" "${flags[@]}" >&2
    echo "== bench $m $d" >&2
    simd=(); tag="$m.$d"; batch=()
    [ -z "$BATCH" ] || batch=(--batch "$BATCH")
    [ -z "$SIMD" ] || { simd=(--simd "$SIMD"); tag="$m.$d.$SIMD"; }
    "$bin" bench -m "$prog" -p "$P" -n "$N" -r "$R" --threads "$THREADS" --ctx "$CTX" "${simd[@]}" "${batch[@]}" --json | tee "$work/$tag.json" >&2
    rm -f "$work/$tag.long.json"
    [ -z "$P_LONG" ] || "$bin" bench -m "$prog" -p "$P_LONG" -n 1 -r "$R" --threads "$THREADS" "${simd[@]}" --json > "$work/$tag.long.json"
    results+=("$work/$tag.json")
    [ "$KEEP" = "1" ] || rm -f "$prog"
  done
done

echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "prefill $P tokens in one step (pp), decode $N tokens (tg), median of $R runs"
python3 - "${results[@]}" <<'EOF'
import json, os, sys
print("| model | dtype | simd | threads | weights MB/token | pp tok/s | of peak | long pp tok/s | of peak | tg tok/s | floor tok/s | of floor | bandwidth GB/s |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def frac(j): return "%.2f" % j["prefill_peak_fraction"] if "prefill_peak_fraction" in j else ""
for path in sys.argv[1:]:
    j = json.load(open(path))
    name, dtype = os.path.basename(j["program"])[:-len(".ogp")].rsplit(".", 1)
    cfg = json.load(open(os.path.join(os.path.dirname(path), name + "-hf", "config.json")))
    name += " (%d layers)" % cfg.get("num_hidden_layers", cfg.get("text_config", {}).get("num_hidden_layers", 0))
    long_path = path[:-len(".json")] + ".long.json"
    lj = json.load(open(long_path)) if os.path.exists(long_path) else None
    long = ("pp%d: %.1f" % (lj["prefill_tokens"], lj["prefill_tok_s"]), frac(lj)) if lj else ("", "")
    print("| %s | %s | %s | %d | %.0f | %.1f | %s | %s | %s | %.2f | %.2f | %.2f | %.1f |" % (
        name, dtype, j["simd"], j["threads"], j["weight_bytes"] / 1e6, j["prefill_tok_s"], frac(j), long[0], long[1],
        j["decode_tok_s"], j["decode_floor_tok_s"], j["decode_floor_fraction"], j["bandwidth_gb_s"]))
batched = [p for p in sys.argv[1:] if "batch" in json.load(open(p))]
if batched:
    print()
    print("| model | dtype | batch | aggregate tok/s | per sequence tok/s | x batch 1 |")
    print("|---|---|---:|---:|---:|---:|")
    for path in batched:
        j = json.load(open(path))
        name, dtype = os.path.basename(j["program"])[:-len(".ogp")].rsplit(".", 1)
        one = j["aggregate_decode_tok_s"][0] if j["batch"][0] == 1 else j["decode_tok_s"]
        for b, agg, per in zip(j["batch"], j["aggregate_decode_tok_s"], j["per_sequence_decode_tok_s"]):
            print("| %s | %s | %d | %.2f | %.2f | %.2f |" % (name, dtype, b, agg, per, agg / one))
EOF
