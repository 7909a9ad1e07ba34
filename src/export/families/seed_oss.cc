// Seed-OSS (model_type seed_oss; Seed-OSS-36B-Base, -Instruct): transformers'
// SeedOssForCausalLM. Llama's pre-norm decoder whose q, k and v carry biases iff
// attention_bias (its class default true), o_proj iff attention_out_bias, the MLP iff
// mlp_bias; head_dim is given (128 against hidden_size / heads = 64 in the 36B model).
// residual_dropout and attention_dropout are training-only.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", true));
  OG_ASSIGN_OR_RETURN(o.o_bias, t.get_bool("attention_out_bias", false));
  OG_ASSIGN_OR_RETURN(o.mlp_bias, t.get_bool("mlp_bias", false));
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& seed_oss_family() {
  static constexpr ModelType kTypes[] = {{"seed_oss", false}};
  // transformers' SeedOssConfig defaults for keys a config.json may omit.
  static const Family f{.name = "seed_oss",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"rope_theta", 10000.0},
                                            {"head_dim", 128},
                                            {"num_key_value_heads", 8},
                                            {"attention_bias", true},
                                            {"attention_out_bias", false},
                                            {"mlp_bias", false},
                                            {"tie_word_embeddings", false}},
                        .build = build};
  return f;
}

}  // namespace og::exporter
