// Mistral: Llama's block; `sliding_window`, when set, applies to every layer.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

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
                        .default_layer_types = sliding_everywhere_if_set,
                        .build = build};
  return f;
}

}  // namespace og::exporter
