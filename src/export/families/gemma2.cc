// Gemma-2: (1 + w) RMSNorms (folded), sandwich norms, embedding scaled by sqrt(hidden)
// rounded to the weight dtype, gelu-tanh MLP, query_pre_attn_scalar^-0.5 attention scale,
// attention and final logit softcapping, sliding on even layers ((i + 1) % 2 != 0).
#include <cmath>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

class Gemma2Family final : public Family {
 public:
  const char* name() const override { return "gemma2"; }
  Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) const override {
    std::vector<std::string> types;
    for (int64_t i = 0; i < c.num_hidden_layers; ++i)
      types.push_back((i + 1) % 2 != 0 ? "sliding_attention" : "full_attention");
    return types;
  }
  Status build(BuildContext& ctx) const override {
    const hf::ModelConfig& c = ctx.config;
    hf::JsonFields t = c.text_fields();
    DecoderOptions o;
    o.norm_offset = 1.0f;
    o.sandwich_norms = true;
    OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
    OG_ASSIGN_OR_RETURN(double qpas, t.get_double("query_pre_attn_scalar", 256.0));
    if (!(qpas > 0)) return t.invalid("query_pre_attn_scalar", "positive");
    o.attn_scale = static_cast<float>(1.0 / std::sqrt(qpas));
    OG_ASSIGN_OR_RETURN(double attn_cap, t.get_double("attn_logit_softcapping", 0.0));
    OG_ASSIGN_OR_RETURN(double final_cap, t.get_double("final_logit_softcapping", 0.0));
    if (attn_cap < 0) return t.invalid("attn_logit_softcapping", "positive or null");
    if (final_cap < 0) return t.invalid("final_logit_softcapping", "positive or null");
    o.attn_softcap = static_cast<float>(attn_cap);
    o.final_softcap = static_cast<float>(final_cap);
    OG_ASSIGN_OR_RETURN(const hf::TensorView* e, ctx.tensor("embed_tokens.weight", {c.vocab_size, c.hidden_size}));
    OG_ASSIGN_OR_RETURN(DType loaded, loaded_weight_dtype(c, e->dtype));
    o.embed_scale = gemma_embed_scale(c.hidden_size, loaded, /*via_f32=*/false);
    return build_decoder(ctx, o);
  }
};

}  // namespace

const Family& gemma2_family() {
  static const Gemma2Family f;
  return f;
}

}  // namespace og::exporter
