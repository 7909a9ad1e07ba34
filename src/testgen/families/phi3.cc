// Phi-3 (Phi3ForCausalLM, modeling_phi3.py): fused qkv_proj and gate_up_proj.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

Result<std::vector<TensorSpec>> phi3_tensors(const Json& text, const FamilyContext& ctx) {
  return llama_shaped_tensors(text, ctx, LlamaShape{.fused = true});
}

// Phi-3-mini's field set (sliding window on every layer, here 7) with GQA and Phi-4-mini's
// partial_rotary_factor 0.75 (12 of 16 head dims rotated).
Json phi3_config() {
  return {
      {"architectures", {"Phi3ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"embd_pdrop", 0.0},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"model_type", "phi3"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"original_max_position_embeddings", 4096},
      {"pad_token_id", 3},
      {"partial_rotary_factor", 0.75},
      {"resid_pdrop", 0.0},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling", nullptr},
      {"rope_theta", 10000.0},
      {"sliding_window", 7},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> phi3_generators() {
  return {
      {"phi3", false, "torch_dtype", false, 0, 0, phi3_config, nullptr, phi3_tensors},
  };
}

}  // namespace og::testgen
