// Gemma (1) (model_type gemma; Gemma-2b/7b, CodeGemma): Llama's pre-norm block with Gemma's
// (1 + w) RMSNorms (folded), the embedding scaled by sqrt(hidden) rounded to the weight dtype,
// and a gelu-tanh MLP; scale head_dim^-0.5, no softcaps, all layers full attention. The
// activation is hidden_activation, else gelu_pytorch_tanh: transformers 4.38-4.5x ignore
// hidden_act, which the first published configs set to an exact "gelu" (and transformers 5
// reads hidden_act, so any other value there is taken).
#include "export/decoder.h"
#include "export/families/gemma_common.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<fb::Activation> gemma_activation(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  std::string key = "hidden_activation", act = "gelu_pytorch_tanh";
  if (t.has("hidden_activation") && !t.raw("hidden_activation").is_null()) {
    OG_ASSIGN_OR_RETURN(act, t.get_string("hidden_activation"));
  } else if (t.has("hidden_act") && !t.raw("hidden_act").is_null()) {
    OG_ASSIGN_OR_RETURN(std::string given, t.get_string("hidden_act"));
    if (given != "gelu") act = given, key = "hidden_act";
  }
  return activation_named(c, key, act);
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  DecoderOptions o;
  o.norm_offset = 1.0f;
  OG_ASSIGN_OR_RETURN(o.activation, gemma_activation(c));
  OG_ASSIGN_OR_RETURN(o.qkv_bias, c.text_fields().get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  OG_ASSIGN_OR_RETURN(const hf::TensorView* e, ctx.tensor("embed_tokens.weight", {c.vocab_size, c.hidden_size}));
  OG_ASSIGN_OR_RETURN(DType loaded, loaded_weight_dtype(c, e->dtype));
  o.embed_scale = gemma_embed_scale(c.hidden_size, loaded, /*via_f32=*/false);
  return build_decoder(ctx, o);
}

}  // namespace

const Family& gemma_family() {
  static constexpr ModelType kTypes[] = {{"gemma", false}};
  // transformers' GemmaConfig defaults for keys that published configs omit.
  static const Family f{.name = "gemma",
                        .model_types = kTypes,
                        .config_defaults = {{"vocab_size", 256000},
                                            {"hidden_size", 3072},
                                            {"intermediate_size", 24576},
                                            {"num_hidden_layers", 28},
                                            {"num_attention_heads", 16},
                                            {"num_key_value_heads", 16},
                                            {"head_dim", 256},
                                            {"max_position_embeddings", 8192},
                                            {"rms_norm_eps", 1e-6},
                                            {"rope_theta", 10000.0}},
                        .tie_word_embeddings_default = true,
                        .build = build};
  return f;
}

}  // namespace og::exporter
