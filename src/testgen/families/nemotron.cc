// Nemotron (NemotronForCausalLM, modeling_nemotron.py: Nemotron-4, Minitron, Nemotron-Mini).
#include "testgen/families/layer_norm_like.h"
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// NemotronDecoderLayer: Llama's attention (biases iff attention_bias), the ungated MLP
// up_proj / down_proj (biases iff mlp_bias), and NemotronLayerNorm1P norms (weight and bias).
Result<std::vector<TensorSpec>> nemotron_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(const bool attention_bias, flag(text, ctx, "attention_bias"));
  OG_ASSIGN_OR_RETURN(const bool mlp_bias, flag(text, ctx, "mlp_bias"));
  return layer_norm_tensors(text, ctx, {.qkv_bias = attention_bias, .o_bias = attention_bias, .other_bias = mlp_bias,
                                        .mlp_up = "up_proj", .mlp_down = "down_proj"});
}

// Nemotron-Mini-4B-Instruct's field set (tests/data/configs: relu2, partial_rotary_factor 0.5,
// norm_eps, GQA 24/8, untied, the unread kv_channels) at head_dim 16, with biases on the
// attention and the MLP so those fields are exercised.
Json nemotron_config() {
  return {
      {"architectures", {"NemotronForCausalLM"}},
      {"attention_bias", true},
      {"bos_token_id", 2},
      {"eos_token_id", 3},
      {"hidden_act", "relu2"},
      {"hidden_size", 64},
      {"initializer_range", 0.0134},
      {"intermediate_size", 192},
      {"kv_channels", 16},
      {"max_position_embeddings", 4096},
      {"mlp_bias", true},
      {"model_type", "nemotron"},
      {"norm_eps", 1e-05},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"partial_rotary_factor", 0.5},
      {"rope_theta", 10000},
      {"tie_word_embeddings", false},
      {"torch_dtype", "float32"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> nemotron_generators() {
  return {
      {"nemotron", false, "torch_dtype", false, 0, 0, nemotron_config, nullptr, nemotron_tensors},
  };
}

}  // namespace og::testgen
