// Llama (LlamaForCausalLM, modeling_llama.py) at Llama-3.2-1B's field set, and SmolLM2's
// (the llama model_type too: tied, multi-query).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Llama-3.2-1B's field set. The llama3 rope scaling uses original_max_position_embeddings
// 512 so that, with head_dim 16 and theta 5e5, rotary frequencies fall in all three bands
// (kept, smoothed, divided by factor).
Json llama_config() {
  return {
      {"architectures", {"LlamaForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", {2, 3}},
      {"head_dim", 16},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"mlp_bias", false},
      {"model_type", "llama"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pretraining_tp", 1},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling",
       {{"factor", 8.0},
        {"high_freq_factor", 4.0},
        {"low_freq_factor", 1.0},
        {"original_max_position_embeddings", 512},
        {"rope_type", "llama3"}}},
      {"rope_theta", 500000.0},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

// SmolLM2's field set: llama model_type, tied, no rope scaling, no head_dim field
// (head_dim = hidden_size / heads = 32), multi-query attention.
Json smollm_config() {
  return {
      {"architectures", {"LlamaForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 96},
      {"initializer_range", 0.041666666666666664},
      {"intermediate_size", 256},
      {"max_position_embeddings", 4096},
      {"mlp_bias", false},
      {"model_type", "llama"},
      {"num_attention_heads", 3},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 1},
      {"pretraining_tp", 1},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling", nullptr},
      {"rope_theta", 100000.0},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"vocab_size", 288},
  };
}

}  // namespace

std::vector<FamilyDef> llama_generators() {
  return {
      {"llama", false, "torch_dtype", false, 0, 0, llama_config, nullptr, llama_tensors},
      {"smollm", false, "torch_dtype", false, 0, 0, smollm_config, nullptr, llama_tensors},
  };
}

}  // namespace og::testgen
