// Cohere2 (Cohere2ForCausalLM, modular_cohere2.py).
#include "testgen/families/layer_norm_like.h"

namespace og::testgen {

Result<std::vector<TensorSpec>> cohere_tensors(const Json& text, const FamilyContext& ctx);  // cohere.cc

namespace {

// Command R7B's field set (sliding_window_pattern 4: layers 3, 7, ... full and NoPE; no
// layer_types, so the pattern decides) at hidden 64, window 6, 5 layers; without its
// head_dim (Cohere2Config derives it from hidden_size, so tests that widen the model keep it
// consistent).
Json cohere2_config() {
  return {
      {"architectures", {"Cohere2ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 5},
      {"eos_token_id", 255},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 192},
      {"layer_norm_eps", 1e-5},
      {"logit_scale", 0.25},
      {"max_position_embeddings", 8192},
      {"model_type", "cohere2"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 5},
      {"num_key_value_heads", 2},
      {"pad_token_id", 0},
      {"rope_theta", 50000.0},
      {"sliding_window", 6},
      {"sliding_window_pattern", 4},
      {"torch_dtype", "bfloat16"},
      {"transformers_version", "4.48.0"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> cohere2_generators() {
  return {
      {"cohere2", false, "torch_dtype", true, 0, 0, cohere2_config, nullptr, cohere_tensors},
  };
}

}  // namespace og::testgen
