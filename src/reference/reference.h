// The float64 reference forward pass: the oracle the optimized runtime is tested against.
//
// Computes logits straight from a HuggingFace checkpoint, from scratch for every call (no
// cache), in float64, following transformers' modeling code for each family (transformers
// is the spec; docs/reference.md lists the files followed and every subtle point). It
// shares no code with the runtime or its kernels: only src/base and src/hf.
//
// Families: llama, mistral, qwen2, qwen3, phi3, smollm3, gemma2, gemma3, gemma4, gemma3n (text
// and multimodal wrapper). A config field the reference cannot honour is an og::ErrorCode::kUnsupported
// error naming the field, never a silently different model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"

namespace og::reference {

struct ForwardOptions {
  // The dtype transformers would hold the weights in. It decides where Gemma rounds its
  // embedding normalizer sqrt(hidden_size) (transformers casts it to the weight dtype).
  // Default: what from_pretrained(dtype="auto") picks (the transformers v5 default): the
  // config's torch_dtype/dtype, else the dtype of the checkpoint's embedding tensor.
  // Pass kF32 to match transformers v4's default float32 loading.
  std::optional<DType> weight_dtype;
  // Round every intermediate activation to float32 (each tensor a module returns; dot products
  // still accumulate exactly), to measure how much float32 arithmetic moves the logits, e.g.
  // through Gemma-3n's activation-sparsity cutoff. gemma4 and gemma3n only (others: unsupported).
  bool float32_activations = false;
  // Linears whose weight (checkpoint tensor name) is listed take int8 inputs, quantized per
  // token in groups of the given size as kernels::XQuant::kInt8 defines it (d = max|x| / 127,
  // q = round-half-even(x / d)), here in float64: the arithmetic of a
  // program exported with --qactivations int8, to test it. Every family.
  std::map<std::string, int32_t> int8_linear_inputs;
  // Linears whose weight is listed take their input rounded to bf16 (nearest-even, from
  // float64), the products then summed exactly: a program exported with --qactivations bf16
  // (kernels::XQuant::kBF16) sums them in float32 and rounds x computed in float32, which
  // the tests bound (no near-tie search as for int8, below).
  std::set<std::string> bf16_linear_inputs;
  // Rounding near ties. A program computes x in float32, so where x / d lies within float32
  // error of a half-integer it may round to the other neighbour than float64 does. Elements
  // are numbered in the order the reference quantizes them (a structural order: it does not
  // depend on the values). Those within int8_tie_window of a half-integer are appended to
  // *int8_near_ties, with their token and distance; those listed in int8_round_other_way
  // take the other neighbour.
  struct NearTie {
    int64_t element;
    int32_t token;
    double distance;  // | |x / d - trunc(x / d)| - 0.5 |
  };
  double int8_tie_window = 0;
  std::vector<NearTie>* int8_near_ties = nullptr;
  std::vector<int64_t> int8_round_other_way;
};

// config.json as the reference reads it: its own table of model types (which wrap the text
// model under text_config) and transformers' class defaults for absent keys, written
// independently of the exporter's so that a wrong default in either makes tests disagree.
// An unknown model_type is an unsupported error listing the ones there are. Pass configs
// read here to forward() and layer_windows().
Result<hf::ModelConfig> parse_model_config(const std::string& json_text, const std::string& path);
Result<hf::ModelConfig> load_model_config(const std::string& path);

// Logits [T, V] row-major (row t = logits after token t), tokens at positions 0..T-1,
// computed from scratch in float64 with causal + sliding-window masks as transformers applies them.
Result<std::vector<double>> forward(const hf::ModelConfig& config, const hf::Checkpoint& ckpt,
                                    std::span<const int32_t> tokens);
Result<std::vector<double>> forward(const hf::ModelConfig& config, const hf::Checkpoint& ckpt,
                                    std::span<const int32_t> tokens, const ForwardOptions& options);

// The attention window of every layer as the reference applies it: W > 0 means query p sees
// keys j with p - W < j <= p; 0 means full causal history. Resolved from config.json alone,
// with transformers' rules, so tests can cross-check a program's published cache layout.
Result<std::vector<int64_t>> layer_windows(const hf::ModelConfig& config);

// The layer whose k/v every layer attends with, as the reference's forward pass takes them:
// l itself for a layer that computes its own k/v, else its KV-sharing donor (Gemma-3n,
// Gemma-4: the last layer before the shared block of the same type). So the layers that own a
// cache are exactly those with source[l] == l. From config.json alone, with transformers' rules.
Result<std::vector<int64_t>> layer_kv_sources(const hf::ModelConfig& config);

}  // namespace og::reference
