// SmolLM3 (model_type smollm3): Llama's block (biases on q/k/v/o iff attention_bias, on the
// MLP iff mlp_bias) with NoPE layers: `no_rope_layers[l]` 1 = layer l applies RoPE, 0 = it
// applies none (no rope op is emitted). Absent or null, transformers derives it: layer l is
// NoPE iff (l + 1) % no_rope_layer_interval == 0. Layer types, when config.json has none:
// sliding iff use_sliding_window, sliding_window set and the layer is NoPE; a sliding layer
// needs use_sliding_window (SmolLM3Attention drops the window without it, while the mask of
// eager/sdpa attention keeps it: an ambiguous config is refused). Tied head by default.
// Followed: transformers models/smollm3/{configuration,modeling}_smollm3.py.
#include <fmt/format.h>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

// Per layer: does it apply RoPE (transformers' config.no_rope_layers, as SmolLM3Config fills it).
Result<std::vector<bool>> uses_rope(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  const int64_t n = c.num_hidden_layers;
  std::vector<bool> rope(static_cast<size_t>(n));
  if (t.has("no_rope_layers")) {
    const hf::Json& v = t.raw("no_rope_layers");
    const std::string expected = fmt::format("a list of at least {} (num_hidden_layers) entries, each 0 or 1", n);
    if (!v.is_array() || static_cast<int64_t>(v.size()) < n) return t.invalid("no_rope_layers", expected);
    for (int64_t l = 0; l < n; ++l) {
      const hf::Json& e = v[static_cast<size_t>(l)];
      if (!e.is_number_integer() || (e.get<int64_t>() != 0 && e.get<int64_t>() != 1))
        return t.invalid("no_rope_layers", expected);
      rope[static_cast<size_t>(l)] = e.get<int64_t>() == 1;
    }
    return rope;
  }
  OG_ASSIGN_OR_RETURN(int64_t interval, t.get_int("no_rope_layer_interval"));
  if (interval <= 0) return t.invalid("no_rope_layer_interval", "a positive integer");
  for (int64_t l = 0; l < n; ++l) rope[static_cast<size_t>(l)] = (l + 1) % interval != 0;
  return rope;
}

// SmolLM3's apply_rotary_pos_emb multiplies the whole head by cos/sin, so transformers cannot
// run a partial rotary width: partial_rotary_factor other than 1, at the top level or in a
// rope dict, is refused.
Status require_whole_head_rope(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  auto check = [&](const hf::JsonFields& f) -> Status {
    OG_ASSIGN_OR_RETURN(double partial, f.get_double("partial_rotary_factor", 1.0));
    if (partial != 1.0)
      return unsupported(
          "{}: field '{}' is {}: SmolLM3 rotates whole heads (transformers cannot run a partial "
          "rotary width for it)",
          c.path, f.field_name("partial_rotary_factor"), partial);
    return Status::ok();
  };
  OG_TRY(check(t));
  for (const char* dict : {"rope_scaling", "rope_parameters"})
    if (t.has(dict)) {
      OG_ASSIGN_OR_RETURN(hf::JsonFields d, t.get_object(dict));
      OG_TRY(check(d));
    }
  return Status::ok();
}

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(bool use, c.text_fields().get_bool("use_sliding_window", false));
  OG_ASSIGN_OR_RETURN(std::vector<bool> rope, uses_rope(c));
  std::vector<std::string> types;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    types.push_back(use && c.sliding_window && !rope[static_cast<size_t>(l)] ? "sliding_attention" : "full_attention");
  return types;
}

Result<int64_t> sliding_window(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(bool use, t.get_bool("use_sliding_window", false));
  if (use) return c.sliding_window.value_or(0);
  for (size_t l = 0; l < c.layer_types.size(); ++l)
    if (c.layer_types[l] == "sliding_attention")
      return unsupported(
          "{}: '{}[{}]' is sliding_attention but '{}' is false (transformers windows that layer "
          "in eager/sdpa attention and not in flash attention); set use_sliding_window or make "
          "the layer full_attention",
          c.path, t.field_name("layer_types"), l, t.field_name("use_sliding_window"));
  return 0;
}

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  OG_ASSIGN_OR_RETURN(o.mlp_bias, t.get_bool("mlp_bias", false));
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  OG_TRY(require_whole_head_rope(ctx.config));
  OG_ASSIGN_OR_RETURN(std::vector<bool> rope, uses_rope(ctx.config));
  for (bool r : rope) o.skip_rope.push_back(!r);
  return build_decoder(ctx, o);
}

}  // namespace

const Family& smollm3_family() {
  static constexpr ModelType kTypes[] = {{"smollm3", false}};
  // transformers' SmolLM3Config defaults (rope_theta 2e6, not Llama's 1e4).
  static const Family f{.name = "smollm3",
                        .model_types = kTypes,
                        .config_defaults = {{"vocab_size", 128256},
                                            {"hidden_size", 2048},
                                            {"intermediate_size", 11008},
                                            {"num_hidden_layers", 36},
                                            {"num_attention_heads", 16},
                                            {"num_key_value_heads", 4},
                                            {"hidden_act", "silu"},
                                            {"max_position_embeddings", 32768},
                                            {"rms_norm_eps", 1e-6},
                                            {"rope_theta", 2000000.0},
                                            {"use_sliding_window", false},
                                            {"no_rope_layer_interval", 4},
                                            {"attention_bias", false},
                                            {"mlp_bias", false}},
                        .tie_word_embeddings_default = true,
                        .default_layer_types = default_layer_types,
                        .sliding_window = sliding_window,
                        .build = build};
  return f;
}

}  // namespace og::exporter
