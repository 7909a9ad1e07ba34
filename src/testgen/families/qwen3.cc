// Qwen3 (Qwen3ForCausalLM, modeling_qwen3.py).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Qwen3Attention: bias=config.attention_bias on q/k/v/o, plus q_norm/k_norm.
Result<std::vector<TensorSpec>> qwen3_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape{.qk_norm = true};
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  return llama_shaped_tensors(text, ctx, shape);
}


}  // namespace

// Qwen3-0.6B's field set: head_dim 32 differs from hidden_size / heads (16), tied.
Json qwen3_config() {
  return {
      {"architectures", {"Qwen3ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"head_dim", 32},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"max_window_layers", 4},
      {"model_type", "qwen3"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"rms_norm_eps", 1e-6},
      {"rope_scaling", nullptr},
      {"rope_theta", 1000000.0},
      {"sliding_window", nullptr},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"use_sliding_window", false},
      {"vocab_size", 384},
  };
}

std::vector<FamilyDef> qwen3_generators() {
  return {
      {"qwen3", false, "torch_dtype", false, 128, 32, qwen3_config, nullptr, qwen3_tensors},
  };
}

}  // namespace og::testgen
