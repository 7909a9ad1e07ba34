// Qwen2: Llama's block with biases on q/k/v (not o). Sliding attention only when
// use_sliding_window, on layers from max_window_layers on (transformers' rule).
#include "export/decoder.h"
#include "export/families/qwen_common.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) { return qwen_layer_types(c); }

Result<int64_t> sliding_window(const hf::ModelConfig& c) { return qwen_sliding_window(c); }

Status build(BuildContext& ctx) {
  DecoderOptions o;
  o.qkv_bias = true;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& qwen2_family() {
  static constexpr ModelType kTypes[] = {{"qwen2", false}};
  // transformers' Qwen2Config: the sliding_window default counts only with use_sliding_window.
  static const Family f{.name = "qwen2",
                        .model_types = kTypes,
                        .config_defaults = {{"sliding_window", 4096}},
                        .default_layer_types = default_layer_types,
                        .sliding_window = sliding_window,
                        .build = build};
  return f;
}

}  // namespace og::exporter
