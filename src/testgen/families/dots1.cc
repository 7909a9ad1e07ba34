// dots.llm1 (Dots1ForCausalLM, modular_dots1.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Dots1DecoderLayer: Qwen3's self_attn.{q,k,v,o}_proj (biased iff attention_bias) with q_norm /
// k_norm [head_dim]; the first first_k_dense_replace layers the dense mlp.{gate,up,down}_proj,
// the others DeepSeek-V3's mixture: router mlp.gate [E, hidden] with its
// e_score_correction_bias [E], experts mlp.experts.E.{gate,up,down}_proj and
// mlp.shared_experts.* (moe_intermediate_size * n_shared_experts wide).
Result<std::vector<TensorSpec>> dots1_tensors(const Json& text, const FamilyContext& ctx) {
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(const int64_t experts, f.get_int("n_routed_experts"));
  OG_ASSIGN_OR_RETURN(const int64_t inter, f.get_int("moe_intermediate_size", 1408));
  OG_ASSIGN_OR_RETURN(const int64_t n_shared, f.get_int("n_shared_experts"));
  OG_ASSIGN_OR_RETURN(const int64_t first_dense, f.get_int("first_k_dense_replace", 0));
  if (experts < 1) return f.invalid("n_routed_experts", "positive");
  LlamaShape shape{.qk_norm = true};
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> dense, llama_shaped_tensors(text, ctx, shape));
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  return replace_mlps(std::move(dense), [&](int64_t l) { return l >= first_dense; }, [&](int64_t l, SpecList& s) {
    const std::string p = fmt::format("model.layers.{}.mlp.", l);
    s.linear(p + "gate", experts, d.hidden);
    s.add(p + "gate.e_score_correction_bias", {experts}, kBiasInit);
    s.experts(p + "experts.", experts, inter, d.hidden);
    if (n_shared > 0) s.gated_mlp(p + "shared_experts.", inter * n_shared, d.hidden);
  });
}

// dots.llm1.inst's field set (tests/data/configs/dots.llm1.inst.json: MHA heads of 128 (4096 /
// 32), no biases, layer 0 dense, 128 experts of which 6 renormalized × 2.5, two shared experts,
// rope_theta 1e7, no groups given) at 8 experts of which 3, with grouped kv heads and a
// sliding window of 6 from layer 2 on (max_window_layers; the real model has none).
Json dots1_config() {
  return {
      {"architectures", {"Dots1ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", nullptr},
      {"eos_token_id", 1},
      {"first_k_dense_replace", 1},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 96},
      {"max_position_embeddings", 32768},
      {"max_window_layers", 2},
      {"model_type", "dots1"},
      {"moe_intermediate_size", 32},
      {"moe_layer_freq", 1},
      {"n_routed_experts", 8},
      {"n_shared_experts", 2},
      {"norm_topk_prob", true},
      {"num_attention_heads", 4},
      {"num_experts_per_tok", 3},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pretraining_tp", 1},
      {"rms_norm_eps", 1e-05},
      {"rope_scaling", nullptr},
      {"rope_theta", 10000000},
      {"routed_scaling_factor", 2.5},
      {"sliding_window", 6},
      {"tie_word_embeddings", false},
      {"topk_method", "noaux_tc"},
      {"scoring_func", "sigmoid"},
      {"use_cache", true},
      {"use_sliding_window", false},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> dots1_generators() {
  return {
      {"dots1", false, "torch_dtype", false, 0, 32, dots1_config, nullptr, dots1_tensors},
  };
}

}  // namespace og::testgen
