// GLM-4.5 / 4.6 / 4.7 (model_type glm4_moe; GLM-4.5-Air, GLM-4.5, GLM-4.6): transformers'
// Glm4MoeForCausalLM. Llama's pre-norm block with q/k/v biases iff attention_bias (o_proj
// never), q/k RMSNorms over head_dim iff use_qk_norm, and the rope on the first
// int(head_dim * partial_rotary_factor) dims in rotate-half order (unlike glm and glm4, whose
// rope turns interleaved pairs). The first first_k_dense_replace layers keep the dense MLP
// (mlp.{gate,up,down}_proj, intermediate_size); the others hold Glm4MoeMoE:
//   router: r = mlp.gate(x) in f32 [n_routed_experts], s = sigmoid(r); the experts are picked
//   by s + mlp.gate.e_score_correction_bias within the topk_group best of n_group groups
//   (DeepseekV3TopkRouter's noaux_tc rule); weights s of the picked, divided by their sum
//   iff norm_topk_prob, times routed_scaling_factor;
//   experts mlp.experts.E.{gate,up,down}_proj of moe_intermediate_size, one tensor each;
//   plus, on every token, mlp.shared_experts.{gate,up,down}_proj of
//   moe_intermediate_size * n_shared_experts, ungated.
// The checkpoints also hold num_nextn_predict_layers multi-token-prediction layers after the
// last one (model.layers.L, ...), which transformers does not load: they are skipped.
#include "export/decoder.h"
#include "export/families/deepseek_moe.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(DeepseekMoeConfig m, read_sigmoid_moe_config(c));
  DecoderOptions o;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", false));
  OG_ASSIGN_OR_RETURN(o.qk_norm, t.get_bool("use_qk_norm", false));
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  o.mlp = deepseek_moe_block(m, o.activation);
  OG_TRY(skip_prediction_layers(ctx));  // (deepseek_moe.h)
  return build_decoder(ctx, o);
}

}  // namespace

const Family& glm4_moe_family() {
  static constexpr ModelType kTypes[] = {{"glm4_moe", false}};
  // transformers' Glm4MoeConfig defaults for keys a config.json may omit (no head_dim:
  // hidden_size / heads).
  static const Family f{.name = "glm4_moe",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"partial_rotary_factor", 0.5},
                                            {"rope_theta", 10000.0},
                                            {"num_key_value_heads", 8},
                                            {"intermediate_size", 10944},
                                            {"moe_intermediate_size", 1408},
                                            {"num_experts_per_tok", 8},
                                            {"n_shared_experts", 1},
                                            {"n_routed_experts", 128},
                                            {"routed_scaling_factor", 1.0},
                                            {"n_group", 1},
                                            {"topk_group", 1},
                                            {"first_k_dense_replace", 1},
                                            {"norm_topk_prob", true},
                                            {"use_qk_norm", false},
                                            {"attention_bias", false},
                                            {"tie_word_embeddings", false}},
                        .build = build};
  return f;
}

}  // namespace og::exporter
