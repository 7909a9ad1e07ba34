// Qwen3: Llama's block with RMSNorm on q and k per head (before RoPE), biases on q, k, v and o
// only with attention_bias, and Qwen2's sliding-window rule.
#include "export/decoder.h"
#include "export/families/qwen_common.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) { return qwen_layer_types(c); }

Result<int64_t> sliding_window(const hf::ModelConfig& c) { return qwen_sliding_window(c); }

Status build(BuildContext& ctx) {
  DecoderOptions o;
  o.qk_norm = true;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, ctx.config.text_fields().get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;  // Qwen3Attention: o_proj too has bias=config.attention_bias
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& qwen3_family() {
  static constexpr ModelType kTypes[] = {{"qwen3", false}};
  // transformers' Qwen3Config: head_dim defaults to 128, not hidden_size / heads; the
  // sliding_window default counts only with use_sliding_window.
  static const Family f{.name = "qwen3",
                        .model_types = kTypes,
                        .config_defaults = {{"head_dim", 128}, {"sliding_window", 4096}},
                        .default_layer_types = default_layer_types,
                        .sliding_window = sliding_window,
                        .build = build};
  return f;
}

}  // namespace og::exporter
