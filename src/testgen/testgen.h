// Tiny random-weight HuggingFace checkpoints for tests.
//
// generate_checkpoint() writes config.json and model.safetensors (or shards plus
// model.safetensors.index.json) into a directory, with the tensor names, shapes and dtypes
// that transformers uses for the family, and no tokenizer files. The config starts from
// tiny_config(family), takes `overrides` (a JSON merge patch on the text config: a null value
// removes a field), then, for gemma3n, gemma4 and smollm3, the fields derived from the layer
// count (layer_types, num_kv_shared_layers, per-layer lists, no_rope_layers) are recomputed
// unless the overrides set them. Weights are made from that final config; fields it omits take
// transformers' class defaults (e.g. head_dim 128 for qwen3, 256 for the Gemmas).
//
// Values are a pure function of (seed, tensor name, config): each tensor draws from its own
// std::mt19937_64 seeded from the seed and the name, through a normal approximation built from
// integer sums (no libm), so the bytes are identical on every platform and compiler.
// Scales keep activations O(1) and attention far from uniform: linear weights N(0, 1/fan_in)
// (q/k projections x1.5, an untied lm_head x3), embeddings N(0, 1), x*w norms 1 + 0.1 N,
// Gemma's (1 + w) norms 0.1 N, biases 0.1 N.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/dtype.h"
#include "base/status.h"

namespace og::testgen {

struct GenOptions {
  // One of generator_families(): llama smollm mistral qwen2 qwen3 phi3 smollm3 qwen3_moe
  // gemma2 gemma3_text gemma3 gemma4 gemma3n.
  std::string family = {};
  std::string out_dir = {};
  DType dtype = DType::kF32;                  // kF32, kBF16 or kF16; norm weights too, as HF stores them
  uint64_t seed = 0;
  std::optional<bool> tie_word_embeddings = std::nullopt;  // unset: the family's usual choice
  uint64_t max_shard_bytes = 0;              // 0: one model.safetensors; else shards + index
  nlohmann::json overrides = nlohmann::json::object();  // merge patch on the (text) config
  // Lay the checkpoint out as the published hub checkpoints do where they differ from the
  // modules of current transformers:
  //  - gemma3: "language_model.model.*" and "language_model.lm_head.weight" instead of
  //    "model.language_model.*" and "lm_head.weight" (save_pretrained writes these too: it
  //    reverts the "llava" key mapping that transformers registers for gemma3);
  //  - gemma3n: kv-shared layers keep self_attn.k_proj/v_proj/k_norm (current transformers
  //    creates none and ignores them on load);
  //  - gpt2: the model's tensors at the top level (wte.weight, h.0.*), as openai-community/gpt2's
  //    checkpoint has them, instead of under transformer.
  // Other families are unaffected.
  bool hub_layout = false;
  // Tensors of at least this many elements are all zeros, written as file holes (no disk,
  // no memory, not counted against the generator's size limit): for full-size shapes whose
  // largest tables (Gemma's per-layer embeddings) would not fit otherwise. 0: none.
  int64_t zero_tensors_from = 0;
  // > 0: an FP8 checkpoint as DeepSeek-V3's, MiniMax-M2's or Qwen3-FP8's are published: each
  // decoder layer's linear weights (2-D "*.weight" under "layers.", routers ("*.gate.weight")
  // excepted) stored as F8_E4M3 with a float32 NAME_scale_inv per fp8_block x fp8_block block
  // (the block's max |w| / 448), and config.json's quantization_config saying so; the other
  // tensors in `dtype`.
  int64_t fp8_block = 0;
};

// Writes config.json and the safetensors files into options.out_dir (created if needed).
Status generate_checkpoint(const GenOptions& options);

// The names accepted in GenOptions::family.
std::vector<std::string> generator_families();

// The default tiny config.json of a family (for wrappers, the whole file with text_config).
Result<nlohmann::json> tiny_config(const std::string& family);

}  // namespace og::testgen
