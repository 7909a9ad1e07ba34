// Nemotron (model_type nemotron; Nemotron-4, Minitron, Nemotron-Mini): transformers'
// NemotronForCausalLM. Llama's attention (biases on q/k/v/o iff attention_bias) with the
// rope on the first partial_rotary_factor of each head (rotate-half), the ungated MLP
// down_proj(relu2(up_proj x)) (biases iff mlp_bias), and NemotronLayerNorm1P everywhere: a
// LayerNorm of weight (1 + w) and bias b, eps norm_eps. transformers adds 1 to w in the
// weight's dtype; here it is added in f32 (as the reference does in float64), which for a bf16
// checkpoint keeps bits that transformers' bf16 sum rounds away. kv_channels is not read (nor
// by transformers: head_dim, else hidden_size / heads).
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  o.layer_norm = true;
  o.norm_offset = 1.0f;
  OG_TRY(read_attention_and_mlp_biases(t, o));
  o.plain_mlp_up = "up_proj";
  o.plain_mlp_down = "down_proj";
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& nemotron_family() {
  static constexpr ModelType kTypes[] = {{"nemotron", false}};
  // transformers' NemotronConfig defaults for keys a config.json may omit: norm_eps 1e-5 (read
  // as the norms' eps), partial_rotary_factor 0.5, hidden_act relu2.
  static const Family f{.name = "nemotron",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"rope_theta", 10000.0},
                                            {"partial_rotary_factor", 0.5},
                                            {"hidden_act", "relu2"},
                                            {"attention_bias", false},
                                            {"mlp_bias", false},
                                            {"tie_word_embeddings", false}},
                        .config_aliases = {{"norm_eps", "rms_norm_eps"}},
                        .build = build};
  return f;
}

}  // namespace og::exporter
