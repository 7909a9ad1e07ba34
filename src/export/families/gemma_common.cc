#include "export/families/gemma_common.h"

#include <cmath>

#include "export/build_context.h"

namespace og::exporter {

float gemma_embed_scale(int64_t hidden_size, DType loaded, bool via_f32) {
  double s = std::sqrt(static_cast<double>(hidden_size));
  if (via_f32) s = static_cast<double>(static_cast<float>(s));
  return round_to_dtype(s, loaded);
}

Status gemma_decoder_options(BuildContext& ctx, DecoderOptions& o, bool via_f32) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  o.norm_offset = 1.0f;
  o.sandwich_norms = true;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  OG_ASSIGN_OR_RETURN(double qpas, t.get_double("query_pre_attn_scalar"));
  if (!(qpas > 0)) return t.invalid("query_pre_attn_scalar", "positive");
  o.attn_scale = static_cast<float>(1.0 / std::sqrt(qpas));
  OG_ASSIGN_OR_RETURN(double final_cap, t.get_double("final_logit_softcapping", 0.0));
  if (final_cap < 0) return t.invalid("final_logit_softcapping", "positive or null");
  o.final_softcap = static_cast<float>(final_cap);
  OG_ASSIGN_OR_RETURN(const hf::TensorView* e, ctx.tensor("embed_tokens.weight", {c.vocab_size, c.hidden_size}));
  OG_ASSIGN_OR_RETURN(DType loaded, loaded_weight_dtype(c, e->dtype));
  o.embed_scale = gemma_embed_scale(c.hidden_size, loaded, via_f32);
  return Status::ok();
}

}  // namespace og::exporter
