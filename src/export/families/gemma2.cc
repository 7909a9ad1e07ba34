// Gemma-2: (1 + w) RMSNorms (folded), sandwich norms, embedding scaled by sqrt(hidden)
// rounded to the weight dtype, gelu-tanh MLP, query_pre_attn_scalar^-0.5 attention scale,
// attention and final logit softcapping, sliding on even layers ((i + 1) % 2 != 0).
#include <cmath>

#include "export/decoder.h"
#include "export/families/gemma_common.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  std::vector<std::string> types;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    types.push_back((i + 1) % 2 != 0 ? "sliding_attention" : "full_attention");
  return types;
}

Status build(BuildContext& ctx) {
  DecoderOptions o;
  OG_TRY(gemma_decoder_options(ctx, o, /*via_f32=*/false));
  hf::JsonFields t = ctx.config.text_fields();
  OG_ASSIGN_OR_RETURN(double attn_cap, t.get_double("attn_logit_softcapping", 0.0));
  if (attn_cap < 0) return t.invalid("attn_logit_softcapping", "positive or null");
  o.attn_softcap = static_cast<float>(attn_cap);
  return build_decoder(ctx, o);
}

}  // namespace

const Family& gemma2_family() {
  static constexpr ModelType kTypes[] = {{"gemma2", false}};
  // transformers' Gemma2Config defaults for keys that published configs omit.
  static const Family f{.name = "gemma2",
                        .model_types = kTypes,
                        .config_defaults = {{"vocab_size", 256000},
                                            {"hidden_size", 2304},
                                            {"intermediate_size", 9216},
                                            {"num_hidden_layers", 26},
                                            {"num_attention_heads", 8},
                                            {"num_key_value_heads", 4},
                                            {"head_dim", 256},
                                            {"max_position_embeddings", 8192},
                                            {"rms_norm_eps", 1e-6},
                                            {"rope_theta", 10000.0},
                                            {"query_pre_attn_scalar", 256},
                                            {"sliding_window", 4096},
                                            {"final_logit_softcapping", 30.0},
                                            {"attn_logit_softcapping", 50.0},
                                            {"hidden_activation", "gelu_pytorch_tanh"}},
                        .tie_word_embeddings_default = true,
                        .default_layer_types = default_layer_types,
                        .build = build};
  return f;
}

}  // namespace og::exporter
