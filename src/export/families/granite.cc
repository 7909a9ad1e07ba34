// Granite (model_type granite; IBM Granite 3.x dense): Llama's block with four multipliers
// (transformers' GraniteModel): the embeddings times embedding_multiplier, attention scores
// times attention_multiplier (in place of head_dim^-0.5), each sublayer's output times
// residual_multiplier before it joins the residual, and the logits divided by logits_scaling.
// Biases on q/k/v/o iff attention_bias, on the MLP iff mlp_bias.
#include <cmath>

#include "export/decoder.h"
#include "export/families/granite.h"
#include "export/family.h"

namespace og::exporter {
namespace {

// A multiplier field: a positive finite number.
Result<float> positive_field(const hf::JsonFields& t, const char* key) {
  OG_ASSIGN_OR_RETURN(double v, t.get_double(key, 1.0));
  if (!(v > 0) || !std::isfinite(v)) return t.invalid(key, "a positive number");
  return static_cast<float>(v);
}

Status build(BuildContext& ctx) {
  DecoderOptions o;
  OG_TRY(read_granite_block(ctx.config, o));
  OG_ASSIGN_OR_RETURN(o.mlp_bias, ctx.config.text_fields().get_bool("mlp_bias", false));
  return build_decoder(ctx, o);
}

}  // namespace

Status read_granite_block(const hf::ModelConfig& c, DecoderOptions& o) {
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  OG_ASSIGN_OR_RETURN(o.embed_scale, positive_field(t, "embedding_multiplier"));
  OG_ASSIGN_OR_RETURN(o.attn_scale, positive_field(t, "attention_multiplier"));
  OG_ASSIGN_OR_RETURN(o.residual_scale, positive_field(t, "residual_multiplier"));
  OG_ASSIGN_OR_RETURN(double logits_scaling, t.get_double("logits_scaling", 1.0));
  if (!(logits_scaling > 0) || !std::isfinite(logits_scaling)) return t.invalid("logits_scaling", "a positive number");
  o.logits_scale = static_cast<float>(1.0 / logits_scaling);
  return Status::ok();
}

const Family& granite_family() {
  static constexpr ModelType kTypes[] = {{"granite", false}};
  // transformers' GraniteConfig: every multiplier 1.0 when absent (applied by the builder's
  // reads), rms_norm_eps 1e-6; num_key_value_heads falls back to num_attention_heads.
  static const Family f{.name = "granite",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6}},
                        .build = build};
  return f;
}

}  // namespace og::exporter
