// GLM-4.7-Flash (model_type glm4_moe_lite): transformers' Glm4MoeLiteForCausalLM. Llama's
// pre-norm block with DeepSeek-V3's multi-head latent attention (mla.h; the rope's pairing
// from rope_interleave, default interleaved) and, on the layers mlp_layer_types calls "sparse"
// (default: all but the first; first_k_dense_replace is not read), GLM-4.5's mixture of
// experts (deepseek_moe.h), the others the dense MLP of intermediate_size. The checkpoints also
// hold num_nextn_predict_layers multi-token-prediction layers after the last, which transformers
// does not load: they are skipped.
#include "export/decoder.h"
#include "export/families/deepseek_moe.h"
#include "export/families/mla.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  OG_ASSIGN_OR_RETURN(MlaConfig mla, read_mla(c, MlaRopePairs::kFromConfig));
  OG_ASSIGN_OR_RETURN(DeepseekMoeConfig moe, read_sigmoid_moe_config(c, SparseLayers::kMlpLayerTypes));
  DecoderOptions o;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  o.attention = mla_attention(mla);
  o.mlp = deepseek_moe_block(moe, o.activation);
  OG_TRY(skip_prediction_layers(ctx));  // (deepseek_moe.h)
  return build_decoder(ctx, o);
}

}  // namespace

const Family& glm4_moe_lite_family() {
  static constexpr ModelType kTypes[] = {{"glm4_moe_lite", false}};
  // transformers' Glm4MoeLiteConfig defaults for keys a config.json may omit.
  static const Family f{.name = "glm4_moe_lite",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"rope_theta", 10000.0},
                                            {"num_key_value_heads", 20},
                                            {"intermediate_size", 10240},
                                            {"moe_intermediate_size", 1536},
                                            {"num_experts_per_tok", 4},
                                            {"n_shared_experts", 1},
                                            {"n_routed_experts", 64},
                                            {"routed_scaling_factor", 1.8},
                                            {"kv_lora_rank", 512},
                                            {"q_lora_rank", 768},
                                            {"qk_rope_head_dim", 64},
                                            {"v_head_dim", 256},
                                            {"qk_nope_head_dim", 192},
                                            {"n_group", 1},
                                            {"topk_group", 1},
                                            {"norm_topk_prob", true},
                                            {"rope_interleave", true},
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
