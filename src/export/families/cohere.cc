// Cohere (model_type cohere; Command R, Command R+, Aya 23, Aya Expanse): transformers'
// CohereModel, a Llama whose layers are parallel blocks x + attn(n) + mlp(n) from one
// LayerNorm without bias, whose rope rotates interleaved pairs (repeat_interleave'd
// frequencies, rotate_half over (2i, 2i+1)), whose logits are scaled by logit_scale, and
// (use_qk_norm) whose q and k are LayerNormed per head.
#include <cmath>

#include "export/families/cohere.h"
#include "export/family.h"

namespace og::exporter {

Status cohere_decoder_options(const BuildContext& ctx, DecoderOptions& o) {
  const hf::JsonFields t = ctx.config.text_fields();
  o.layer_norm = true;
  o.layer_norm_bias = false;
  o.parallel = true;
  o.rope_interleaved = true;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  OG_ASSIGN_OR_RETURN(double logit_scale, t.get_double("logit_scale", 0.0625));
  if (!std::isfinite(logit_scale) || logit_scale == 0) return t.invalid("logit_scale", "a finite nonzero number");
  o.logits_scale = static_cast<float>(logit_scale);
  return Status::ok();
}

namespace {

Status build(BuildContext& ctx) {
  DecoderOptions o;
  OG_TRY(cohere_decoder_options(ctx, o));
  // Command R+: q_norm / k_norm are CohereLayerNorms over (heads, head_dim), weight-only, a
  // LayerNorm of its own for each head, before the rope.
  OG_ASSIGN_OR_RETURN(o.qk_norm, ctx.config.text_fields().get_bool("use_qk_norm", false));
  o.qk_norm_per_head = o.qk_norm;
  return build_decoder(ctx, o);
}

}  // namespace

const Family& cohere_family() {
  static constexpr ModelType kTypes[] = {{"cohere", false}};
  // CohereConfig's defaults for keys published configs may omit: layer_norm_eps 1e-5 (read as
  // the norms' eps), rope_theta 10000, logit_scale 0.0625 (read where used); tied embeddings.
  static const Family f{.name = "cohere",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0}},
                        .config_aliases = {{"layer_norm_eps", "rms_norm_eps"}},
                        .tie_word_embeddings_default = true,
                        .build = build};
  return f;
}

}  // namespace og::exporter
