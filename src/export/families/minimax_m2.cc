// MiniMax-M2 (model_type minimax_m2; MiniMax-M2, -M2.1, -M2.5): transformers'
// MiniMaxM2ForCausalLM. Llama's pre-norm block whose q and k are RMSNormed over the whole
// projection before the head split (q_norm [heads * head_dim], k_norm [kv_heads * head_dim]:
// FlexOlmoAttention), the rope in rotate-half order on the first rotary_dim dims of each head
// (the config class reads rotary_dim as partial_rotary_factor = rotary_dim / head_dim), and on
// every layer a mixture of experts (MiniMaxM2SparseMoeBlock, the checkpoints' names):
//   router: r = block_sparse_moe.gate(x) in f32 [num_local_experts], s = sigmoid(r); the
//   num_experts_per_tok experts with the largest s + block_sparse_moe.e_score_correction_bias,
//   weights s of the picked divided by their sum (the moe op's SigmoidTopK, one group);
//   experts block_sparse_moe.experts.E.{w1,w3,w2} (gate, up, down), intermediate_size wide.
// Refused, each by its field: use_qk_norm false or another qk_norm_type (the class always
// norms the whole projection), a scoring_func other than sigmoid, a shared expert
// (shared_intermediate_size > 0), linear-attention layers (attn_type_list 0: MiniMax-01's
// lightning attention). The multi-token-prediction modules (num_mtp_modules ×
// mtp_transformer_layers layers after the last, where a checkpoint holds them) are skipped.
#include <fmt/format.h>


#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

// MiniMaxM2Config.convert_rope_params_to_dict: partial_rotary_factor = rotary_dim / head_dim
// when config.json gives rotary_dim and no factor.
Status derive_config(hf::Json& text, const std::string& path) {
  if (!text.contains("rotary_dim") || text["rotary_dim"].is_null() || text.contains("partial_rotary_factor")) return Status::ok();
  const hf::JsonFields t(text, path);
  OG_ASSIGN_OR_RETURN(const int64_t rotary, t.get_int("rotary_dim"));
  OG_ASSIGN_OR_RETURN(const int64_t head_dim, t.get_int("head_dim"));
  if (head_dim < 1) return t.invalid("head_dim", "a positive integer");
  if (rotary < 2 || rotary > head_dim || rotary % 2 != 0)
    return t.invalid("rotary_dim", fmt::format("an even integer in [2, head_dim = {}]", head_dim));
  text["partial_rotary_factor"] = static_cast<double>(rotary) / static_cast<double>(head_dim);
  return Status::ok();
}

Status check_config(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(const bool qk_norm, t.get_bool("use_qk_norm", true));
  if (!qk_norm)
    return unsupported("{}: field '{}' is false: transformers' MiniMax-M2 attention always norms q and k", c.path,
                       t.field_name("use_qk_norm"));
  OG_ASSIGN_OR_RETURN(const std::string norm_type, t.get_string("qk_norm_type", "per_layer"));
  if (norm_type != "per_layer") return t.invalid("qk_norm_type", "\"per_layer\" (one norm over the whole projection)");
  OG_ASSIGN_OR_RETURN(const std::string scoring, t.get_string("scoring_func", "sigmoid"));
  if (scoring != "sigmoid") return t.invalid("scoring_func", "\"sigmoid\" (MiniMax-M2's router)");
  OG_ASSIGN_OR_RETURN(const int64_t shared, t.get_int("shared_intermediate_size", 0));
  if (shared != 0)
    return unsupported("{}: field '{}' is {}: MiniMax-M2's block has no shared expert", c.path,
                       t.field_name("shared_intermediate_size"), shared);
  if (t.has("attn_type_list")) {
    const hf::Json& types = t.raw("attn_type_list");
    if (!types.is_array()) return t.invalid("attn_type_list", "a list of 0 (linear) / 1 (softmax attention) per layer");
    for (const hf::Json& v : types)
      if (v != 1)
        return unsupported("{}: field '{}' has {}: offgraph runs softmax attention only (1 on every layer)", c.path,
                           t.field_name("attn_type_list"), v.dump());
  }
  return Status::ok();
}

// Marks the multi-token-prediction modules' layers (layers.N.* for N in [L, L + modules ×
// layers each)) as read, so the export skips them.
Status skip_mtp_layers(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  OG_ASSIGN_OR_RETURN(const int64_t modules, t.get_int("num_mtp_modules", 0));
  OG_ASSIGN_OR_RETURN(const int64_t per, t.get_int("mtp_transformer_layers", 1));
  if (modules < 0) return t.invalid("num_mtp_modules", "a non-negative integer");
  if (per < 0) return t.invalid("mtp_transformer_layers", "a non-negative integer");
  skip_layers_past_last(ctx, modules * per);
  return Status::ok();
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  OG_TRY(check_config(c));
  OG_ASSIGN_OR_RETURN(const int64_t E, t.get_int("num_local_experts"));
  OG_ASSIGN_OR_RETURN(const int64_t top_k, t.get_int("num_experts_per_tok"));
  if (E < 2) return t.invalid("num_local_experts", "an integer >= 2");
  if (top_k < 1 || top_k > E || top_k > 64)
    return t.invalid("num_experts_per_tok", fmt::format("between 1 and min(num_local_experts = {}, 64)", E));
  DecoderOptions o;
  o.qk_norm = true;
  o.qk_norm_whole = true;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  const fb::Activation act = o.activation;
  o.mlp = [E, top_k, act](BuildContext& ctx, int64_t l, ValueId h) -> Result<ValueId> {
    const int64_t H = ctx.config.hidden_size, I = ctx.config.intermediate_size[static_cast<size_t>(l)];
    const std::string p = fmt::format("layers.{}.", l);
    OG_TRY(refuse_fused_experts(ctx, p + "mlp."));
    const std::string b = p + "block_sparse_moe.";
    // The router and its bias are kept f32 (the checkpoints store them so): they pick.
    OG_ASSIGN_OR_RETURN(WeightId router, ctx.weight(b + "gate.weight", {E, H}, {.keep_f32 = true}));
    MoeSpec spec{.top_k = static_cast<int32_t>(top_k),
                 .scoring = fb::RouterScoring::SigmoidTopK,
                 .normalize_top_k = true,
                 .activation = act};
    OG_ASSIGN_OR_RETURN(spec.choice_bias, ctx.weight(b + "e_score_correction_bias", {E}, {.keep_f32 = true}));
    OG_TRY(read_experts(ctx, b + "experts.", E, I, {"w1", "w3", "w2"}, spec));
    const ValueId logits = ctx.g.router(h, router);  // [T, E]
    return ctx.g.moe(h, logits, spec);               // [T, H]
  };
  OG_TRY(skip_mtp_layers(ctx));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& minimax_m2_family() {
  static constexpr ModelType kTypes[] = {{"minimax_m2", false}};
  // transformers' MiniMaxM2Config defaults for keys a config.json may omit.
  static const Family f{.name = "minimax_m2",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"rope_theta", 5000000.0},
                                            {"head_dim", 128},
                                            {"num_key_value_heads", 8},
                                            {"intermediate_size", 1536},
                                            {"num_local_experts", 256},
                                            {"num_experts_per_tok", 8},
                                            {"tie_word_embeddings", false}},
                        .config_aliases = {{"num_experts", "num_local_experts"}},
                        .derive_config = derive_config,
                        .build = build};
  return f;
}

}  // namespace og::exporter
