// ERNIE 4.5 dense (model_type ernie4_5; ERNIE-4.5-0.3B): Llama's decoder with biases on every
// projection iff use_bias, and a rope that turns interleaved pairs (GLM's rotate_half over
// the whole head). transformers' Ernie4_5Model.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  DecoderOptions o;
  OG_ASSIGN_OR_RETURN(bool bias, ctx.config.text_fields().get_bool("use_bias", false));
  o.qkv_bias = o.o_bias = o.mlp_bias = bias;
  o.rope_interleaved = true;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& ernie4_5_family() {
  static constexpr ModelType kTypes[] = {{"ernie4_5", false}};
  // Ernie4_5Config's defaults for keys published configs may omit (default_theta 500000).
  static const Family f{.name = "ernie4_5",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5}, {"rope_theta", 500000.0}, {"num_key_value_heads", 2},
                                            {"head_dim", 128}},
                        .tie_word_embeddings_default = true,
                        .build = build};
  return f;
}

}  // namespace og::exporter
