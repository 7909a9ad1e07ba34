// Gemma-3 text (gemma3_text, or the text part of the gemma3 wrapper): Gemma-2's block
// with (1 + w) q/k norms and no attention softcapping (even when the config sets one), rope_local_base_freq for
// sliding layers, and layer i sliding iff (i + 1) % sliding_window_pattern != 0.
#include <cmath>

#include "export/decoder.h"
#include "export/families/gemma_common.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(int64_t pattern, c.text_fields().get_int("sliding_window_pattern"));
  if (pattern <= 0) return c.text_fields().invalid("sliding_window_pattern", "a positive integer");
  std::vector<std::string> types;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    types.push_back((i + 1) % pattern != 0 ? "sliding_attention" : "full_attention");
  return types;
}

Status build(BuildContext& ctx) {
  DecoderOptions o;
  OG_TRY(gemma_decoder_options(ctx, o, /*via_f32=*/true));
  o.qk_norm = true;
  // Gemma-3's attention never applies attn_logit_softcapping (transformers does not pass it on).
  OG_ASSIGN_OR_RETURN(double local_theta, ctx.config.text_fields().get_double("rope_local_base_freq"));
  o.sliding_rope_theta = local_theta;
  return build_decoder(ctx, o);
}

}  // namespace

const Family& gemma3_family() {
  static constexpr ModelType kTypes[] = {{"gemma3_text", false}, {"gemma3", true}};
  // transformers' Gemma3TextConfig defaults (the wrapper's text_config often lists only what differs).
  static const Family f{.name = "gemma3",
                        .model_types = kTypes,
                        .config_defaults = {{"vocab_size", 262208},
                                            {"hidden_size", 2304},
                                            {"intermediate_size", 9216},
                                            {"num_hidden_layers", 26},
                                            {"num_attention_heads", 8},
                                            {"num_key_value_heads", 4},
                                            {"head_dim", 256},
                                            {"max_position_embeddings", 131072},
                                            {"rms_norm_eps", 1e-6},
                                            {"rope_theta", 1000000.0},
                                            {"rope_local_base_freq", 10000.0},
                                            {"query_pre_attn_scalar", 256},
                                            {"sliding_window", 4096},
                                            {"sliding_window_pattern", 6},
                                            {"hidden_activation", "gelu_pytorch_tanh"}},
                        .tie_word_embeddings_default = true,
                        .default_layer_types = default_layer_types,
                        .build = build};
  return f;
}

}  // namespace og::exporter
