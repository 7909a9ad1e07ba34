// GLM-4-0414 (model_type glm4; GLM-4-9B/32B-0414, GLM-Z1): GLM's attention and MLP with four
// norms a layer, x += post_self_attn_layernorm(attn(input_layernorm(x))) and
// x += post_mlp_layernorm(mlp(post_attention_layernorm(x))). transformers' Glm4DecoderLayer.
#include "export/families/glm.h"
#include "export/family.h"

namespace og::exporter {

namespace {

Status build(BuildContext& ctx) {
  DecoderOptions o;
  OG_TRY(glm_decoder_options(ctx, o));
  o.sandwich_norms = true;
  o.post_attn_norm_name = "post_self_attn_layernorm";
  o.pre_ff_norm_name = "post_attention_layernorm";
  o.post_ff_norm_name = "post_mlp_layernorm";
  return build_decoder(ctx, o);
}

}  // namespace

const Family& glm4_family() {
  static constexpr ModelType kTypes[] = {{"glm4", false}};
  static const Family f{.name = "glm4", .model_types = kTypes, .config_defaults = glm_config_defaults(), .build = build};
  return f;
}

}  // namespace og::exporter
