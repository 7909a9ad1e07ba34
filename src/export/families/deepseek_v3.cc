// DeepSeek-V3 (model_type deepseek_v3; DeepSeek-V3, -R1, Moonlight, and the smaller ones made
// from them; model_type kimi_k2: Kimi-K2, the same architecture): transformers'
// DeepseekV3ForCausalLM. Llama's pre-norm block with multi-head
// latent attention (mla.h; the rope's pairing from rope_interleave) and, from layer
// first_k_dense_replace on, DeepSeek-V3's mixture of experts (deepseek_moe.h).
#include "export/decoder.h"
#include "export/families/deepseek_moe.h"
#include "export/families/mla.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  OG_ASSIGN_OR_RETURN(MlaConfig mla, read_mla(c, MlaRopePairs::kFromConfig));
  OG_ASSIGN_OR_RETURN(DeepseekMoeConfig moe, read_sigmoid_moe_config(c));
  DecoderOptions o;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  o.attention = mla_attention(mla);
  o.mlp = deepseek_moe_block(moe, o.activation);
  OG_TRY(skip_prediction_layers(ctx));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& deepseek_v3_family() {
  // kimi_k2: Kimi-K2's configs name DeepseekV3ForCausalLM and DeepSeek-V3's config class
  // (auto_map) under a model_type of their own.
  static constexpr ModelType kTypes[] = {{"deepseek_v3", false}, {"kimi_k2", false}};
  // transformers' DeepseekV3Config defaults for keys a config.json may omit.
  static const Family f{.name = "deepseek_v3",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"rope_theta", 10000.0},
                                            {"num_key_value_heads", 128},
                                            {"intermediate_size", 18432},
                                            {"moe_intermediate_size", 2048},
                                            {"num_experts_per_tok", 8},
                                            {"n_shared_experts", 1},
                                            {"n_routed_experts", 256},
                                            {"routed_scaling_factor", 2.5},
                                            {"kv_lora_rank", 512},
                                            {"q_lora_rank", 1536},
                                            {"qk_rope_head_dim", 64},
                                            {"v_head_dim", 128},
                                            {"qk_nope_head_dim", 128},
                                            {"n_group", 8},
                                            {"topk_group", 4},
                                            {"first_k_dense_replace", 3},
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
