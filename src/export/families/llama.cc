// Llama 1-3.x and SmolLM (model_type llama): pre-norm, SiLU gated MLP, optional
// attention/MLP biases, rope_scaling llama3 or linear. All layers full attention.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  OG_TRY(read_attention_and_mlp_biases(t, o));
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& llama_family() {
  static constexpr ModelType kTypes[] = {{"llama", false}};
  static const Family f{.name = "llama", .model_types = kTypes, .build = build};
  return f;
}

}  // namespace og::exporter
