// EXAONE 4.0 (model_type exaone4; EXAONE-4.0-1.2B, -32B): transformers' Exaone4ForCausalLM.
// OLMo 2's block (norms on the sublayers' outputs only: x += post_attention_layernorm(attn(x)),
// x += post_feedforward_layernorm(mlp(x)), no input_layernorm) with Qwen3's q/k RMSNorms over
// each head before the rope, no biases. Sliding layers: layer_types, else (Exaone4Config)
// layer i slides iff (i + 1) % sliding_window_pattern != 0, none when sliding_window is null.
// With a sliding_window (the hybrid models) only the sliding layers apply the rope, the full
// ones are NoPE; without one every layer does. A sliding_window_pattern given as a string
// ("LLLG") without layer_types is refused: Exaone4Config cannot read it either.
#include <fmt/format.h>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  std::vector<std::string> types(static_cast<size_t>(c.num_hidden_layers), "full_attention");
  if (!c.sliding_window.has_value()) return types;
  if (t.has("sliding_window_pattern") && t.raw("sliding_window_pattern").is_string())
    return unsupported("{}: field '{}' is a string and there is no layer_types: Exaone4Config builds the layer types "
                       "from an integer pattern only",
                       c.path, t.field_name("sliding_window_pattern"));
  OG_ASSIGN_OR_RETURN(const int64_t pattern, t.get_int("sliding_window_pattern", 4));
  if (pattern <= 0) return t.invalid("sliding_window_pattern", "a positive integer");
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    if ((i + 1) % pattern != 0) types[static_cast<size_t>(i)] = "sliding_attention";
  return types;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  DecoderOptions o;
  o.post_norms_only = true;
  o.qk_norm = true;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  // "We use global NoPE for hybrid attention model": the rope only on sliding layers then.
  const bool hybrid = c.sliding_window.has_value();
  for (const LayerAttention& la : ctx.layers) {
    if (la.type == "sliding_attention" && !hybrid)
      return unsupported("{}: a layer is sliding_attention but field '{}' is null: there is no window to apply", c.path,
                         c.text_fields().field_name("sliding_window"));
    o.skip_rope.push_back(hybrid && la.type != "sliding_attention");
  }
  return build_decoder(ctx, o);
}

}  // namespace

const Family& exaone4_family() {
  static constexpr ModelType kTypes[] = {{"exaone4", false}};
  // transformers' Exaone4Config defaults for keys a config.json may omit (no head_dim:
  // hidden_size / heads).
  static const Family f{.name = "exaone4",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"rope_theta", 10000.0},
                                            {"num_key_value_heads", 32},
                                            {"sliding_window", 4096},
                                            {"sliding_window_pattern", 4},
                                            {"tie_word_embeddings", false}},
                        .default_layer_types = default_layer_types,
                        .build = build};
  return f;
}

}  // namespace og::exporter
