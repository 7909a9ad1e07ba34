// Granite (GraniteForCausalLM, modular_granite.py).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// GraniteAttention and GraniteMLP are Llama's: biases iff attention_bias (q/k/v/o) and mlp_bias.
Result<std::vector<TensorSpec>> granite_tensors(const Json& text, const FamilyContext& ctx) {
  return llama_tensors(text, ctx);
}

// granite-3.3-8b-instruct's field set (tied embeddings; attention_multiplier 1 / head_dim,
// embedding_multiplier 12, residual_multiplier 0.22, logits_scaling 16) at head_dim 16.
Json granite_config() {
  return {
      {"architectures", {"GraniteForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"attention_multiplier", 0.0625},
      {"bos_token_id", 0},
      {"embedding_multiplier", 12.0},
      {"eos_token_id", 0},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 160},
      {"logits_scaling", 16.0},
      {"max_position_embeddings", 131072},
      {"mlp_bias", false},
      {"model_type", "granite"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 0},
      {"residual_multiplier", 0.22},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling", nullptr},
      {"rope_theta", 10000000.0},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.49.0"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> granite_generators() {
  return {
      {"granite", false, "torch_dtype", false, 0, 0, granite_config, nullptr, granite_tensors},
  };
}

}  // namespace og::testgen
