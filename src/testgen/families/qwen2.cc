// Qwen2 (Qwen2ForCausalLM, modeling_qwen2.py).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Qwen2Attention: q/k/v always carry a bias, o_proj never.
Result<std::vector<TensorSpec>> qwen2_tensors(const Json& text, const FamilyContext& ctx) {
  return llama_shaped_tensors(text, ctx, LlamaShape{.qkv_bias = true});
}

// Qwen2.5's field set with use_sliding_window on: layers >= max_window_layers (2, 3, 4)
// use a window of 5, layers 0 and 1 full attention.
Json qwen2_config() {
  return {
      {"architectures", {"Qwen2ForCausalLM"}},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 160},
      {"max_position_embeddings", 4096},
      {"max_window_layers", 2},
      {"model_type", "qwen2"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 5},
      {"num_key_value_heads", 2},
      {"rms_norm_eps", 1e-6},
      {"rope_theta", 1000000.0},
      {"sliding_window", 5},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"use_sliding_window", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> qwen2_generators() {
  return {
      {"qwen2", false, "torch_dtype", false, 0, 32, qwen2_config, nullptr, qwen2_tensors},
  };
}

}  // namespace og::testgen
