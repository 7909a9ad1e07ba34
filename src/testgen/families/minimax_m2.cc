// MiniMax-M2 (MiniMaxM2ForCausalLM, modular_minimax_m2.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// MiniMaxM2DecoderLayer as the hub checkpoints name it: self_attn.{q,k,v,o}_proj, q_norm
// [Hq * D] and k_norm [Hkv * D] over the whole projections, input_layernorm and
// post_attention_layernorm, and on every layer block_sparse_moe: the router gate
// [num_local_experts, hidden], its e_score_correction_bias [num_local_experts], and experts
// experts.E.{w1,w2,w3} of intermediate_size.
Result<std::vector<TensorSpec>> minimax_m2_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> dense,
                      llama_shaped_tensors(text, ctx, LlamaShape{.qk_norm = true, .qk_norm_whole = true}));
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(int64_t experts, f.get_int(f.has("num_local_experts") ? "num_local_experts" : "num_experts"));
  if (experts < 1) return f.invalid("num_local_experts", "positive");
  return replace_mlps(std::move(dense), [](int64_t) { return true; }, [&](int64_t layer, SpecList& s) {
    const std::string p = fmt::format("model.layers.{}.block_sparse_moe.", layer);
    const int64_t inter = d.intermediate[static_cast<size_t>(layer)];
    s.linear(p + "gate", experts, d.hidden);
    s.add(p + "e_score_correction_bias", {experts}, kBiasInit);
    for (int64_t e = 0; e < experts; ++e) {
      s.linear(fmt::format("{}experts.{}.w1", p, e), inter, d.hidden);
      s.linear(fmt::format("{}experts.{}.w2", p, e), d.hidden, inter);
      s.linear(fmt::format("{}experts.{}.w3", p, e), inter, d.hidden);
    }
  });
}

// MiniMax-M2's field set (tests/data/configs/MiniMax-M2.json: head_dim 128 with the rope on
// rotary_dim 64 of it, q/k norms over the whole projections, 256 experts of which 8 by the
// sigmoid router with a routing bias, 48 heads on 8 kv heads, rope_theta 5e6, untied, the MTP
// fields but no MTP weights) shrunk: 8 experts of which 3, head 32 with 16 rotated.
Json minimax_m2_config() {
  return {
      {"architectures", {"MiniMaxM2ForCausalLM"}},
      {"attention_dropout", 0.0},
      {"attn_type_list", {1, 1, 1, 1}},
      {"bos_token_id", nullptr},
      {"eos_token_id", nullptr},
      {"head_dim", 32},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 48},
      {"layernorm_full_attention_beta", 1.0},
      {"layernorm_linear_attention_beta", 1.0},
      {"layernorm_mlp_beta", 1.0},
      {"max_position_embeddings", 196608},
      {"mlp_intermediate_size", 128},
      {"model_type", "minimax_m2"},
      {"mtp_transformer_layers", 1},
      {"num_attention_heads", 4},
      {"num_experts_per_tok", 3},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"num_local_experts", 8},
      {"num_mtp_modules", 3},
      {"output_router_logits", false},
      {"qk_norm_type", "per_layer"},
      {"rms_norm_eps", 1e-06},
      {"rope_theta", 5000000},
      {"rotary_dim", 16},
      {"scoring_func", "sigmoid"},
      {"shared_intermediate_size", 0},
      {"shared_moe_mode", "sigmoid"},
      {"sliding_window", nullptr},
      {"tie_word_embeddings", false},
      {"use_cache", true},
      {"use_mtp", true},
      {"use_qk_norm", true},
      {"use_routing_bias", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> minimax_m2_generators() {
  return {
      {"minimax_m2", false, "torch_dtype", false, 128, 8, minimax_m2_config, nullptr, minimax_m2_tensors},
  };
}

}  // namespace og::testgen
