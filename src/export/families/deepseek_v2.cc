// DeepSeek-V2 (model_type deepseek_v2; DeepSeek-V2, -V2-Lite, -V2.5, DeepSeek-Coder-V2 and their
// -Chat/-Instruct versions): transformers' DeepseekV2ForCausalLM. Llama's pre-norm block with
// multi-head latent attention (mla.h; the rope always on interleaved pairs: its complex-number
// form) and, from layer first_k_dense_replace on, DeepseekV2Moe:
//   router: r = mlp.gate(x) in f32 [n_routed_experts], p = softmax(r); topk_method "greedy":
//   the num_experts_per_tok most probable; "group_limited_greedy": the most probable within
//   the topk_group best of n_group groups, a group scored by its most probable expert (the
//   others' read 0, transformers' masked_fill(0.0)); weights p of the picked, never
//   renormalized, times routed_scaling_factor (the moe op's SoftmaxTopK, group_top 1);
//   experts mlp.experts.E.{gate,up,down}_proj of moe_intermediate_size, one tensor each;
//   plus, on every token, mlp.shared_experts.{gate,up,down}_proj of
//   moe_intermediate_size * n_shared_experts (none when null or 0), ungated.
// Refused, each by its field: norm_topk_prob true (transformers' router ignores it, DeepSeek's
// own code would renormalize: no one program is both), a scoring_func other than softmax, a
// moe_layer_freq other than 1 (the original code's; transformers ignores it), other topk_methods.
#include <fmt/format.h>

#include <cmath>

#include "export/decoder.h"
#include "export/families/deepseek_moe.h"
#include "export/families/mla.h"
#include "export/family.h"

namespace og::exporter {
namespace {

// DeepseekV2Moe's fields as a DeepseekMoeConfig: the softmax router, groups scored by their
// most probable expert, the left-out ones' probabilities masked to 0, never renormalized.
Result<DeepseekMoeConfig> read_v2_moe(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  DeepseekMoeConfig m{.normalize = false,
                      .scoring = fb::RouterScoring::SoftmaxTopK,
                      .choice_bias = false,
                      .group_top = 1,
                      .masked_key = 0.0f};
  OG_ASSIGN_OR_RETURN(m.n_experts, t.get_int("n_routed_experts"));
  OG_ASSIGN_OR_RETURN(m.top_k, t.get_int("num_experts_per_tok"));
  OG_ASSIGN_OR_RETURN(m.intermediate, t.get_int("moe_intermediate_size"));
  OG_ASSIGN_OR_RETURN(m.routed_scale, t.get_double("routed_scaling_factor"));
  OG_ASSIGN_OR_RETURN(m.sparse, read_sparse_layers(c, SparseLayers::kFromFirstKDenseReplace));
  int64_t n_shared = 0;
  if (t.has("n_shared_experts")) { OG_ASSIGN_OR_RETURN(n_shared, t.get_int("n_shared_experts")); }
  if (m.n_experts < 2) return t.invalid("n_routed_experts", "an integer >= 2");
  if (m.top_k < 1 || m.top_k > m.n_experts || m.top_k > 64)
    return t.invalid("num_experts_per_tok", fmt::format("between 1 and min(n_routed_experts = {}, 64)", m.n_experts));
  if (m.intermediate < 1) return t.invalid("moe_intermediate_size", "a positive integer");
  if (n_shared < 0) return t.invalid("n_shared_experts", "a non-negative integer or null");
  m.shared = m.intermediate * n_shared;
  if (!std::isfinite(m.routed_scale)) return t.invalid("routed_scaling_factor", "a finite number");

  OG_ASSIGN_OR_RETURN(const bool normalize, t.get_bool("norm_topk_prob", false));
  if (normalize)
    return unsupported("{}: field '{}' is true: transformers' DeepSeek-V2 router does not renormalize the top-k weights "
                       "while DeepSeek's own code does, so no one program matches both",
                       c.path, t.field_name("norm_topk_prob"));
  OG_ASSIGN_OR_RETURN(const std::string scoring, t.get_string("scoring_func", "softmax"));
  if (scoring != "softmax") return t.invalid("scoring_func", "\"softmax\" (DeepSeek-V2's router)");
  OG_ASSIGN_OR_RETURN(const int64_t freq, t.get_int("moe_layer_freq", 1));
  if (freq != 1)
    return unsupported("{}: field '{}' is {}: transformers puts the mixture on every layer from first_k_dense_replace on",
                       c.path, t.field_name("moe_layer_freq"), freq);
  OG_ASSIGN_OR_RETURN(const std::string method, t.get_string("topk_method", "greedy"));
  if (method == "group_limited_greedy") {
    OG_ASSIGN_OR_RETURN(m.n_group, t.get_int("n_group"));
    OG_ASSIGN_OR_RETURN(m.topk_group, t.get_int("topk_group"));
    if (m.n_group < 1 || m.n_experts % m.n_group != 0)
      return t.invalid("n_group", fmt::format("a divisor of n_routed_experts = {}", m.n_experts));
    if (m.topk_group < 1 || m.topk_group > m.n_group)
      return t.invalid("topk_group", fmt::format("between 1 and n_group = {}", m.n_group));
    // The kept groups must hold top_k experts (else transformers would weigh masked ones 0).
    if (m.top_k > m.topk_group * (m.n_experts / m.n_group))
      return t.invalid("num_experts_per_tok", fmt::format("at most topk_group x experts a group = {}",
                                                          m.topk_group * (m.n_experts / m.n_group)));
  } else if (method != "greedy") {
    return t.invalid("topk_method", "\"greedy\" or \"group_limited_greedy\" (DeepSeek-V2's routers)");
  }
  return m;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  OG_ASSIGN_OR_RETURN(MlaConfig mla, read_mla(c, MlaRopePairs::kInterleaved));
  OG_ASSIGN_OR_RETURN(DeepseekMoeConfig moe, read_v2_moe(c));
  DecoderOptions o;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  o.attention = mla_attention(mla);
  o.mlp = deepseek_moe_block(moe, o.activation);
  return build_decoder(ctx, o);
}

}  // namespace

const Family& deepseek_v2_family() {
  static constexpr ModelType kTypes[] = {{"deepseek_v2", false}};
  // transformers' DeepseekV2Config defaults for keys a config.json may omit
  // (num_key_value_heads: num_attention_heads; num_experts_per_tok has none).
  static const Family f{.name = "deepseek_v2",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"rope_theta", 10000.0},
                                            {"intermediate_size", 11008},
                                            {"moe_intermediate_size", 1407},
                                            {"n_shared_experts", 2},
                                            {"n_routed_experts", 64},
                                            {"routed_scaling_factor", 1.0},
                                            {"kv_lora_rank", 512},
                                            {"q_lora_rank", 1536},
                                            {"qk_rope_head_dim", 64},
                                            {"v_head_dim", 128},
                                            {"qk_nope_head_dim", 128},
                                            {"first_k_dense_replace", 0},
                                            {"topk_method", "greedy"},
                                            {"norm_topk_prob", false},
                                            {"attention_bias", false},
                                            {"tie_word_embeddings", false}},
                        // the config class's head_dim is qk_rope_head_dim (its attribute_map, or
                        // its __init__), so hidden_size need not divide by the heads
                        .config_aliases = {{"qk_rope_head_dim", "head_dim"}},
                        .kv_geometry = mla_kv_geometry,
                        .build = build};
  return f;
}

}  // namespace og::exporter
