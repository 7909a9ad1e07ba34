// Qwen2: Llama's block with biases on q/k/v (not o). Sliding attention only when
// use_sliding_window, on layers from max_window_layers on (transformers' rule).
#include "export/decoder.h"
#include "export/family.h"
#include "export/families/qwen_common.h"

namespace og::exporter {
namespace {

class Qwen2Family final : public Family {
 public:
  const char* name() const override { return "qwen2"; }
  std::span<const ModelType> model_types() const override {
    static constexpr ModelType kTypes[] = {{"qwen2", false}};
    return kTypes;
  }
  // transformers' Qwen2Config: the sliding_window default counts only with use_sliding_window.
  const hf::Json& config_defaults() const override {
    static const hf::Json kDefaults = {{"sliding_window", 4096}};
    return kDefaults;
  }
  Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) const override {
    return qwen_layer_types(c);
  }
  Result<int64_t> sliding_window(const hf::ModelConfig& c) const override { return qwen_sliding_window(c); }
  Status build(BuildContext& ctx) const override {
    DecoderOptions o;
    o.qkv_bias = true;
    OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
    return build_decoder(ctx, o);
  }
};

}  // namespace

const Family& qwen2_family() {
  static const Qwen2Family f;
  return f;
}

}  // namespace og::exporter
