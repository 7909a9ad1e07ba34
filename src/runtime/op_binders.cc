#include "runtime/op_binders.h"

#include <array>

#include "program/ops.h"

namespace og::runtime {

static_assert(program::kRowBlock == kernels::kRowBlock, "program.fbs and kernels.h name one interleaved layout");

kernels::Matrix BindContext::matrix(int32_t t) const {
  const fb::Tensor* w = file.program().tensors()->Get(static_cast<flatbuffers::uoffset_t>(t));
  kernels::Matrix m;
  m.data = file.tensor_data(t);
  m.type = program::storage_type_of(w->dtype()).value_or(StorageType::kF32);  // the validator admits no I32 weight
  m.rows = w->shape()->Get(0);
  m.cols = w->shape()->size() > 1 ? w->shape()->Get(1) : 1;
  if (program::is_quantized(w->dtype())) {  // the validator checked group_size and scales
    m.scales = reinterpret_cast<const uint16_t*>(file.tensor_data(w->scales()));
    m.group_size = w->group_size();
  }
  // Float matrices may be interleaved too; the validator lets only TensorRead::kMatrix
  // readers (program/ops.h) see an interleaved tensor, never f32() below.
  m.row_block = w->row_block();
  return m;
}

const float* BindContext::f32(int32_t t) const {
  return t < 0 ? nullptr : reinterpret_cast<const float*>(file.tensor_data(t));
}

namespace {

kernels::Activation activation(fb::Activation a) {
  switch (a) {
    case fb::Activation::GeluTanh: return kernels::Activation::kGeluTanh;
    case fb::Activation::Tanh: return kernels::Activation::kTanh;
    case fb::Activation::Gelu: return kernels::Activation::kGelu;
    case fb::Activation::Relu2: return kernels::Activation::kRelu2;
    default: return kernels::Activation::kSilu;
  }
}

Status bind_embedding(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  auto a = op.attrs_as_EmbeddingAttrs();
  b.kind = OpKind::kEmbedding;
  b.matrix = ctx.matrix(a->table());
  b.scalar = a->scale();
  if (a->remap_ids())
    for (int32_t id : *a->remap_ids()) b.remap_ids.push_back(id);
  b.remap_to = a->remap_to();
  return Status::ok();
}

Status bind_rms_norm(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  auto a = op.attrs_as_RmsNormAttrs();
  b.kind = OpKind::kRmsNorm;
  b.vec = ctx.f32(a->weight());
  b.eps = a->eps();
  b.dim = a->dim();
  return Status::ok();
}

Status bind_layer_norm(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  auto a = op.attrs_as_LayerNormAttrs();
  b.kind = OpKind::kLayerNorm;
  b.vec = ctx.f32(a->weight());
  b.vec2 = ctx.f32(a->bias());
  b.eps = a->eps();
  b.dim = a->dim();
  // Per-group weights: [width] rather than [dim] (the validator admits only these two).
  const int32_t params = a->weight() >= 0 ? a->weight() : a->bias();
  if (params >= 0) {
    const fb::Tensor* t = ctx.file.program().tensors()->Get(static_cast<flatbuffers::uoffset_t>(params));
    b.norm_groups = static_cast<int32_t>(t->shape()->Get(0) / a->dim());
  }
  return Status::ok();
}

Status bind_linear(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  auto a = op.attrs_as_LinearAttrs();
  b.kind = OpKind::kLinear;
  b.matrix = ctx.matrix(a->weight());
  b.vec = ctx.f32(a->bias());
  // The math mode decides bf16 activations (MathMode); int8 ones belong to the weights.
  const bool bf16_weight = b.matrix.type == StorageType::kBF16 && b.matrix.row_block != 0;
  const bool bf16_x = ctx.math == MathMode::kFast     ? bf16_weight && !a->int8_activations()
                      : ctx.math == MathMode::kExact ? false
                                                     : a->bf16_activations();
  b.xquant = a->int8_activations() ? kernels::XQuant::kInt8 : bf16_x ? kernels::XQuant::kBF16 : kernels::XQuant::kNone;
  return Status::ok();
}

Status bind_rope(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  auto a = op.attrs_as_RopeAttrs();
  if (a->head_dim() > kernels::kMaxHeadDim) return unsupported("rope head_dim {} exceeds {}", a->head_dim(), kernels::kMaxHeadDim);
  b.kind = OpKind::kRope;
  b.rope = {.n_heads = a->n_heads(), .head_dim = a->head_dim(), .rotary_dim = a->rotary_dim(),
            .inv_freq = ctx.f32(a->inv_freq()), .scale = a->scale(),
            .long_inv_freq = a->long_inv_freq() >= 0 ? ctx.f32(a->long_inv_freq()) : nullptr,
            .long_from = a->long_from()};
  return Status::ok();
}

Status bind_attend(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  auto a = op.attrs_as_AttendAttrs();
  if (a->head_dim() > kernels::kMaxHeadDim)
    return unsupported("attention head_dim {} exceeds {}", a->head_dim(), kernels::kMaxHeadDim);
  b.kind = OpKind::kAttend;
  b.cache_id = a->cache_id();
  b.writes_cache = a->writes_cache();
  b.attend = {.scale = a->scale(), .softcap = a->softcap(), .window = ctx.layout.windows[a->cache_id()],
              .n_heads = a->n_heads(), .n_kv_heads = a->n_kv_heads(), .head_dim = a->head_dim(),
              .sinks = ctx.f32(a->sinks())};
  return Status::ok();
}

Status bind_head_linear(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  auto a = op.attrs_as_HeadLinearAttrs();
  b.kind = OpKind::kHeadLinear;
  b.matrix = ctx.matrix(a->weight());
  b.norm_groups = a->groups();
  b.dim = a->in_stride() == 0 ? static_cast<int32_t>(b.matrix.cols) : a->in_stride();
  return Status::ok();
}

Status bind_xielu(const fb::Op& op, const BindContext&, BoundOp& b) {
  auto a = op.attrs_as_XieluAttrs();
  b.kind = OpKind::kXielu;
  b.xielu = {.alpha_p = a->alpha_p(), .alpha_n = a->alpha_n(), .beta = a->beta(), .eps = a->eps()};
  return Status::ok();
}

Status bind_concat(const fb::Op& op, const BindContext&, BoundOp& b) {
  b.kind = OpKind::kConcat;
  b.norm_groups = op.attrs_as_ConcatAttrs()->groups();
  return Status::ok();
}

template <OpKind kKind>
Status bind_plain(const fb::Op&, const BindContext&, BoundOp& b) {
  b.kind = kKind;
  return Status::ok();
}

Status bind_scale(const fb::Op& op, const BindContext&, BoundOp& b) {
  b.kind = OpKind::kScale;
  b.scalar = op.attrs_as_ScaleAttrs()->scale();
  return Status::ok();
}

Status bind_act(const fb::Op& op, const BindContext&, BoundOp& b) {
  b.kind = op.inputs()->size() == 2 ? OpKind::kActMul : OpKind::kAct;
  b.act = activation(op.attrs_as_ActAttrs()->activation());
  return Status::ok();
}

Status bind_softcap(const fb::Op& op, const BindContext&, BoundOp& b) {
  b.kind = OpKind::kSoftcap;
  b.scalar = op.attrs_as_SoftcapAttrs()->cap();
  return Status::ok();
}

Status bind_slice(const fb::Op& op, const BindContext&, BoundOp& b) {
  b.kind = OpKind::kSlice;
  b.dim = op.attrs_as_SliceAttrs()->begin();
  return Status::ok();
}

Status bind_stream_mix(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  auto a = op.attrs_as_StreamMixAttrs();
  b.kind = OpKind::kStreamMix;
  b.vec = ctx.f32(a->coefs());
  b.mix = {.width = a->width(),
           .n_in = ctx.widths[static_cast<size_t>(b.in[0])] / a->width(),
           .n_out = b.width / a->width(),
           .coefs_per_token = a->coefs() < 0};
  return Status::ok();
}

Status bind_rms_match(const fb::Op& op, const BindContext&, BoundOp& b) {
  b.kind = OpKind::kRmsMatch;
  b.eps = op.attrs_as_RmsMatchAttrs()->eps();
  b.dim = op.attrs_as_RmsMatchAttrs()->dim();
  return Status::ok();
}

Status bind_gaussian_top_k(const fb::Op& op, const BindContext&, BoundOp& b) {
  b.kind = OpKind::kGaussianTopK;
  b.scalar = op.attrs_as_GaussianTopKAttrs()->multiplier();
  return Status::ok();
}

Status bind_overlay(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  b.kind = OpKind::kEmbeddingOverlay;
  b.matrix = ctx.matrix(op.attrs_as_EmbeddingOverlayAttrs()->table());
  b.dim = op.attrs_as_EmbeddingOverlayAttrs()->first_id();
  return Status::ok();
}

Status bind_moe(const fb::Op& op, const BindContext& ctx, BoundOp& b) {
  auto a = op.attrs_as_MoeAttrs();
  b.kind = OpKind::kMoe;
  auto m = std::make_unique<MoeBinding>();
  for (uint32_t e = 0; e < a->gate()->size(); ++e) {
    m->gate.push_back(ctx.matrix(a->gate()->Get(e)));
    m->up.push_back(ctx.matrix(a->up()->Get(e)));
    m->down.push_back(ctx.matrix(a->down()->Get(e)));
  }
  kernels::MoeParams& mp = m->params;
  mp.n_experts = static_cast<int64_t>(m->gate.size());
  mp.top_k = a->top_k();
  switch (a->scoring()) {
    case fb::RouterScoring::TopKSoftmax: mp.scoring = kernels::RouterScoring::kTopKSoftmax; break;
    case fb::RouterScoring::SigmoidTopK: mp.scoring = kernels::RouterScoring::kSigmoidTopK; break;
    default: mp.scoring = kernels::RouterScoring::kSoftmaxTopK; break;
  }
  mp.choice_bias = ctx.f32(a->choice_bias());
  mp.n_group = a->n_group();
  mp.topk_group = a->topk_group();
  mp.group_top = a->group_top();
  mp.masked_key = a->masked_key();
  mp.normalize_top_k = a->normalize_top_k();
  mp.routed_scale = a->routed_scale();
  mp.act = activation(a->activation());
  mp.clamped = a->activation() == fb::Activation::ClampedSwiglu;
  mp.swiglu = {.alpha = a->swiglu_alpha(), .limit = a->swiglu_limit()};
  mp.expert_scale = ctx.f32(a->expert_scale());
  mp.gate_bias = ctx.f32(a->gate_bias());
  mp.up_bias = ctx.f32(a->up_bias());
  mp.down_bias = ctx.f32(a->down_bias());
  mp.gate = m->gate.data();
  mp.up = m->up.data();
  mp.down = m->down.data();
  mp.has_shared = a->shared_gate() >= 0;
  if (mp.has_shared) {
    mp.shared_gate = ctx.matrix(a->shared_gate());
    mp.shared_up = ctx.matrix(a->shared_up());
    mp.shared_down = ctx.matrix(a->shared_down());
  }
  mp.has_shared_expert_gate = a->shared_expert_gate() >= 0;
  if (mp.has_shared_expert_gate) mp.shared_expert_gate = ctx.matrix(a->shared_expert_gate());
  mp.xquant = a->int8_activations() ? kernels::XQuant::kInt8 : kernels::XQuant::kNone;
  b.moe = static_cast<int32_t>(ctx.moe.size());
  ctx.moe.push_back(std::move(m));
  return Status::ok();
}

using A = fb::OpAttrs;
struct Entry {
  A attrs;
  OpBinder bind;
};
constexpr Entry kBinders[] = {
    {A::EmbeddingAttrs, bind_embedding},
    {A::RmsNormAttrs, bind_rms_norm},
    {A::LinearAttrs, bind_linear},
    {A::RopeAttrs, bind_rope},
    {A::AttendAttrs, bind_attend},
    {A::AddAttrs, bind_plain<OpKind::kAdd>},
    {A::MulAttrs, bind_plain<OpKind::kMul>},
    {A::ScaleAttrs, bind_scale},
    {A::ActAttrs, bind_act},
    {A::SoftcapAttrs, bind_softcap},
    {A::SliceAttrs, bind_slice},
    {A::StreamMixAttrs, bind_stream_mix},
    {A::ConcatAttrs, bind_concat},
    {A::RmsMatchAttrs, bind_rms_match},
    {A::GaussianTopKAttrs, bind_gaussian_top_k},
    {A::EmbeddingOverlayAttrs, bind_overlay},
    {A::MoeAttrs, bind_moe},
    {A::LayerNormAttrs, bind_layer_norm},
    {A::HeadLinearAttrs, bind_head_linear},
    {A::XieluAttrs, bind_xielu},
};

}  // namespace

OpBinder op_binder(fb::OpAttrs kind) {
  for (const Entry& e : kBinders)
    if (e.attrs == kind) return e.bind;
  return nullptr;
}

}  // namespace og::runtime
