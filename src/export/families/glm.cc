// GLM (model_type glm; glm-4-9b-chat-hf and the other GLM-4 models of 2024): transformers'
// GlmModel, a Llama with Phi-3's fused gate_up_proj, q/k/v biases (attention_bias, o_proj
// never) and a partial rope on interleaved pairs (cos/sin repeat_interleave'd, rotate_half over
// (2i, 2i+1) of the first head_dim * partial_rotary_factor dims).
#include "export/families/glm.h"
#include "export/family.h"

namespace og::exporter {

Status glm_decoder_options(const BuildContext& ctx, DecoderOptions& o) {
  OG_ASSIGN_OR_RETURN(o.qkv_bias, ctx.config.text_fields().get_bool("attention_bias", true));
  o.fused_gate_up = true;
  o.rope_interleaved = true;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return Status::ok();
}

namespace {

Status build(BuildContext& ctx) {
  DecoderOptions o;
  OG_TRY(glm_decoder_options(ctx, o));
  return build_decoder(ctx, o);
}

}  // namespace

const hf::Json& glm_config_defaults() {
  static const hf::Json defaults = {{"rms_norm_eps", 1.5625e-07}, {"partial_rotary_factor", 0.5}, {"rope_theta", 10000.0},
                                    {"num_key_value_heads", 2}, {"head_dim", 128}};
  return defaults;
}

const Family& glm_family() {
  static constexpr ModelType kTypes[] = {{"glm", false}};
  static const Family f{.name = "glm", .model_types = kTypes, .config_defaults = glm_config_defaults(), .build = build};
  return f;
}

}  // namespace og::exporter
