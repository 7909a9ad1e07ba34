// Cohere2 (model_type cohere2; Command R7B, Command A): Cohere's parallel block with sliding
// layers and NoPE full ones: layer_types, else layer i slides iff (i + 1) %
// sliding_window_pattern != 0 (default 4); only sliding layers apply the rope. head_dim is
// hidden_size / num_attention_heads whatever the config says (Cohere2Config sets it so).
#include "export/families/cohere.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(int64_t pattern, t.get_int("sliding_window_pattern", 4));
  if (pattern <= 0) return t.invalid("sliding_window_pattern", "a positive integer");
  std::vector<std::string> types;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    types.push_back((i + 1) % pattern != 0 ? "sliding_attention" : "full_attention");
  return types;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  if (c.head_dim * c.num_attention_heads != c.hidden_size)
    return unsupported("{}: field '{}' is {}: Cohere2Config sets head_dim to hidden_size / num_attention_heads ({})",
                       c.path, c.text_fields().field_name("head_dim"), c.head_dim, c.hidden_size / c.num_attention_heads);
  DecoderOptions o;
  OG_TRY(cohere_decoder_options(ctx, o));
  for (const LayerAttention& la : ctx.layers) o.skip_rope.push_back(la.type != "sliding_attention");
  return build_decoder(ctx, o);
}

}  // namespace

const Family& cohere2_family() {
  static constexpr ModelType kTypes[] = {{"cohere2", false}};
  // Cohere2Config's defaults: layer_norm_eps 1e-5, rope_theta 10000, sliding_window 4096,
  // logit_scale 0.0625 (read where used); tied embeddings.
  static const Family f{.name = "cohere2",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0}, {"sliding_window", 4096}},
                        .config_aliases = {{"layer_norm_eps", "rms_norm_eps"}},
                        .tie_word_embeddings_default = true,
                        .default_layer_types = default_layer_types,
                        .build = build};
  return f;
}

}  // namespace og::exporter
