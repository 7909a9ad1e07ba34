// ERNIE 4.5 dense (Ernie4_5ForCausalLM, modular_ernie4_5.py).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Ernie4_5Attention and Ernie4_5MLP: Llama's, every projection biased iff use_bias.
Result<std::vector<TensorSpec>> ernie4_5_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(bool bias, hf::JsonFields(text, ctx.what).get_bool("use_bias", false));
  return llama_shaped_tensors(text, ctx, {.qkv_bias = bias, .o_bias = bias, .mlp_bias = bias});
}

// ERNIE-4.5-0.3B's field set (2 kv heads, head_dim given, rope_theta 500000, tied, no biases)
// at hidden 64.
Json ernie4_5_config() {
  return {
      {"architectures", {"Ernie4_5ForCausalLM"}},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"head_dim", 16},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"intermediate_size", 192},
      {"max_position_embeddings", 131072},
      {"model_type", "ernie4_5"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 0},
      {"rms_norm_eps", 1e-05},
      {"rope_theta", 500000},
      {"tie_word_embeddings", true},
      {"torch_dtype", "bfloat16"},
      {"use_bias", false},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> ernie4_5_generators() {
  return {
      {"ernie4_5", false, "torch_dtype", true, 128, 2, ernie4_5_config, nullptr, ernie4_5_tensors},
  };
}

}  // namespace og::testgen
