// Gemma 2 (Gemma2ForCausalLM, modeling_gemma2.py).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/gemma.h"

namespace og::testgen {
namespace {

Result<std::vector<TensorSpec>> gemma2_tensors(const Json& text, const FamilyContext& ctx) {
  return gemma_tensors(text, ctx, GemmaShape{});
}

// gemma-2-2b's field set. Layers alternate sliding (even) / full (odd) by the family rule.
// The softcaps are smaller than the real 50 / 30 so that they bend these tiny logits.
Json gemma2_config() {
  return {
      {"architectures", {"Gemma2ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"attn_logit_softcapping", 5.0},
      {"bos_token_id", 2},
      {"cache_implementation", "hybrid"},
      {"eos_token_id", {1, 5}},
      {"final_logit_softcapping", 15.0},
      {"head_dim", 32},
      {"hidden_act", "gelu_pytorch_tanh"},
      {"hidden_activation", "gelu_pytorch_tanh"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"model_type", "gemma2"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 0},
      {"query_pre_attn_scalar", 24},
      {"rms_norm_eps", 1e-6},
      {"rope_theta", 10000.0},
      {"sliding_window", 6},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"vocab_size", 384},
  };
}

}  // namespace

std::vector<FamilyDef> gemma2_generators() {
  return {
      {"gemma2", false, "torch_dtype", true, 256, 4, gemma2_config, nullptr, gemma2_tensors},
  };
}

}  // namespace og::testgen
