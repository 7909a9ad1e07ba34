// Mistral: Llama's block; `sliding_window`, when set, applies to every layer.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

class MistralFamily final : public Family {
 public:
  const char* name() const override { return "mistral"; }
  std::span<const ModelType> model_types() const override {
    static constexpr ModelType kTypes[] = {{"mistral", false}};
    return kTypes;
  }
  // transformers' MistralConfig defaults for keys that published configs omit.
  const hf::Json& config_defaults() const override {
    static const hf::Json kDefaults = {{"num_key_value_heads", 8}, {"sliding_window", 4096}};
    return kDefaults;
  }
  Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) const override {
    return std::vector<std::string>(static_cast<size_t>(c.num_hidden_layers),
                                    c.sliding_window ? "sliding_attention" : "full_attention");
  }
  Status build(BuildContext& ctx) const override {
    DecoderOptions o;
    OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
    return build_decoder(ctx, o);
  }
};

}  // namespace

const Family& mistral_family() {
  static const MistralFamily f;
  return f;
}

}  // namespace og::exporter
