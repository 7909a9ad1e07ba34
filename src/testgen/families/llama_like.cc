#include "testgen/families/llama_like.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <string>

#include <fmt/format.h>

namespace og::testgen {

Result<std::vector<TensorSpec>> llama_shaped_tensors(const Json& text, const FamilyContext& ctx,
                                                      const LlamaShape& shape) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  SpecList s;
  s.add("model.embed_tokens.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  const int64_t q_out = d.heads * d.head_dim;   // [Hq * D]
  const int64_t kv_out = d.kv_heads * d.head_dim;
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    const int64_t inter = d.intermediate[static_cast<size_t>(i)];
    if (shape.fused) {
      s.linear(p + "self_attn.o_proj", d.hidden, q_out);
      s.linear(p + "self_attn.qkv_proj", q_out + 2 * kv_out, d.hidden, false, kQkGain);  // rows: q, then k, then v
      s.linear(p + "mlp.gate_up_proj", 2 * inter, d.hidden);             // rows: gate, then up
      s.linear(p + "mlp.down_proj", d.hidden, inter);
    } else {
      s.linear(p + "self_attn.q_proj", q_out, d.hidden, shape.qkv_bias, kQkGain);
      s.linear(p + "self_attn.k_proj", kv_out, d.hidden, shape.qkv_bias, kQkGain);
      s.linear(p + "self_attn.v_proj", kv_out, d.hidden, shape.qkv_bias);
      s.linear(p + "self_attn.o_proj", d.hidden, q_out, shape.o_bias);
      if (shape.qk_norm) {
        s.norm(p + "self_attn." + shape.q_norm, shape.qk_norm_whole ? q_out : d.head_dim, kUnitNormInit);
        s.norm(p + "self_attn." + shape.k_norm, shape.qk_norm_whole ? kv_out : d.head_dim, kUnitNormInit);
      }
      if (shape.fused_gate_up) {
        s.linear(p + "mlp.gate_up_proj", 2 * inter, d.hidden);  // rows: gate, then up
      } else {
        if (!shape.plain_mlp) s.linear(p + "mlp.gate_proj", inter, d.hidden, shape.mlp_bias);
        s.linear(p + "mlp.up_proj", inter, d.hidden, shape.mlp_bias);
      }
      s.linear(p + "mlp.down_proj", d.hidden, inter, shape.mlp_bias);
    }
    s.norm(p + shape.input_norm, d.hidden, kUnitNormInit);
    s.norm(p + shape.ff_norm, d.hidden, kUnitNormInit);
    if (shape.glm4_norms) {
      s.norm(p + "post_self_attn_layernorm", d.hidden, kUnitNormInit);
      s.norm(p + "post_mlp_layernorm", d.hidden, kUnitNormInit);
    }
  }
  s.norm("model.norm", d.hidden, kUnitNormInit);
  if (!d.tie) s.add("lm_head.weight", {d.vocab, d.hidden}, linear_init(d.hidden, kHeadGain));
  return s.take();
}

std::vector<TensorSpec> replace_mlps(std::vector<TensorSpec> dense, const std::function<bool(int64_t)>& sparse,
                                     const std::function<void(int64_t, SpecList&)>& block) {
  std::vector<TensorSpec> out;
  for (TensorSpec& t : dense) {
    int64_t layer = -1;
    if (std::sscanf(t.name.c_str(), "model.layers.%ld.", &layer) == 1 && t.name.find(".mlp.") != std::string::npos &&
        sparse(layer)) {
      if (t.name.ends_with("mlp.gate_proj.weight")) {
        SpecList s;
        block(layer, s);
        for (TensorSpec& m : s.take()) out.push_back(std::move(m));
      }
      continue;
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<bool> flag(const Json& text, const FamilyContext& ctx, const char* key) {
  return hf::JsonFields(text, ctx.what).get_bool(key, false);
}

Result<std::vector<TensorSpec>> llama_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape;
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  OG_ASSIGN_OR_RETURN(shape.mlp_bias, flag(text, ctx, "mlp_bias"));
  return llama_shaped_tensors(text, ctx, shape);
}

}  // namespace og::testgen
