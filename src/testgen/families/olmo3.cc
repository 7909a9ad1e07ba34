// OLMo 3 (Olmo3ForCausalLM, modular_olmo3.py): OLMo 2's tensors (olmo_tensors).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Olmo-3's field set: layer_types absent, so three sliding layers (window 6) then a full one;
// yarn on the full layers only, with the pretraining context shrunk from 8192 to 16 so that a
// test sequence reaches the positions where yarn's ramp matters.
Json olmo3_config() {
  return {
      {"architectures", {"Olmo3ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"model_type", "olmo3"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 1},
      {"rms_norm_eps", 1e-6},
      {"rope_scaling",
       {{"rope_type", "yarn"}, {"factor", 8.0}, {"original_max_position_embeddings", 16}, {"beta_fast", 32}, {"beta_slow", 1}}},
      {"rope_theta", 500000},
      {"sliding_window", 6},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.57.0"},
      {"use_cache", true},
      {"vocab_size", 352},
  };
}

}  // namespace

std::vector<FamilyDef> olmo3_generators() {
  return {
      {"olmo3", false, "torch_dtype", false, 0, 0, olmo3_config, nullptr, olmo_tensors},
  };
}

}  // namespace og::testgen
