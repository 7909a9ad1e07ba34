// StarCoder2 (Starcoder2ForCausalLM, modeling_starcoder2.py).
#include "testgen/families/layer_norm_like.h"
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Starcoder2Attention and Starcoder2MLP (c_fc, c_proj): biases iff use_bias (default true).
Result<std::vector<TensorSpec>> starcoder2_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(bool bias, hf::JsonFields(text, ctx.what).get_bool("use_bias", true));
  return layer_norm_tensors(text, ctx, {.qkv_bias = bias, .o_bias = bias, .other_bias = bias, .mlp_up = "c_fc", .mlp_down = "c_proj"});
}

// starcoder2-3b's field set (no tie_word_embeddings: tied; the unread norm_type and mlp_type
// kept) at head_dim 16, with its sliding window shrunk to 6.
Json starcoder2_config() {
  return {
      {"architectures", {"Starcoder2ForCausalLM"}},
      {"attention_dropout", 0.1},
      {"residual_dropout", 0.1},
      {"embedding_dropout", 0.1},
      {"bos_token_id", 0},
      {"eos_token_id", 0},
      {"hidden_act", "gelu_pytorch_tanh"},
      {"hidden_size", 64},
      {"initializer_range", 0.018042},
      {"intermediate_size", 256},
      {"max_position_embeddings", 16384},
      {"mlp_type", "default"},
      {"model_type", "starcoder2"},
      {"norm_epsilon", 1e-5},
      {"norm_type", "layer_norm"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"rope_theta", 999999.4420358813},
      {"sliding_window", 6},
      {"transformers_version", "4.37.0.dev0"},
      {"use_bias", true},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> starcoder2_generators() {
  return {
      {"starcoder2", false, "torch_dtype", true, 0, 0, starcoder2_config, nullptr, starcoder2_tensors},
  };
}

}  // namespace og::testgen
