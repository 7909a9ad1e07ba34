// Mistral: Llama's block; `sliding_window`, when set, applies to every layer.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  return std::vector<std::string>(static_cast<size_t>(c.num_hidden_layers),
                                  c.sliding_window ? "sliding_attention" : "full_attention");
}

Status build(BuildContext& ctx) {
  DecoderOptions o;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& mistral_family() {
  static constexpr ModelType kTypes[] = {{"mistral", false}};
  // transformers' MistralConfig defaults for keys that published configs omit.
  static const Family f{.name = "mistral",
                        .model_types = kTypes,
                        .config_defaults = {{"num_key_value_heads", 8}, {"sliding_window", 4096}},
                        .default_layer_types = default_layer_types,
                        .build = build};
  return f;
}

}  // namespace og::exporter
