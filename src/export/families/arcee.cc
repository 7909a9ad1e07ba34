// Arcee (model_type arcee; AFM-4.5B): transformers' ArceeForCausalLM, Llama's pre-norm decoder
// whose MLP is NemotronMLP's ungated down_proj(act(up_proj x)) with act relu2 (the squared
// ReLU), biases on q/k/v/o iff attention_bias and on the MLP iff mlp_bias; rope_scaling as
// Llama's (AFM-4.5B: YaRN).
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  OG_TRY(read_attention_and_mlp_biases(t, o));
  o.plain_mlp_up = "up_proj";
  o.plain_mlp_down = "down_proj";
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& arcee_family() {
  static constexpr ModelType kTypes[] = {{"arcee", false}};
  // transformers' ArceeConfig defaults for keys a config.json may omit.
  static const Family f{.name = "arcee",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"rope_theta", 10000.0},
                                            {"hidden_act", "relu2"},
                                            {"attention_bias", false},
                                            {"mlp_bias", false},
                                            {"tie_word_embeddings", false}},
                        .build = build};
  return f;
}

}  // namespace og::exporter
