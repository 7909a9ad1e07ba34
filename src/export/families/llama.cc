// Llama 1-3.x and SmolLM (model_type llama): pre-norm, SiLU gated MLP, optional
// attention/MLP biases, rope_scaling llama3 or linear. All layers full attention.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

class LlamaFamily final : public Family {
 public:
  const char* name() const override { return "llama"; }
  std::span<const ModelType> model_types() const override {
    static constexpr ModelType kTypes[] = {{"llama", false}};
    return kTypes;
  }
  Status build(BuildContext& ctx) const override {
    hf::JsonFields t = ctx.config.text_fields();
    DecoderOptions o;
    OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", false));
    o.o_bias = o.qkv_bias;
    OG_ASSIGN_OR_RETURN(o.mlp_bias, t.get_bool("mlp_bias", false));
    OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
    return build_decoder(ctx, o);
  }
};

}  // namespace

const Family& llama_family() {
  static const LlamaFamily f;
  return f;
}

}  // namespace og::exporter
