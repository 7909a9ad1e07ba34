// Phi-3: fused qkv_proj and gate_up_proj (split into separate weights at export, rows
// are contiguous), partial rotary, `sliding_window` on every layer when set, and rope_scaling
// longrope (Phi3Config's only scaling type; export/rope.h).
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  DecoderOptions o;
  o.fused_qkv = true;
  o.fused_gate_up = true;
  OG_ASSIGN_OR_RETURN(bool bias, ctx.config.text_fields().get_bool("attention_bias", false));
  if (bias)
    return unsupported("{}: field 'attention_bias' is true: Phi-3 with attention bias is not supported",
                       ctx.config.path);
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  // Phi3Config accepts only longrope scaling, in either spelling of the rope dict.
  hf::JsonFields t = ctx.config.text_fields();
  for (const char* dict : {"rope_scaling", "rope_parameters"}) {
    if (!t.has(dict)) continue;
    OG_ASSIGN_OR_RETURN(hf::JsonFields rs, t.get_object(dict));
    const std::string key = rs.has("rope_type") ? "rope_type" : "type";
    OG_ASSIGN_OR_RETURN(std::string type, rs.get_string(key, "default"));
    if (type != "longrope" && type != "default")
      return unsupported("{}: field '{}' is '{}': Phi-3 takes rope scaling 'longrope' only", ctx.config.path,
                         rs.field_name(key), type);
  }
  return build_decoder(ctx, o);
}

}  // namespace

const Family& phi3_family() {
  static constexpr ModelType kTypes[] = {{"phi3", false}};
  // transformers' Phi3Config defaults for keys that published configs omit.
  static const Family f{.name = "phi3",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5}},
                        .default_layer_types = sliding_everywhere_if_set,
                        .build = build};
  return f;
}

}  // namespace og::exporter
