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
    DecoderOptions o;
    OG_TRY(gemma_decoder_options(ctx, o, /*via_f32=*/false));
    hf::JsonFields t = ctx.config.text_fields();
    OG_ASSIGN_OR_RETURN(double attn_cap, t.get_double("attn_logit_softcapping", 0.0));
    if (attn_cap < 0) return t.invalid("attn_logit_softcapping", "positive or null");
    o.attn_softcap = static_cast<float>(attn_cap);
    return build_decoder(ctx, o);
  }
};

}  // namespace

const Family& gemma2_family() {
  static const Gemma2Family f;
  return f;
}

}  // namespace og::exporter
