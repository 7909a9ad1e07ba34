// Phi (PhiForCausalLM, modeling_phi.py).
#include "testgen/families/layer_norm_like.h"

namespace og::testgen {
namespace {

// PhiAttention (q/k/v_proj, dense, optional q/k_layernorm) and PhiMLP (fc1, fc2): every
// projection biased, and the head too; one input_layernorm feeds both (a parallel block).
Result<std::vector<TensorSpec>> phi_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(bool qk_layernorm, hf::JsonFields(text, ctx.what).get_bool("qk_layernorm", false));
  return layer_norm_tensors(text, ctx,
                            {.qkv_bias = true, .o_bias = true, .other_bias = true, .o_proj = "dense", .mlp_up = "fc1", .mlp_down = "fc2",
                             .final_norm = "final_layernorm", .parallel = true, .qk_layernorm = qk_layernorm,
                             .head_bias = true});
}

// phi-2's field set (partial_rotary_factor 0.4: 6 of head_dim 16 rotate) at hidden 64, with
// 2 kv heads of 4 (phi-2 has as many as query heads; PhiConfig reads num_key_value_heads) and
// max_position_embeddings 4096 (phi-2: 2048) so that long tests stay in range.
Json phi_config() {
  return {
      {"_name_or_path", "microsoft/phi-2"},
      {"architectures", {"PhiForCausalLM"}},
      {"attention_dropout", 0.0},
      {"bos_token_id", 0},
      {"embd_pdrop", 0.0},
      {"eos_token_id", 0},
      {"hidden_act", "gelu_new"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 256},
      {"layer_norm_eps", 1e-5},
      {"max_position_embeddings", 4096},
      {"model_type", "phi"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"partial_rotary_factor", 0.4},
      {"qk_layernorm", false},
      {"resid_pdrop", 0.1},
      {"rope_scaling", nullptr},
      {"rope_theta", 10000.0},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.37.0"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> phi_generators() {
  return {
      {"phi", false, "torch_dtype", false, 0, 0, phi_config, nullptr, phi_tensors},
  };
}

}  // namespace og::testgen
