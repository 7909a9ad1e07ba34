// The reference families and the registry that dispatches on the config's model_type.
// A family is one entry: the model_types it reads and how (text model under text_config,
// transformers' class defaults for absent keys, the tying default — the reference's own
// copy, written from transformers' configuration_*.py independently of the exporter's, so a
// wrong default in either shows as a mismatch), its forward pass and its per-layer windows.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "reference/reference.h"

namespace og::reference {

struct ModelType {
  std::string_view name;      // config.json's root model_type
  bool text_in_text_config;   // a multimodal wrapper
};

struct Family {
  std::string_view name;
  std::span<const ModelType> model_types;
  bool tie_word_embeddings_default;
  std::string_view config_defaults;  // JSON object: keys the text model takes when absent
  Result<std::vector<double>> (*forward)(const hf::ModelConfig& config, const hf::Checkpoint& ckpt,
                                         std::span<const int32_t> tokens, const ForwardOptions& options);
  Result<std::vector<int64_t>> (*windows)(const hf::ModelConfig& config);
  // The layer whose k/v each layer attends with (itself unless KV-shared); null: every layer
  // computes its own.
  Result<std::vector<int64_t>> (*kv_sources)(const hf::ModelConfig& config) = nullptr;
  // JSON object: fields read under another name too (hf::ConfigReading::aliases).
  std::string_view config_aliases = "{}";
  // Fields the config class computes from others (hf::ConfigReading::derive); null: none.
  Status (*derive_config)(hf::Json& text, const std::string& path) = nullptr;
};

// One file per family under families/, named as its exporter (export/families) and its
// test generator (testgen/families) are; llama_like.cc and gemma.cc hold the decoders that
// several share (transformers builds them from the same modules).
extern const Family kLlamaFamily;
extern const Family kMistralFamily;
extern const Family kMixtralFamily;
extern const Family kQwen2Family;
extern const Family kQwen3Family;
extern const Family kQwen3MoeFamily;
extern const Family kQwen2MoeFamily;
extern const Family kGraniteFamily;
extern const Family kOlmo2Family;
extern const Family kOlmoeFamily;
extern const Family kGlm4MoeFamily;
extern const Family kErnie45MoeFamily;
extern const Family kDeepseekV3Family;
extern const Family kDeepseekV2Family;
extern const Family kGlm4MoeLiteFamily;
extern const Family kMiniMaxM2Family;
extern const Family kDots1Family;
extern const Family kSeedOssFamily;
extern const Family kArceeFamily;
extern const Family kNemotronFamily;
extern const Family kHunYuanDenseFamily;
extern const Family kApertusFamily;
extern const Family kExaone4Family;
extern const Family kGraniteMoeFamily;
extern const Family kGraniteMoeSharedFamily;
extern const Family kOlmo3Family;
extern const Family kPhi3Family;
extern const Family kSmolLM3Family;
extern const Family kGemmaFamily;
extern const Family kGemma2Family;
extern const Family kGemma3Family;
// gemma4.cc, gemma3n.cc: per-layer inputs, KV-shared tails, x * w norms (shared pieces in
// reference/gemma_n.h); Gemma3n adds AltUp, LAuReL and activation sparsity.
extern const Family kGemma4Family;
extern const Family kGemma3nFamily;
// gpt_oss.cc: sinks, yarn, and a mixture of clamped-SwiGLU experts (MXFP4 or float).
extern const Family kGptOssFamily;
// layer_norm_like.cc: LayerNorm decoders, the parallel blocks of Phi and Cohere.
extern const Family kStarcoder2Family;
extern const Family kPhiFamily;
extern const Family kStableLmFamily;
extern const Family kCohereFamily;
extern const Family kCohere2Family;
// llama_like.cc with GLM's switches: the fused gate_up_proj, the rope on interleaved pairs.
extern const Family kGlmFamily;
extern const Family kGlm4Family;
extern const Family kGptBigCodeFamily;  // gpt_bigcode.cc: GPT-2's forward with nn.Linear and multi-query attention
extern const Family kGpt2Family;
extern const Family kFalconFamily;  // falcon.cc: its own forward (three fused-projection layouts, the parallel blocks)     // gpt2.cc: its own forward (Conv1D projections, learned positions)
extern const Family kGptNeoxFamily;  // gpt_neox.cc: its own forward (names, the per-head fused projection)
extern const Family kErnie45Family;  // llama_like.cc with use_bias and the interleaved rope

// Every family, in registry order (reference.cc).
std::span<const Family* const> all_families();

// The family for config.model_type, or an unsupported error listing the families there are.
Result<const Family*> find_family(const hf::ModelConfig& config);

}  // namespace og::reference
