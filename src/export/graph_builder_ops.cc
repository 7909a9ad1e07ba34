// The op half of GraphBuilder: one method per op kind, each appending its op with its
// attributes (program/ops.h holds what the validator and the runtime read of it).
#include <algorithm>

#include "export/graph_builder.h"

namespace og::exporter {

ValueId GraphBuilder::push(std::vector<int32_t> inputs, int32_t width, fb::OpAttrsUnion attrs) {
  auto op = std::make_unique<fb::OpT>();
  op->inputs = std::move(inputs);
  op->output = new_value(width);
  op->attrs = std::move(attrs);
  ValueId out = op->output;
  program_.ops.push_back(std::move(op));
  return out;
}

ValueId GraphBuilder::embedding(WeightId table, int32_t width, float scale, std::vector<int32_t> remap_ids,
                                int32_t remap_to) {
  fb::EmbeddingAttrsT a;
  a.table = table;
  a.scale = scale;
  a.remap_ids = std::move(remap_ids);
  a.remap_to = remap_to;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  uses_[table] |= kEmbeddingUse;
  return push({ids_}, width, std::move(u));
}

ValueId GraphBuilder::position_embedding(WeightId table, int32_t width) {
  fb::EmbeddingAttrsT a;
  a.table = table;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  uses_[table] |= kEmbeddingUse;
  return push({positions_}, width, std::move(u));
}

ValueId GraphBuilder::rms_norm(ValueId x, WeightId weight, float eps, int32_t dim) {
  fb::RmsNormAttrsT a;
  a.weight = weight;
  a.eps = eps;
  a.dim = dim;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, width(x), std::move(u));
}

ValueId GraphBuilder::layer_norm(ValueId x, WeightId weight, WeightId bias, float eps, int32_t dim) {
  fb::LayerNormAttrsT a;
  a.weight = weight;
  a.bias = bias;
  a.eps = eps;
  a.dim = dim;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, width(x), std::move(u));
}

ValueId GraphBuilder::linear(ValueId x, WeightId weight, WeightId bias) {
  fb::LinearAttrsT a;
  a.weight = weight;
  a.bias = bias;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  uses_[weight] |= kLinearUse;
  return push({x}, static_cast<int32_t>(weight_shape(weight)[0]), std::move(u));
}

ValueId GraphBuilder::lm_head(ValueId x, WeightId weight, WeightId bias) {
  uses_[weight] |= kHeadUse;
  return linear(x, weight, bias);
}

ValueId GraphBuilder::router(ValueId x, WeightId weight, WeightId bias) {
  uses_[weight] |= kRouterUse;
  fb::LinearAttrsT a;
  a.weight = weight;
  a.bias = bias;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, static_cast<int32_t>(weight_shape(weight)[0]), std::move(u));
}

ValueId GraphBuilder::moe(ValueId x, ValueId router_logits, const MoeSpec& s) {
  fb::MoeAttrsT a;
  a.top_k = s.top_k;
  a.scoring = s.scoring;
  a.normalize_top_k = s.normalize_top_k;
  a.routed_scale = s.routed_scale;
  a.activation = s.activation;
  a.gate = s.gate;
  a.up = s.up;
  a.down = s.down;
  a.shared_gate = s.shared_gate;
  a.shared_up = s.shared_up;
  a.shared_down = s.shared_down;
  a.shared_expert_gate = s.shared_expert_gate;
  a.expert_scale = s.expert_scale;
  a.gate_bias = s.gate_bias;
  a.up_bias = s.up_bias;
  a.down_bias = s.down_bias;
  a.swiglu_alpha = s.swiglu_alpha;
  a.swiglu_limit = s.swiglu_limit;
  a.choice_bias = s.choice_bias;
  a.n_group = s.n_group;
  a.topk_group = s.topk_group;
  a.group_top = s.group_top;
  a.masked_key = s.masked_key;
  for (const auto* ws : {&s.gate, &s.up, &s.down})
    for (WeightId w : *ws) uses_[w] |= kLinearUse;
  for (WeightId w : {s.shared_gate, s.shared_up, s.shared_down})
    if (w != kNoWeight) uses_[w] |= kLinearUse;
  if (s.shared_expert_gate != kNoWeight) uses_[s.shared_expert_gate] |= kRouterUse;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x, router_logits}, width(x), std::move(u));
}

ValueId GraphBuilder::rope(ValueId x, const RopeWeights& tables, int32_t n_heads, int32_t head_dim,
                           int32_t rotary_dim, float scale) {
  fb::RopeAttrsT a;
  a.scale = scale;
  a.inv_freq = tables.inv_freq;
  a.long_inv_freq = tables.long_inv_freq;
  a.long_from = tables.long_inv_freq != kNoWeight ? tables.long_from : 0;
  a.n_heads = n_heads;
  a.head_dim = head_dim;
  a.rotary_dim = rotary_dim;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x, positions_}, width(x), std::move(u));
}

ValueId GraphBuilder::attend(ValueId q, ValueId k, ValueId v, const AttendSpec& s) {
  fb::AttendAttrsT a;
  a.cache_id = s.cache_id;
  a.scale = s.scale;
  a.softcap = s.softcap;
  a.n_heads = s.n_heads;
  a.n_kv_heads = s.n_kv_heads;
  a.head_dim = s.head_dim;
  a.v_head_dim = s.head_dim;
  a.writes_cache = s.writes_cache;
  a.sinks = s.sinks;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  std::vector<int32_t> in = s.writes_cache ? std::vector<int32_t>{q, k, v, positions_} : std::vector<int32_t>{q, positions_};
  return push(std::move(in), s.n_heads * s.head_dim, std::move(u));
}

ValueId GraphBuilder::add(ValueId a, ValueId b) {
  fb::OpAttrsUnion u;
  u.Set(fb::AddAttrsT{});
  return push({a, b}, width(a), std::move(u));
}

ValueId GraphBuilder::mul(ValueId a, ValueId b) {
  fb::OpAttrsUnion u;
  u.Set(fb::MulAttrsT{});
  return push({a, b}, width(a), std::move(u));
}

ValueId GraphBuilder::scale(ValueId x, float s) {
  fb::ScaleAttrsT a;
  a.scale = s;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, width(x), std::move(u));
}

ValueId GraphBuilder::act(ValueId x, fb::Activation act) {
  fb::ActAttrsT a;
  a.activation = act;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, width(x), std::move(u));
}

ValueId GraphBuilder::act_mul(ValueId gate, ValueId up, fb::Activation act) {
  fb::ActAttrsT a;
  a.activation = act;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({gate, up}, width(gate), std::move(u));
}

ValueId GraphBuilder::softcap(ValueId x, float cap) {
  fb::SoftcapAttrsT a;
  a.cap = cap;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, width(x), std::move(u));
}

ValueId GraphBuilder::slice(ValueId x, int32_t begin, int32_t width) {
  fb::SliceAttrsT a;
  a.begin = begin;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, width, std::move(u));
}

ValueId GraphBuilder::concat(ValueId a, ValueId b, int32_t groups) {
  fb::ConcatAttrsT c;
  c.groups = groups;
  fb::OpAttrsUnion u;
  u.Set(std::move(c));
  return push({a, b}, width(a) + width(b), std::move(u));
}

ValueId GraphBuilder::xielu(ValueId x, float alpha_p, float alpha_n, float beta, float eps) {
  fb::XieluAttrsT a;
  a.alpha_p = alpha_p;
  a.alpha_n = alpha_n;
  a.beta = beta;
  a.eps = eps;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, width(x), std::move(u));
}

ValueId GraphBuilder::head_linear(ValueId x, WeightId weight, int32_t groups, int32_t in_stride) {
  uses_[weight] |= kRouterUse;  // float storage whatever --qlinear says (the op reads no other)
  fb::HeadLinearAttrsT a;
  a.weight = weight;
  a.groups = groups;
  a.in_stride = in_stride == weight_shape(weight)[1] ? 0 : in_stride;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, static_cast<int32_t>(weight_shape(weight)[0]), std::move(u));
}

ValueId GraphBuilder::stream_mix(ValueId x, ValueId coefs, int32_t stream_width) {
  fb::StreamMixAttrsT a;
  a.width = stream_width;
  const int32_t n_in = width(x) / stream_width, n_out = width(coefs) / n_in;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x, coefs}, n_out * stream_width, std::move(u));
}

ValueId GraphBuilder::stream_mix_const(ValueId x, WeightId coefs, int32_t stream_width, int32_t n_out) {
  fb::StreamMixAttrsT a;
  a.width = stream_width;
  a.coefs = coefs;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, n_out * stream_width, std::move(u));
}

ValueId GraphBuilder::rms_match(ValueId x, ValueId ref, float eps, int32_t dim) {
  fb::RmsMatchAttrsT a;
  a.eps = eps;
  a.dim = dim;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x, ref}, width(x), std::move(u));
}

ValueId GraphBuilder::embedding_overlay(ValueId x, WeightId table, int32_t first_id) {
  fb::EmbeddingOverlayAttrsT a;
  a.table = table;
  a.first_id = first_id;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x, ids_}, width(x), std::move(u));
}

ValueId GraphBuilder::gaussian_top_k(ValueId x, float multiplier) {
  fb::GaussianTopKAttrsT a;
  a.multiplier = multiplier;
  fb::OpAttrsUnion u;
  u.Set(std::move(a));
  return push({x}, width(x), std::move(u));
}

}  // namespace og::exporter
