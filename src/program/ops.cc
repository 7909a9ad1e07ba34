#include "program/ops.h"

#include <array>
#include <cmath>

namespace og::program {

int64_t OpCheck::rows_of(int32_t t) const {
  if (!has_tensor(t) || tensor(t).shape()->size() != 2) return -1;
  return tensor(t).shape()->Get(0);
}

Status OpCheck::arity(size_t lo, size_t hi) const {
  if (in.size() < lo || in.size() > hi) return bad_input("op {}: {} inputs, expected {}..{}", i, in.size(), lo, hi);
  return Status::ok();
}

Status OpCheck::shape(int32_t t, std::vector<int64_t> want) const {
  if (!has_tensor(t)) return bad_input("op {}: weight index {} out of range", i, t);
  const fb::Tensor& w = tensor(t);
  std::vector<int64_t> got(w.shape()->begin(), w.shape()->end());
  if (got != want)
    return bad_input("op {}: weight '{}' has {} dims, shape mismatch with the op's inputs", i,
                     w.name() ? w.name()->str() : "?", got.size());
  return Status::ok();
}

namespace {

using Uses = std::vector<TensorUse>;

void use(Uses& out, int32_t t, TensorRead read) {
  if (t >= 0) out.push_back({t, read});
}

void no_tensors(const fb::Op&, Uses&) {}

// --- embedding: out[t] = scale * table[ids[t]] (remap_ids read as remap_to) ---------------
void embedding_tensors(const fb::Op& op, Uses& out) {
  use(out, op.attrs_as_EmbeddingAttrs()->table(), TensorRead::kMatrix);
}
Status embedding_check(OpCheck& c) {
  auto a = c.op.attrs_as_EmbeddingAttrs();
  const int32_t t = a->table();
  const int64_t rows = c.rows_of(t);
  if (rows < 0) return bad_input("op {} (embedding): table {} is not a 2-D tensor", c.i, t);
  if (rows < 1) return bad_input("op {} (embedding): table has {} rows", c.i, rows);
  if (a->remap_to() < 0 || a->remap_to() >= c.program().vocab_size())
    return bad_input("op {} (embedding): remap_to {} outside the vocabulary", c.i, a->remap_to());
  if (c.in[0] == c.program().positions()) {  // a learned position table: a row for every position
    if (rows < c.program().max_ctx_len())
      return bad_input("op {} (embedding): a position table of {} rows for max_ctx_len {}", c.i, rows,
                       c.program().max_ctx_len());
    if (a->remap_ids() != nullptr && a->remap_ids()->size() > 0)
      return bad_input("op {} (embedding): a position table with remap_ids", c.i);
  } else if (c.in[0] != c.program().input_ids()) {
    return bad_input("op {} (embedding): input {} is neither input_ids nor positions", c.i, c.in[0]);
  }
  return c.shape(t, {rows, c.out_width()});
}

// --- rms_norm over groups of dim -----------------------------------------------------------
void rms_norm_tensors(const fb::Op& op, Uses& out) { use(out, op.attrs_as_RmsNormAttrs()->weight(), TensorRead::kF32); }
Status rms_norm_check(OpCheck& c) {
  auto a = c.op.attrs_as_RmsNormAttrs();
  const int32_t w = c.width(c.in[0]);
  if (a->dim() <= 0 || w % a->dim() != 0 || c.out_width() != w)
    return bad_input("op {} (rms_norm): dim {} does not divide width {}", c.i, a->dim(), w);
  if (!(a->eps() >= 0) || !std::isfinite(a->eps())) return bad_input("op {} (rms_norm): eps {} is not a finite number >= 0", c.i, a->eps());
  return a->weight() >= 0 ? c.shape(a->weight(), {a->dim()}) : Status::ok();
}

// --- layer_norm over groups of dim: optional f32 weight and bias [dim] ----------------------
void layer_norm_tensors(const fb::Op& op, Uses& out) {
  use(out, op.attrs_as_LayerNormAttrs()->weight(), TensorRead::kF32);
  use(out, op.attrs_as_LayerNormAttrs()->bias(), TensorRead::kF32);
}
Status layer_norm_check(OpCheck& c) {
  auto a = c.op.attrs_as_LayerNormAttrs();
  const int32_t w = c.width(c.in[0]);
  if (a->dim() <= 0 || w % a->dim() != 0 || c.out_width() != w)
    return bad_input("op {} (layer_norm): dim {} does not divide width {}", c.i, a->dim(), w);
  if (!(a->eps() >= 0) || !std::isfinite(a->eps()))
    return bad_input("op {} (layer_norm): eps {} is not a finite number >= 0", c.i, a->eps());
  // [dim], or [width]: one weight per group.
  auto per_dim_or_group = [&](int32_t t) {
    if (Status per_group = c.shape(t, {w}); per_group.is_ok()) return per_group;
    return c.shape(t, {a->dim()});
  };
  if (a->weight() >= 0) OG_TRY(per_dim_or_group(a->weight()));
  if (a->bias() >= 0) OG_TRY(per_dim_or_group(a->bias()));
  if (a->weight() >= 0 && a->bias() >= 0 && c.tensor(a->weight()).shape()->Get(0) != c.tensor(a->bias()).shape()->Get(0))
    return bad_input("op {} (layer_norm): weight and bias differ in length (one per dim or one per group, alike)", c.i);
  return Status::ok();
}

// --- linear: W [out, in] (any storage), optional f32 bias [out] ----------------------------
void linear_tensors(const fb::Op& op, Uses& out) {
  use(out, op.attrs_as_LinearAttrs()->weight(), TensorRead::kMatrix);
  use(out, op.attrs_as_LinearAttrs()->bias(), TensorRead::kF32);
}
Status linear_check(OpCheck& c) {
  auto a = c.op.attrs_as_LinearAttrs();
  OG_TRY(c.shape(a->weight(), {c.out_width(), c.width(c.in[0])}));
  const fb::Tensor& t = c.tensor(a->weight());
  if (a->int8_activations() && t.dtype() != fb::DType::Q8 && t.dtype() != fb::DType::Q4)
    return bad_input("op {} (linear): int8_activations needs a Q8 or Q4 weight, tensor {} is {}", c.i, a->weight(),
                     fb::EnumNameDType(t.dtype()));
  if (a->bf16_activations() && (t.dtype() != fb::DType::BF16 || t.row_block() == 0 || a->int8_activations()))
    return bad_input("op {} (linear): bf16_activations needs an interleaved BF16 weight, tensor {} is {}{}", c.i,
                     a->weight(), fb::EnumNameDType(t.dtype()), t.row_block() == 0 ? " (row-major)" : "");
  return a->bias() >= 0 ? c.shape(a->bias(), {c.out_width()}) : Status::ok();
}

// --- head_linear: a float matrix per group of columns, W [groups * out, in] -----------------
// Bound as a matrix; the check admits float storage only, interleaved only when each group is
// whole blocks of 16 rows (the exporter interleaves no other: interleave.cc).
void head_linear_tensors(const fb::Op& op, Uses& out) {
  use(out, op.attrs_as_HeadLinearAttrs()->weight(), TensorRead::kMatrix);
}
Status head_linear_check(OpCheck& c) {
  auto a = c.op.attrs_as_HeadLinearAttrs();
  const int32_t t = a->weight();
  const int64_t rows = c.rows_of(t), groups = a->groups();
  if (rows < 0) return bad_input("op {} (head_linear): weight {} is not a 2-D tensor", c.i, t);
  const int64_t in = c.tensor(t).shape()->Get(1), stride = a->in_stride() == 0 ? in : a->in_stride();
  if (groups < 1 || rows % groups != 0 || in < 1 || stride < in || c.out_width() != rows ||
      c.width(c.in[0]) != groups * stride)
    return bad_input("op {} (head_linear): weight [{}, {}] in {} groups of stride {} disagrees with widths {} -> {}", c.i,
                     rows, in, groups, a->in_stride(), c.width(c.in[0]), c.out_width());
  const fb::Tensor& w = c.tensor(t);
  if (w.dtype() != fb::DType::F32 && w.dtype() != fb::DType::BF16 && w.dtype() != fb::DType::F16)
    return bad_input("op {} (head_linear): weight {} is {}, not F32, BF16 or F16", c.i, t, fb::EnumNameDType(w.dtype()));
  if (w.row_block() != 0 && (rows / groups) % 16 != 0)
    return bad_input("op {} (head_linear): weight {} is interleaved but a group's {} rows are not whole blocks of 16", c.i,
                     t, rows / groups);
  return Status::ok();
}

// --- rope: inputs x and positions ----------------------------------------------------------
void rope_tensors(const fb::Op& op, Uses& out) {
  use(out, op.attrs_as_RopeAttrs()->inv_freq(), TensorRead::kF32);
  use(out, op.attrs_as_RopeAttrs()->long_inv_freq(), TensorRead::kF32);
}
Status rope_check(OpCheck& c) {
  auto a = c.op.attrs_as_RopeAttrs();
  const int32_t w = c.width(c.in[0]);
  if (a->head_dim() <= 0 || a->n_heads() <= 0 || a->rotary_dim() <= 0 || a->rotary_dim() % 2 != 0 ||
      a->rotary_dim() > a->head_dim() || int64_t{a->n_heads()} * a->head_dim() != w || c.out_width() != w)
    return bad_input("op {} (rope): heads/dims inconsistent with width {}", c.i, w);
  if (!std::isfinite(a->scale())) return bad_input("op {} (rope): scale is not finite", c.i);
  if (a->long_inv_freq() >= 0) {
    if (a->long_from() <= 0) return bad_input("op {} (rope): long_from {} is not positive", c.i, a->long_from());
    OG_TRY(c.shape(a->long_inv_freq(), {a->rotary_dim() / 2}));
  }
  return c.shape(a->inv_freq(), {a->rotary_dim() / 2});
}

// --- update_and_attend: q, k, v, positions (a writer) or q, positions (a KV-sharing reader) -
void attend_tensors(const fb::Op& op, Uses& out) { use(out, op.attrs_as_AttendAttrs()->sinks(), TensorRead::kF32); }
Status attend_check(OpCheck& c) {
  auto a = c.op.attrs_as_AttendAttrs();
  const CacheLayout& layout = c.layout();
  if (c.layer >= layout.n_layers) return bad_input("op {}: more update_and_attend ops than layers", c.i);
  const int32_t cache = a->cache_id();
  if (cache != layout.layer_to_cache[c.layer] || a->writes_cache() != layout.layer_writes_cache(c.layer))
    return bad_input("op {} (update_and_attend for layer {}): cache {} / writes {} disagree with the layout", c.i,
                     c.layer, cache, a->writes_cache());
  if (a->n_kv_heads() != layout.kv_heads[cache] || a->head_dim() != layout.head_dims[cache] ||
      a->v_head_dim() != a->head_dim() || a->n_heads() <= 0 || a->n_heads() % a->n_kv_heads() != 0 ||
      !(a->softcap() >= 0) || !std::isfinite(a->scale()))
    return bad_input("op {} (update_and_attend): geometry disagrees with cache {}", c.i, cache);
  const size_t n_in = a->writes_cache() ? 4 : 2;
  OG_TRY(c.arity(n_in, n_in));
  if (a->writes_cache() && layout.values_are_keys(cache) && c.in[1] != c.in[2])
    return bad_input("op {} (update_and_attend): cache {} keeps its v as its k, but k and v are different values", c.i,
                     cache);
  const int64_t heads = a->n_heads(), kv_heads = a->n_kv_heads();  // products may exceed int32
  if (c.width(c.in[0]) != heads * a->head_dim() || c.out_width() != heads * a->v_head_dim())
    return bad_input("op {} (update_and_attend): q/output widths disagree with heads", c.i);
  if (a->writes_cache() &&
      (c.width(c.in[1]) != kv_heads * a->head_dim() || c.width(c.in[2]) != kv_heads * a->v_head_dim()))
    return bad_input("op {} (update_and_attend): k/v widths disagree with kv heads", c.i);
  if (a->sinks() >= 0) OG_TRY(c.shape(a->sinks(), {heads}));
  ++c.layer;
  return Status::ok();
}

// --- elementwise: add, mul, scale, softcap, activation --------------------------------------
Status same_widths_check(OpCheck& c) {
  for (int32_t v : c.in)
    if (c.width(v) != c.out_width()) return bad_input("op {}: widths differ", c.i);
  return Status::ok();
}
Status act_check(OpCheck& c) {
  const fb::Activation act = c.op.attrs_as_ActAttrs()->activation();
  if (act > fb::Activation::MAX) return bad_input("op {}: unknown activation", c.i);
  // Its alpha and limit live in MoeAttrs only.
  if (act == fb::Activation::ClampedSwiglu) return bad_input("op {} (activation): ClampedSwiglu is a moe activation only", c.i);
  return same_widths_check(c);
}
Status softcap_check(OpCheck& c) {
  if (c.width(c.in[0]) != c.out_width() || !(c.op.attrs_as_SoftcapAttrs()->cap() > 0))
    return bad_input("op {} (softcap): needs a positive cap", c.i);
  return Status::ok();
}

// --- xielu: element-wise, finite coefficients ------------------------------------------------
Status xielu_check(OpCheck& c) {
  auto a = c.op.attrs_as_XieluAttrs();
  if (!std::isfinite(a->alpha_p()) || !std::isfinite(a->alpha_n()) || !std::isfinite(a->beta()) || !std::isfinite(a->eps()))
    return bad_input("op {} (xielu): coefficients alpha_p {}, alpha_n {}, beta {}, eps {} are not all finite", c.i,
                     a->alpha_p(), a->alpha_n(), a->beta(), a->eps());
  return same_widths_check(c);
}

// --- columns: slice, concat ----------------------------------------------------------------
Status slice_check(OpCheck& c) {
  const int32_t begin = c.op.attrs_as_SliceAttrs()->begin();
  if (begin < 0 || int64_t{begin} + c.out_width() > c.width(c.in[0]))
    return bad_input("op {} (slice): columns [{}, +{}) outside width {}", c.i, begin, c.out_width(), c.width(c.in[0]));
  return Status::ok();
}
Status concat_check(OpCheck& c) {
  if (int64_t{c.width(c.in[0])} + c.width(c.in[1]) != c.out_width())
    return bad_input("op {} (concat): output width {} is not {} + {}", c.i, c.out_width(), c.width(c.in[0]),
                     c.width(c.in[1]));
  const int32_t groups = c.op.attrs_as_ConcatAttrs()->groups();
  if (groups < 1 || c.width(c.in[0]) % groups != 0 || c.width(c.in[1]) % groups != 0)
    return bad_input("op {} (concat): {} groups do not divide the widths {} and {}", c.i, groups, c.width(c.in[0]),
                     c.width(c.in[1]));
  return Status::ok();
}

// --- stream_mix: constant coefficients (a tensor) or per-token ones (input 1) ---------------
void stream_mix_tensors(const fb::Op& op, Uses& out) {
  use(out, op.attrs_as_StreamMixAttrs()->coefs(), TensorRead::kF32);
}
Status stream_mix_check(OpCheck& c) {
  auto a = c.op.attrs_as_StreamMixAttrs();
  const bool constant = a->coefs() >= 0;
  OG_TRY(c.arity(constant ? 1 : 2, constant ? 1 : 2));
  const int32_t w = a->width(), w_in = c.width(c.in[0]), w_out = c.out_width();
  if (w <= 0 || w_in % w != 0 || w_out % w != 0)
    return bad_input("op {} (stream_mix): stream width {} does not divide input width {} and output width {}", c.i, w,
                     w_in, w_out);
  const int64_t n_coefs = int64_t{w_in / w} * (w_out / w);
  if (constant) return c.shape(a->coefs(), {n_coefs});
  if (c.width(c.in[1]) != n_coefs)
    return bad_input("op {} (stream_mix): {} coefficients per token for {} -> {} streams", c.i, c.width(c.in[1]),
                     w_in / w, w_out / w);
  return Status::ok();
}

// --- rms_match, gaussian_top_k ---------------------------------------------------------------
Status rms_match_check(OpCheck& c) {
  auto a = c.op.attrs_as_RmsMatchAttrs();
  const int32_t w0 = c.width(c.in[0]), w1 = c.width(c.in[1]);
  if (a->dim() <= 0 || w0 % a->dim() != 0 || w1 != a->dim() || c.out_width() != w0 || !(a->eps() > 0))
    return bad_input("op {} (rms_match): dim {} / eps {} inconsistent with widths {} and {}", c.i, a->dim(), a->eps(),
                     w0, w1);
  return Status::ok();
}
Status gaussian_top_k_check(OpCheck& c) {
  if (c.width(c.in[0]) != c.out_width() || !std::isfinite(c.op.attrs_as_GaussianTopKAttrs()->multiplier()))
    return bad_input("op {} (gaussian_top_k): needs equal widths and a finite multiplier", c.i);
  return Status::ok();
}

// --- embedding_overlay: x and the token ids ---------------------------------------------------
void overlay_tensors(const fb::Op& op, Uses& out) {
  use(out, op.attrs_as_EmbeddingOverlayAttrs()->table(), TensorRead::kRowMajor);
}
Status overlay_check(OpCheck& c) {
  auto a = c.op.attrs_as_EmbeddingOverlayAttrs();
  if (c.in[1] != c.program().input_ids()) return bad_input("op {} (embedding_overlay): input 1 must be the token ids", c.i);
  const int32_t t = a->table();
  const int64_t rows = c.rows_of(t);
  if (rows < 0) return bad_input("op {} (embedding_overlay): table {} is not a 2-D tensor", c.i, t);
  if (rows < 1 || a->first_id() < 0 || c.width(c.in[0]) != c.out_width())
    return bad_input("op {} (embedding_overlay): table of {} rows from id {} over width {}", c.i, rows, a->first_id(),
                     c.width(c.in[0]));
  return c.shape(t, {rows, c.out_width()});
}

// --- moe: x [T, H] and router logits [T, n_experts]; every expert of one geometry ----------
void moe_tensors(const fb::Op& op, Uses& out) {
  const fb::MoeAttrs& a = *op.attrs_as_MoeAttrs();
  for (const flatbuffers::Vector<int32_t>* ws : {a.gate(), a.up(), a.down()})
    if (ws != nullptr)
      for (int32_t w : *ws) use(out, w, TensorRead::kMatrix);
  for (int32_t w : {a.shared_gate(), a.shared_up(), a.shared_down()}) use(out, w, TensorRead::kMatrix);
  use(out, a.shared_expert_gate(), TensorRead::kRowMajor);
  for (int32_t w : {a.expert_scale(), a.gate_bias(), a.up_bias(), a.down_bias(), a.choice_bias()})
    use(out, w, TensorRead::kF32);
}
Status moe_check(OpCheck& c) {
  const fb::MoeAttrs& a = *c.op.attrs_as_MoeAttrs();
  const int32_t i = c.i;
  const int64_t H = c.width(c.in[0]);
  if (a.gate() == nullptr || a.up() == nullptr || a.down() == nullptr || a.gate()->size() == 0 ||
      a.up()->size() != a.gate()->size() || a.down()->size() != a.gate()->size())
    return bad_input("op {} (moe): gate, up and down must list the same number (>= 1) of experts", i);
  const int64_t E = a.gate()->size();
  if (c.width(c.in[1]) != E || c.out_width() != H)
    return bad_input("op {} (moe): router logits width {} for {} experts, output width {} for hidden {}", i,
                     c.width(c.in[1]), E, c.out_width(), H);
  if (a.top_k() < 1 || a.top_k() > E || a.top_k() > 64 || !std::isfinite(a.routed_scale()) ||
      a.scoring() > fb::RouterScoring::MAX || a.activation() > fb::Activation::MAX)
    return bad_input("op {} (moe): top_k {} of {} experts (at most 64), routed_scale {}, scoring or activation "
                     "out of range", i, a.top_k(), E, a.routed_scale());
  const int64_t I = c.rows_of(a.gate()->Get(0));
  if (I < 1) return bad_input("op {} (moe): expert 0's gate is not a matrix", i);
  for (flatbuffers::uoffset_t e = 0; e < a.gate()->size(); ++e) {
    OG_TRY(c.shape(a.gate()->Get(e), {I, H}));
    OG_TRY(c.shape(a.up()->Get(e), {I, H}));
    OG_TRY(c.shape(a.down()->Get(e), {H, I}));
  }
  const bool shared = a.shared_gate() >= 0 || a.shared_up() >= 0 || a.shared_down() >= 0;
  if (shared) {
    const int64_t Is = c.rows_of(a.shared_gate());
    if (Is < 1) return bad_input("op {} (moe): the shared expert needs gate, up and down matrices", i);
    OG_TRY(c.shape(a.shared_gate(), {Is, H}));
    OG_TRY(c.shape(a.shared_up(), {Is, H}));
    OG_TRY(c.shape(a.shared_down(), {H, Is}));
  }
  if (a.shared_expert_gate() >= 0) {
    if (!shared) return bad_input("op {} (moe): shared_expert_gate without a shared expert", i);
    OG_TRY(c.shape(a.shared_expert_gate(), {1, H}));
  }
  if (a.expert_scale() >= 0) OG_TRY(c.shape(a.expert_scale(), {E}));
  if (a.gate_bias() >= 0) OG_TRY(c.shape(a.gate_bias(), {E, I}));
  if (a.up_bias() >= 0) OG_TRY(c.shape(a.up_bias(), {E, I}));
  if (a.down_bias() >= 0) OG_TRY(c.shape(a.down_bias(), {E, H}));
  // The keyed selection: the bias per expert and the groups (a group's score sums its
  // group_top best experts, so a group holds at least group_top unless there is one group).
  if (a.scoring() == fb::RouterScoring::TopKSoftmax && a.choice_bias() >= 0)
    return bad_input("op {} (moe): a choice_bias needs SigmoidTopK or SoftmaxTopK scoring", i);
  if (a.scoring() == fb::RouterScoring::TopKSoftmax && (a.n_group() != 1 || a.topk_group() != 1))
    return bad_input("op {} (moe): expert groups need SigmoidTopK or SoftmaxTopK scoring", i);
  if (a.choice_bias() >= 0) OG_TRY(c.shape(a.choice_bias(), {E}));
  if (a.n_group() < 1 || E % a.n_group() != 0 || a.topk_group() < 1 || a.topk_group() > a.n_group() ||
      (a.n_group() > 1 && (a.group_top() < 1 || E / a.n_group() < a.group_top())))
    return bad_input("op {} (moe): {} experts in n_group {} groups (each of at least group_top = {} when several), "
                     "topk_group {}",
                     i, E, a.n_group(), a.group_top(), a.topk_group());
  if (std::isnan(a.masked_key()) || a.masked_key() == INFINITY)
    return bad_input("op {} (moe): masked_key {} is not a number below +inf", i, a.masked_key());
  if (a.activation() == fb::Activation::ClampedSwiglu &&
      !(std::isfinite(a.swiglu_alpha()) && std::isfinite(a.swiglu_limit()) && a.swiglu_limit() > 0))
    return bad_input("op {} (moe): ClampedSwiglu needs a finite swiglu_alpha ({}) and a finite swiglu_limit > 0 ({})",
                     i, a.swiglu_alpha(), a.swiglu_limit());
  return Status::ok();
}

using A = fb::OpAttrs;
// In program.fbs's union order; op_specs_are_complete below holds it to the union.
constexpr OpSpec kOps[] = {
    {A::EmbeddingAttrs, "embedding", 1, 1, 0, embedding_tensors, embedding_check},
    {A::RmsNormAttrs, "rms_norm", 1, 1, kNoIntInput, rms_norm_tensors, rms_norm_check},
    {A::LinearAttrs, "linear", 1, 1, kNoIntInput, linear_tensors, linear_check},
    {A::RopeAttrs, "rope", 2, 2, 1, rope_tensors, rope_check},
    {A::AttendAttrs, "update_and_attend", 2, 4, kLastIntInput, attend_tensors, attend_check},
    {A::AddAttrs, "add", 2, 2, kNoIntInput, no_tensors, same_widths_check},
    {A::MulAttrs, "mul", 2, 2, kNoIntInput, no_tensors, same_widths_check},
    {A::ScaleAttrs, "scale", 1, 1, kNoIntInput, no_tensors, same_widths_check},
    {A::ActAttrs, "activation", 1, 2, kNoIntInput, no_tensors, act_check},  // act(x) or act(x) * y
    {A::SoftcapAttrs, "softcap", 1, 1, kNoIntInput, no_tensors, softcap_check},
    {A::SliceAttrs, "slice", 1, 1, kNoIntInput, no_tensors, slice_check},
    {A::StreamMixAttrs, "stream_mix", 1, 2, kNoIntInput, stream_mix_tensors, stream_mix_check},
    {A::ConcatAttrs, "concat", 2, 2, kNoIntInput, no_tensors, concat_check},
    {A::RmsMatchAttrs, "rms_match", 2, 2, kNoIntInput, no_tensors, rms_match_check},
    {A::GaussianTopKAttrs, "gaussian_top_k", 1, 1, kNoIntInput, no_tensors, gaussian_top_k_check},
    {A::EmbeddingOverlayAttrs, "embedding_overlay", 2, 2, 1, overlay_tensors, overlay_check},
    {A::MoeAttrs, "moe", 2, 2, kNoIntInput, moe_tensors, moe_check},
    {A::LayerNormAttrs, "layer_norm", 1, 1, kNoIntInput, layer_norm_tensors, layer_norm_check},
    {A::HeadLinearAttrs, "head_linear", 1, 1, kNoIntInput, head_linear_tensors, head_linear_check},
    {A::XieluAttrs, "xielu", 1, 1, kNoIntInput, no_tensors, xielu_check},
};

constexpr bool op_specs_are_complete() {
  if (std::size(kOps) != static_cast<size_t>(A::MAX)) return false;
  for (size_t k = 0; k < std::size(kOps); ++k)
    if (static_cast<size_t>(kOps[k].attrs) != k + 1) return false;
  return true;
}
static_assert(op_specs_are_complete(), "one OpSpec per program.fbs OpAttrs member, in the union's order");

}  // namespace

std::span<const OpSpec> op_specs() { return kOps; }

const OpSpec* op_spec(fb::OpAttrs kind) {
  const auto k = static_cast<size_t>(kind);
  return k >= 1 && k <= std::size(kOps) ? &kOps[k - 1] : nullptr;
}

const char* op_name(fb::OpAttrs kind) {
  const OpSpec* s = op_spec(kind);
  return s != nullptr ? s->name : "unknown";
}

std::vector<TensorUse> op_tensors(const fb::Op& op) {
  std::vector<TensorUse> out;
  const OpSpec* s = op_spec(op.attrs_type());
  if (s != nullptr && op.attrs() != nullptr) s->tensors(op, out);
  return out;
}

}  // namespace og::program
