// OLMo 3 (model_type olmo3): OLMo 2's layer (olmo2.cc: output-only norms, q/k norms over the
// whole projection) with sliding-window attention: layer_types, else all but every fourth
// layer ((i + 1) % 4 != 0) slide with sliding_window. Sliding layers rotate with the default
// rope of rope_theta; full layers with the configured rope (rope_scaling, or rope_parameters'
// full_attention entry), as transformers' Olmo3Model keeps one rotary embedding per type.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  std::vector<std::string> types;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    types.push_back((i + 1) % 4 != 0 ? "sliding_attention" : "full_attention");
  return types;
}

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  o.post_norms_only = true;
  o.qk_norm = true;
  o.qk_norm_whole = true;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  // The sliding layers' own rope: the default one, of the same base.
  OG_ASSIGN_OR_RETURN(const double theta, t.get_double("rope_theta"));
  o.sliding_rope_theta = theta;
  return build_decoder(ctx, o);
}

}  // namespace

const Family& olmo3_family() {
  static constexpr ModelType kTypes[] = {{"olmo3", false}};
  // transformers' Olmo3Config: rms_norm_eps 1e-5, sliding_window 4096, rope_theta 500000
  // (transformers 5's default_theta; published configs set it).
  static const Family f{.name = "olmo3",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5}, {"sliding_window", 4096}, {"rope_theta", 500000.0}},
                        .default_layer_types = default_layer_types,
                        .build = build};
  return f;
}

}  // namespace og::exporter
