// Phi (model_type phi; Phi-1, Phi-1.5, Phi-2): a parallel block, x + attn(n) + mlp(n) with
// n = input_layernorm(x) (torch LayerNorm, eps layer_norm_eps), biases on every projection
// (q/k/v, the output projection `dense`, fc1/fc2 and the head), a plain MLP fc2(act(fc1 n)),
// partial rotary, optional q/k LayerNorms over head_dim (qk_layernorm) and final_layernorm.
// transformers' PhiModel.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  o.layer_norm = true;
  o.parallel = true;
  o.qkv_bias = o.o_bias = o.mlp_bias = o.lm_head_bias = true;
  o.o_name = "dense";
  o.plain_mlp_up = "fc1";
  o.plain_mlp_down = "fc2";
  o.final_norm_name = "final_layernorm";
  OG_ASSIGN_OR_RETURN(o.qk_norm, t.get_bool("qk_layernorm", false));
  o.q_norm_name = "q_layernorm";
  o.k_norm_name = "k_layernorm";
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& phi_family() {
  static constexpr ModelType kTypes[] = {{"phi", false}};
  // PhiConfig's defaults for keys published configs may omit: layer_norm_eps 1e-5 (read as
  // the norms' eps), hidden_act gelu_new, partial_rotary_factor 0.5, rope_theta 10000.
  static const Family f{.name = "phi",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"hidden_act", "gelu_new"},
                                            {"partial_rotary_factor", 0.5},
                                            {"rope_theta", 10000.0}},
                        .config_aliases = {{"layer_norm_eps", "rms_norm_eps"}},
                        .build = build};
  return f;
}

}  // namespace og::exporter
