// StableLM (model_type stablelm; StableLM-3B-4E1T, StableLM 2): Llama's gated MLP and
// attention over torch LayerNorms (eps layer_norm_eps), q/k/v biases iff use_qkv_bias (the
// output projection never), partial rotary, and with use_parallel_residual the parallel
// block x + attn(n) + mlp(n). transformers' StableLmModel.
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
  // StableLmLayerNormPerHead: a LayerNorm of its own for each head, which the layer_norm op
  // (one weight for every group) does not express.
  OG_ASSIGN_OR_RETURN(bool qk_layernorm, t.get_bool("qk_layernorm", false));
  if (qk_layernorm)
    return unsupported("{}: field '{}' is true: StableLM's per-head q/k LayerNorms are not supported", ctx.config.path,
                       t.field_name("qk_layernorm"));
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
