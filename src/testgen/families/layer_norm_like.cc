#include "testgen/families/layer_norm_like.h"

#include <string>

#include <fmt/format.h>

namespace og::testgen {
namespace {

void layer_norm(SpecList& s, const std::string& prefix, int64_t n, bool bias) {
  s.norm(prefix, n, kUnitNormInit);
  if (bias) s.add(prefix + ".bias", {n}, kBiasInit);
}

}  // namespace

Result<std::vector<TensorSpec>> layer_norm_tensors(const Json& text, const FamilyContext& ctx, const LayerNormShape& shape) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  SpecList s;
  s.add("model.embed_tokens.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  const int64_t q_out = d.heads * d.head_dim, kv_out = d.kv_heads * d.head_dim;
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    const int64_t inter = d.intermediate[static_cast<size_t>(i)];
    s.linear(p + "self_attn.q_proj", q_out, d.hidden, shape.qkv_bias, kQkGain);
    s.linear(p + "self_attn.k_proj", kv_out, d.hidden, shape.qkv_bias, kQkGain);
    s.linear(p + "self_attn.v_proj", kv_out, d.hidden, shape.qkv_bias);
    s.linear(p + "self_attn." + shape.o_proj, d.hidden, q_out, shape.o_bias);
    if (shape.qk_layernorm && shape.qk_norm_heads_list != nullptr) {
      for (int64_t h = 0; h < d.heads; ++h)
        s.norm(fmt::format("{}self_attn.q_layernorm.{}.{}", p, shape.qk_norm_heads_list, h), d.head_dim, kUnitNormInit);
      for (int64_t h = 0; h < d.kv_heads; ++h)
        s.norm(fmt::format("{}self_attn.k_layernorm.{}.{}", p, shape.qk_norm_heads_list, h), d.head_dim, kUnitNormInit);
    } else if (shape.qk_layernorm) {
      layer_norm(s, p + "self_attn.q_layernorm", d.head_dim, shape.norm_bias);
      layer_norm(s, p + "self_attn.k_layernorm", d.head_dim, shape.norm_bias);
    }
    if (shape.mlp_up != nullptr) {
      s.linear(p + "mlp." + shape.mlp_up, inter, d.hidden, shape.other_bias);
      s.linear(p + "mlp." + shape.mlp_down, d.hidden, inter, shape.other_bias);
    } else {
      s.linear(p + "mlp.gate_proj", inter, d.hidden, shape.other_bias);
      s.linear(p + "mlp.up_proj", inter, d.hidden, shape.other_bias);
      s.linear(p + "mlp.down_proj", d.hidden, inter, shape.other_bias);
    }
    layer_norm(s, p + "input_layernorm", d.hidden, shape.norm_bias);
    if (!shape.parallel) layer_norm(s, p + "post_attention_layernorm", d.hidden, shape.norm_bias);
  }
  layer_norm(s, std::string("model.") + shape.final_norm, d.hidden, shape.norm_bias);
  if (!d.tie) {
    s.add("lm_head.weight", {d.vocab, d.hidden}, linear_init(d.hidden, kHeadGain));
    if (shape.head_bias) s.add("lm_head.bias", {d.vocab}, kBiasInit);
  }
  return s.take();
}

}  // namespace og::testgen
