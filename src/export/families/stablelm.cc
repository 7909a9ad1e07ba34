// StableLM (model_type stablelm; StableLM-3B-4E1T, StableLM 2): Llama's gated MLP and
// attention over torch LayerNorms (eps layer_norm_eps), q/k/v biases iff use_qkv_bias (the
// output projection never), partial rotary, and with use_parallel_residual the parallel
// block x + attn(n) + mlp(n); with qk_layernorm a LayerNorm per head on q and k. transformers'
// StableLmModel.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  o.layer_norm = true;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("use_qkv_bias", false));
  OG_ASSIGN_OR_RETURN(o.parallel, t.get_bool("use_parallel_residual", false));
  // StableLmLayerNormPerHead (qk_layernorm, StableLM 2 12B): a weight-only LayerNorm of its own
  // for each head of q and of k, after the head split and before the rotation, one module per
  // head (q_layernorm.norms.{h}.weight).
  OG_ASSIGN_OR_RETURN(o.qk_norm, t.get_bool("qk_layernorm", false));
  o.qk_norm_per_head = o.qk_norm;
  o.qk_norm_heads_list = "norms";
  o.q_norm_name = "q_layernorm";
  o.k_norm_name = "k_layernorm";
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& stablelm_family() {
  static constexpr ModelType kTypes[] = {{"stablelm", false}};
  // StableLmConfig's defaults for keys published configs may omit: layer_norm_eps 1e-5 (read
  // as the norms' eps), partial_rotary_factor 0.25, rope_theta 10000, hidden_act silu.
  static const Family f{.name = "stablelm",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5}, {"partial_rotary_factor", 0.25}, {"rope_theta", 10000.0}},
                        .config_aliases = {{"layer_norm_eps", "rms_norm_eps"}},
                        .build = build};
  return f;
}

}  // namespace og::exporter
