// OLMo 2 (model_type olmo2): Llama's attention and MLP with norms on the sublayers' outputs
// only (transformers' Olmo2DecoderLayer): x += post_attention_layernorm(attention(x)),
// x += post_feedforward_layernorm(mlp(x)), no input_layernorm; q_norm and k_norm are RMSNorms
// over the whole q (k) projection, before the split into heads. Biases on q/k/v/o iff
// attention_bias. All layers full attention.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  DecoderOptions o;
  o.post_norms_only = true;
  o.qk_norm = true;
  o.qk_norm_whole = true;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, ctx.config.text_fields().get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& olmo2_family() {
  static constexpr ModelType kTypes[] = {{"olmo2", false}};
  // transformers' Olmo2Config: rms_norm_eps 1e-5; num_key_value_heads falls back to
  // num_attention_heads; no head_dim (hidden_size / heads).
  static const Family f{.name = "olmo2", .model_types = kTypes, .config_defaults = {{"rms_norm_eps", 1e-5}}, .build = build};
  return f;
}

}  // namespace og::exporter
