// dots.llm1 (model_type dots1; dots.llm1.base, dots.llm1.inst): transformers' Dots1ForCausalLM.
// Qwen3's attention (q/k RMSNorms over head_dim before the rope, biases on q/k/v/o iff
// attention_bias) with DeepSeek-V3's mixture of experts (deepseek_moe.h) from layer
// first_k_dense_replace on. Sliding layers by Dots1Config's rule: without layer_types, those
// i >= max_window_layers when sliding_window is set (there is no use_sliding_window).
// scoring_func and topk_method, which transformers does not read, are accepted when they name
// this router (the first hub configs wrote "noaux_tc" as the scoring_func).
#include <fmt/format.h>

#include "export/decoder.h"
#include "export/families/deepseek_moe.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(const int64_t max_window_layers, c.text_fields().get_int("max_window_layers", 62));
  std::vector<std::string> types;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    types.push_back(c.sliding_window.has_value() && i >= max_window_layers ? "sliding_attention" : "full_attention");
  return types;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(const std::string scoring, t.get_string("scoring_func", "sigmoid"));
  if (scoring != "sigmoid" && scoring != "noaux_tc")
    return t.invalid("scoring_func", "\"sigmoid\" (dots.llm1's router; transformers reads no other)");
  OG_ASSIGN_OR_RETURN(const std::string method, t.get_string("topk_method", "noaux_tc"));
  if (method != "noaux_tc") return t.invalid("topk_method", "\"noaux_tc\" (dots.llm1's router; transformers reads no other)");
  OG_ASSIGN_OR_RETURN(DeepseekMoeConfig m, read_sigmoid_moe_config(c));
  DecoderOptions o;
  o.qk_norm = true;
  OG_ASSIGN_OR_RETURN(const bool bias, t.get_bool("attention_bias", false));
  o.qkv_bias = bias;
  o.o_bias = bias;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  o.mlp = deepseek_moe_block(m, o.activation);
  return build_decoder(ctx, o);
}

}  // namespace

const Family& dots1_family() {
  static constexpr ModelType kTypes[] = {{"dots1", false}};
  // transformers' Dots1Config defaults for keys a config.json may omit (no head_dim:
  // hidden_size / heads, as Qwen3Attention reads it).
  static const Family f{.name = "dots1",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"rope_theta", 10000.0},
                                            {"num_key_value_heads", 32},
                                            {"intermediate_size", 10944},
                                            {"moe_intermediate_size", 1408},
                                            {"n_group", 1},
                                            {"topk_group", 1},
                                            {"first_k_dense_replace", 0},
                                            {"norm_topk_prob", false},
                                            {"routed_scaling_factor", 1.0},
                                            {"sliding_window", 4096},
                                            {"max_window_layers", 62},
                                            {"attention_bias", false},
                                            {"tie_word_embeddings", false}},
                        .default_layer_types = default_layer_types,
                        .build = build};
  return f;
}

}  // namespace og::exporter
