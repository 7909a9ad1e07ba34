// ERNIE 4.5 MoE (Ernie4_5_MoeForCausalLM, modular_ernie4_5_moe.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Ernie4_5_MoeDecoderLayer: Llama's attention and norms (no biases: use_bias false); the MLP of
// layer l is Ernie4_5_MoeSparseMoeBlock when (l + 1) % moe_layer_interval == 0 and
// moe_layer_start_index <= l <= moe_layer_end_index (-1: the last): router mlp.gate [E, hidden],
// mlp.moe_statics.e_score_correction_bias [1, E], experts mlp.experts.E.{gate,up,down}_proj and
// mlp.shared_experts.* (moe_intermediate_size * moe_num_shared_experts wide, none when 0).
// With num_nextn_predict_layers N, the multi-token-prediction weights the -PT checkpoints hold
// (model.mtp_emb_norm.i, mtp_hidden_norm.i, mtp_linear_proj.i, mtp_block.i.*), which
// transformers does not load.
Result<std::vector<TensorSpec>> ernie4_5_moe_tensors(const Json& text, const FamilyContext& ctx) {
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(const int64_t L, f.get_int("num_hidden_layers"));
  // Ernie4_5_MoeConfig's attribute_map: num_experts is moe_num_experts.
  OG_ASSIGN_OR_RETURN(const int64_t experts, f.get_int(f.has("moe_num_experts") ? "moe_num_experts" : "num_experts", 64));
  OG_ASSIGN_OR_RETURN(const int64_t inter, f.get_int("moe_intermediate_size", 1536));
  OG_ASSIGN_OR_RETURN(const int64_t n_shared, f.get_int("moe_num_shared_experts", 2));
  OG_ASSIGN_OR_RETURN(const int64_t start, f.get_int("moe_layer_start_index", 1));
  OG_ASSIGN_OR_RETURN(int64_t end, f.get_int("moe_layer_end_index", -1));
  OG_ASSIGN_OR_RETURN(const int64_t interval, f.get_int("moe_layer_interval", 1));
  OG_ASSIGN_OR_RETURN(const int64_t mtp, f.get_int("num_nextn_predict_layers", 0));
  if (experts < 1) return f.invalid("moe_num_experts", "positive");
  if (interval < 1) return f.invalid("moe_layer_interval", "positive");
  if (end == -1) end = L - 1;
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> dense, llama_shaped_tensors(text, ctx, LlamaShape{}));
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  const auto sparse = [&](int64_t l) { return (l + 1) % interval == 0 && l >= start && l <= end; };
  std::vector<TensorSpec> out = replace_mlps(std::move(dense), sparse, [&](int64_t l, SpecList& s) {
    const std::string p = fmt::format("model.layers.{}.mlp.", l);
    s.linear(p + "gate", experts, d.hidden);
    s.add(p + "moe_statics.e_score_correction_bias", {1, experts}, kBiasInit);
    s.experts(p + "experts.", experts, inter, d.hidden);
    if (n_shared > 0) s.gated_mlp(p + "shared_experts.", inter * n_shared, d.hidden);
  });
  SpecList extra;
  for (int64_t i = 0; i < mtp; ++i) {
    extra.norm(fmt::format("model.mtp_emb_norm.{}", i), d.hidden, kUnitNormInit);
    extra.norm(fmt::format("model.mtp_hidden_norm.{}", i), d.hidden, kUnitNormInit);
    extra.linear(fmt::format("model.mtp_linear_proj.{}", i), d.hidden, 2 * d.hidden);
    extra.norm(fmt::format("model.mtp_block.{}.input_layernorm", i), d.hidden, kUnitNormInit);
    extra.linear(fmt::format("model.mtp_block.{}.self_attn.q_proj", i), d.heads * d.head_dim, d.hidden);
  }
  for (TensorSpec& t : extra.take()) out.push_back(std::move(t));
  return out;
}

// ERNIE-4.5-21B-A3B-Thinking's field set (tests/data/configs: tied head, rope_theta 5e5, the
// first layer dense, two shared experts, Baidu's own moe_capacity / moe_gate / moe_use_aux_free
// keys, which transformers ignores) at 8 experts of which 2 per token.
Json ernie4_5_moe_config() {
  return {
      {"architectures", {"Ernie4_5_MoeForCausalLM"}},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"intermediate_size", 96},
      {"max_position_embeddings", 131072},
      {"model_type", "ernie4_5_moe"},
      {"moe_capacity", {64, 64, 64}},
      {"moe_gate", "top2_fused"},
      {"moe_intermediate_size", 32},
      {"moe_k", 2},
      {"moe_layer_interval", 1},
      {"moe_layer_start_index", 1},
      {"moe_num_experts", 8},
      {"moe_num_shared_experts", 2},
      {"moe_use_aux_free", true},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 0},
      {"rms_norm_eps", 1e-5},
      {"rope_theta", 500000.0},
      {"tie_word_embeddings", true},
      {"use_bias", false},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> ernie4_5_moe_generators() {
  return {
      {"ernie4_5_moe", false, "torch_dtype", true, 0, 4, ernie4_5_moe_config, nullptr, ernie4_5_moe_tensors},
  };
}

}  // namespace og::testgen
