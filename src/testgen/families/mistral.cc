// Mistral (MistralForCausalLM, modeling_mistral.py).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// MistralAttention and MistralMLP have no biases.
Result<std::vector<TensorSpec>> mistral_tensors(const Json& text, const FamilyContext& ctx) {
  return llama_shaped_tensors(text, ctx, LlamaShape{});
}

// Mistral-7B-v0.1's field set (sliding window on every layer), window 6.
Json mistral_config() {
  return {
      {"architectures", {"MistralForCausalLM"}},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"head_dim", 16},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 160},
      {"max_position_embeddings", 4096},
      {"model_type", "mistral"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"rms_norm_eps", 1e-5},
      {"rope_theta", 10000.0},
      {"sliding_window", 6},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"vocab_size", 352},
  };
}

}  // namespace

std::vector<FamilyDef> mistral_generators() {
  return {
      {"mistral", false, "torch_dtype", false, 0, 8, mistral_config, nullptr, mistral_tensors},
  };
}

}  // namespace og::testgen
