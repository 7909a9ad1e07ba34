// StarCoder2 (model_type starcoder2): Mistral's attention over torch LayerNorms (weight and
// bias, eps norm_epsilon), a plain MLP c_proj(act(c_fc x)), biases on every projection iff
// use_bias, and sliding_window (when set) on every layer. transformers' Starcoder2Model.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  o.layer_norm = true;
  OG_ASSIGN_OR_RETURN(bool bias, t.get_bool("use_bias", true));
  o.qkv_bias = o.o_bias = o.mlp_bias = bias;
  o.plain_mlp_up = "c_fc";
  o.plain_mlp_down = "c_proj";
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& starcoder2_family() {
  static constexpr ModelType kTypes[] = {{"starcoder2", false}};
  // Starcoder2Config: norm_epsilon 1e-5 (read as the norms' eps), hidden_act gelu_pytorch_tanh;
  // it leaves tie_word_embeddings to PretrainedConfig (true), and its checkpoints have no lm_head.
  static const Family f{.name = "starcoder2",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5}, {"hidden_act", "gelu_pytorch_tanh"}},
                        .config_aliases = {{"norm_epsilon", "rms_norm_eps"}},
                        .tie_word_embeddings_default = true,
                        .default_layer_types = sliding_everywhere_if_set,
                        .build = build};
  return f;
}

}  // namespace og::exporter
