#include "program/validator.h"

#include <cmath>

#include "program/program_file.h"

namespace og::program {
namespace {

template <typename T>
std::vector<int32_t> to_vec(const flatbuffers::Vector<T>* v) {
  std::vector<int32_t> out;
  if (v != nullptr)
    for (auto x : *v) out.push_back(static_cast<int32_t>(x));
  return out;
}

class Checker {
 public:
  Checker(const fb::Program& p, uint64_t data_size) : p_(p), data_size_(data_size) {}

  Status run() {
    if (!p_.layout() || !p_.tensors() || !p_.values() || !p_.ops()) return bad_input("program header is incomplete");
    if (p_.vocab_size() <= 0) return bad_input("program: vocab_size {} is not positive", p_.vocab_size());
    if (p_.max_ctx_len() <= 0) return bad_input("program: max_ctx_len {} is not positive", p_.max_ctx_len());
    if (p_.prefill_chunk_size() < 1 || p_.prefill_chunk_size() > p_.max_ctx_len())
      return bad_input("program: prefill_chunk_size {} is outside [1, max_ctx_len {}]", p_.prefill_chunk_size(),
                       p_.max_ctx_len());
    layout_ = layout_from_fb(*p_.layout());
    OG_TRY(layout_.validate());
    OG_TRY(check_tensors());
    OG_TRY(check_values());
    OG_TRY(check_ops());
    return Status::ok();
  }

 private:
  Status check_tensors() {
    for (uint32_t i = 0; i < p_.tensors()->size(); ++i) {
      const fb::Tensor* t = p_.tensors()->Get(i);
      const char* name = t->name() ? t->name()->c_str() : "?";
      if (t->dtype() > fb::DType::MAX) return bad_input("tensor {} '{}': unknown dtype", i, name);
      if (t->shape() == nullptr) return bad_input("tensor {} '{}': no shape", i, name);
      // The verifier aligns a vector's length, not its 8-byte elements (the header is 8-aligned).
      if (reinterpret_cast<uintptr_t>(t->shape()->data()) % alignof(int64_t) != 0)
        return bad_input("tensor {} '{}': shape is misaligned", i, name);
      OG_TRY(check_row_block(i, *t));
      // Elements the bytes hold: the shape's, with an interleaved matrix's rows padded.
      uint64_t numel = 1;
      for (uint32_t k = 0; k < t->shape()->size(); ++k) {
        const int64_t d = t->shape()->Get(k);
        if (d < 0 || d > (1ll << 40) ||
            __builtin_mul_overflow(numel, static_cast<uint64_t>(k == 0 ? stored_rows(d, t->row_block()) : d), &numel))
          return bad_input("tensor {} '{}': invalid shape", i, name);
      }
      const std::optional<uint64_t> n = storage_bytes(t->dtype(), numel);
      if (!n) return bad_input("tensor {} '{}': {} elements cannot be stored as {}", i, name, numel, EnumNameDType(t->dtype()));
      if (*n != t->nbytes() && t->row_block() != 0)
        return bad_input("tensor {} '{}': {} bytes for an interleaved shape needing {} (its {} rows padded to {})", i, name,
                         t->nbytes(), *n, t->shape()->Get(0), stored_rows(t->shape()->Get(0), t->row_block()));
      if (*n != t->nbytes()) return bad_input("tensor {} '{}': {} bytes for a shape needing {}", i, name, t->nbytes(), *n);
      OG_TRY(check_quantization(i, *t));
      if (t->offset() % kTensorAlignment != 0 || t->offset() > data_size_ || t->nbytes() > data_size_ - t->offset())
        return bad_input("tensor {} '{}': bytes [{}, +{}) outside the data segment ({} bytes)", i, name, t->offset(),
                         t->nbytes(), data_size_);
    }
    return Status::ok();
  }

  // row_block (program.fbs): 0 (row-major), or kRowBlock on an F32 / BF16 / F16 / Q4 / Q8
  // matrix (interleaved). Checked before the size, which it decides.
  Status check_row_block(uint32_t i, const fb::Tensor& t) {
    const char* name = t.name() ? t.name()->c_str() : "?";
    if (t.row_block() == 0) return Status::ok();
    if (t.row_block() != kRowBlock)
      return bad_input("tensor {} '{}': row_block {}, expected 0 (row-major) or {} (interleaved)", i, name, t.row_block(),
                       kRowBlock);
    if (t.dtype() == fb::DType::I32 || t.dtype() > fb::DType::MAX)
      return bad_input("tensor {} '{}': row_block {} on {} storage; only F32, BF16, F16, Q4 and Q8 are interleaved", i,
                       name, t.row_block(), EnumNameDType(t.dtype()));
    if (t.shape()->size() != 2) return bad_input("tensor {} '{}': interleaved but not a matrix", i, name);
    // A float matrix's 32-bit lane holds P = 4 / element bytes values of one row (kernels.h).
    const int64_t per_lane = interleaved_lane_values(t.dtype());
    if (per_lane > 1 && t.shape()->Get(1) % per_lane != 0)
      return bad_input("tensor {} '{}': interleaved {} with {} columns, not a multiple of {} (values per 32-bit lane)", i,
                       name, EnumNameDType(t.dtype()), t.shape()->Get(1), per_lane);
    return Status::ok();
  }

  // A quantized tensor is 2-D, its rows split into whole groups (a multiple of 32, which
  // every SIMD width divides), with an F16 scales tensor of one scale per group.
  Status check_quantization(uint32_t i, const fb::Tensor& t) {
    const char* name = t.name() ? t.name()->c_str() : "?";
    if (!is_quantized(t.dtype())) {
      if (t.group_size() != 0 || t.scales() != -1) return bad_input("tensor {} '{}': group_size/scales on an unquantized tensor", i, name);
      return Status::ok();
    }
    const int32_t g = t.group_size();
    if (t.shape()->size() != 2 || g < 32 || g > 1024 || g % 32 != 0 || t.shape()->Get(1) % g != 0)
      return bad_input("tensor {} '{}': quantized with group_size {}, which must be a multiple of 32 dividing its columns", i,
                       name, g);
    const int32_t s = t.scales();
    if (s < 0 || s >= static_cast<int32_t>(p_.tensors()->size()) || s == static_cast<int32_t>(i))
      return bad_input("tensor {} '{}': scales index {} out of range", i, name, s);
    // Interleaved: one scale per stored row, the padding's included (its bytes in block order).
    const fb::Tensor* st = p_.tensors()->Get(s);
    if (st->dtype() != fb::DType::F16 || !st->shape() || st->shape()->size() != 2 ||
        st->shape()->Get(0) != stored_rows(t.shape()->Get(0), t.row_block()) || st->shape()->Get(1) != t.shape()->Get(1) / g)
      return t.row_block() == 0
                 ? bad_input("tensor {} '{}': scales tensor {} is not F16 [rows, cols / group_size]", i, name, s)
                 : bad_input("tensor {} '{}': scales tensor {} is not F16 [rows padded to {}, cols / group_size] = [{}, {}]",
                             i, name, s, t.row_block(), stored_rows(t.shape()->Get(0), t.row_block()),
                             t.shape()->Get(1) / g);
    return Status::ok();
  }

  Status check_values() {
    const int32_t nv = static_cast<int32_t>(p_.values()->size());
    for (int32_t id : {p_.input_ids(), p_.positions(), p_.logits()})
      if (id < 0 || id >= nv) return bad_input("program: graph input/output value {} out of range", id);
    for (int32_t i = 0; i < nv; ++i)
      if (p_.values()->Get(i)->width() <= 0) return bad_input("value {}: width is not positive", i);
    if (width(p_.input_ids()) != 1 || dtype(p_.input_ids()) != fb::DType::I32 || width(p_.positions()) != 1 ||
        dtype(p_.positions()) != fb::DType::I32)
      return bad_input("program: input_ids and positions must be int32 of width 1");
    if (width(p_.logits()) != p_.vocab_size() || dtype(p_.logits()) != fb::DType::F32)
      return bad_input("program: logits width {} differs from vocab_size {}", width(p_.logits()), p_.vocab_size());
    return Status::ok();
  }

  int32_t width(int32_t v) const { return p_.values()->Get(v)->width(); }
  fb::DType dtype(int32_t v) const { return p_.values()->Get(v)->dtype(); }

  // matrix_read: the op binds the tensor as a kernels::Matrix of linear / embedding / moe,
  // whose kernels read every matrix storage (Q8 / Q4, interleaved). Every other reader
  // (norms, biases, tables read by pointer) reads row-major floats only.
  Status need_tensor(int32_t op, int32_t t, std::vector<int64_t> shape, bool f32_only, bool matrix_read = false) {
    if (t < 0 || t >= static_cast<int32_t>(p_.tensors()->size()))
      return bad_input("op {}: weight index {} out of range", op, t);
    const fb::Tensor* w = p_.tensors()->Get(t);
    std::vector<int64_t> got(w->shape()->begin(), w->shape()->end());
    if (got != shape)
      return bad_input("op {}: weight '{}' has {} dims, shape mismatch with the op's inputs", op,
                       w->name() ? w->name()->str() : "?", got.size());
    if (f32_only && w->dtype() != fb::DType::F32)
      return bad_input("op {}: weight '{}' must be F32", op, w->name() ? w->name()->str() : "?");
    if (w->dtype() == fb::DType::I32) return bad_input("op {}: weight is I32", op);
    if (is_quantized(w->dtype()) && !matrix_read)
      return bad_input("op {}: weight '{}' is quantized; only linear, embedding and moe read quantized weights", op,
                       w->name() ? w->name()->str() : "?");
    if (w->row_block() != 0 && !matrix_read)
      return bad_input("op {} ({}): weight tensor {} '{}' is interleaved (row_block {}); only the matrices of linear, "
                       "embedding and moe may be", op, op_name(p_.ops()->Get(static_cast<flatbuffers::uoffset_t>(op))->attrs_type()),
                       t, w->name() ? w->name()->str() : "?", w->row_block());
    return Status::ok();
  }

  Status check_ops() {
    const int32_t nv = static_cast<int32_t>(p_.values()->size());
    std::vector<bool> defined(static_cast<size_t>(nv), false);
    defined[p_.input_ids()] = defined[p_.positions()] = true;
    int32_t layer = 0;
    for (int32_t i = 0; i < static_cast<int32_t>(p_.ops()->size()); ++i) {
      const fb::Op* op = p_.ops()->Get(i);
      std::vector<int32_t> in = to_vec(op->inputs());
      for (int32_t v : in)
        if (v < 0 || v >= nv || !defined[v]) return bad_input("op {} ({}): input value {} is undefined", i, op_name(op->attrs_type()), v);
      const int32_t out = op->output();
      if (out < 0 || out >= nv || defined[out])
        return bad_input("op {} ({}): output value {} is out of range or already defined", i, op_name(op->attrs_type()), out);
      for (size_t k = 0; k < in.size(); ++k) {
        bool int_ok = (op->attrs_type() == fb::OpAttrs::EmbeddingAttrs && k == 0) ||
                      (op->attrs_type() == fb::OpAttrs::RopeAttrs && k == 1) ||
                      (op->attrs_type() == fb::OpAttrs::EmbeddingOverlayAttrs && k == 1) ||
                      (op->attrs_type() == fb::OpAttrs::AttendAttrs && k + 1 == in.size());
        if ((dtype(in[k]) == fb::DType::I32) != int_ok)
          return bad_input("op {} ({}): input {} has the wrong dtype", i, op_name(op->attrs_type()), k);
      }
      if (dtype(out) != fb::DType::F32) return bad_input("op {}: output must be F32", i);
      OG_TRY(check_op(i, *op, in, out, layer));
      defined[out] = true;
    }
    if (layer != layout_.n_layers)
      return bad_input("program has {} update_and_attend ops for {} layers", layer, layout_.n_layers);
    if (!defined[p_.logits()]) return bad_input("program: logits value is never computed");
    return Status::ok();
  }

  Status arity(int32_t i, const std::vector<int32_t>& in, size_t lo, size_t hi) {
    if (in.size() < lo || in.size() > hi) return bad_input("op {}: {} inputs, expected {}..{}", i, in.size(), lo, hi);
    return Status::ok();
  }

  Status check_op(int32_t i, const fb::Op& op, const std::vector<int32_t>& in, int32_t out, int32_t& layer) {
    const int32_t wo = width(out);
    // The FlatBuffers verifier accepts a union type without its table; every case reads it.
    if (op.attrs_type() != fb::OpAttrs::NONE && op.attrs() == nullptr)
      return bad_input("op {} ({}): attributes are missing", i, op_name(op.attrs_type()));
    switch (op.attrs_type()) {
      case fb::OpAttrs::EmbeddingAttrs: {
        OG_TRY(arity(i, in, 1, 1));
        const int32_t t = op.attrs_as_EmbeddingAttrs()->table();
        if (t < 0 || t >= static_cast<int32_t>(p_.tensors()->size()) || p_.tensors()->Get(t)->shape()->size() != 2)
          return bad_input("op {} (embedding): table {} is not a 2-D tensor", i, t);
        const int64_t rows = p_.tensors()->Get(t)->shape()->Get(0);
        if (rows < 1) return bad_input("op {} (embedding): table has {} rows", i, rows);
        if (op.attrs_as_EmbeddingAttrs()->remap_to() < 0 || op.attrs_as_EmbeddingAttrs()->remap_to() >= p_.vocab_size())
          return bad_input("op {} (embedding): remap_to {} outside the vocabulary", i, op.attrs_as_EmbeddingAttrs()->remap_to());
        return need_tensor(i, t, {rows, wo}, false, true);
      }
      case fb::OpAttrs::RmsNormAttrs: {
        auto a = op.attrs_as_RmsNormAttrs();
        OG_TRY(arity(i, in, 1, 1));
        if (a->dim() <= 0 || width(in[0]) % a->dim() != 0 || wo != width(in[0]) || !(a->eps() >= 0))
          return bad_input("op {} (rms_norm): dim {} does not divide width {}", i, a->dim(), width(in[0]));
        if (a->weight() >= 0) return need_tensor(i, a->weight(), {a->dim()}, true);
        return Status::ok();
      }
      case fb::OpAttrs::LinearAttrs: {
        auto a = op.attrs_as_LinearAttrs();
        OG_TRY(arity(i, in, 1, 1));
        OG_TRY(need_tensor(i, a->weight(), {wo, width(in[0])}, false, true));
        if (a->int8_activations()) {
          const fb::DType dt = p_.tensors()->Get(static_cast<flatbuffers::uoffset_t>(a->weight()))->dtype();
          if (dt != fb::DType::Q8 && dt != fb::DType::Q4)
            return bad_input("op {} (linear): int8_activations needs a Q8 or Q4 weight, tensor {} is {}", i, a->weight(),
                             fb::EnumNameDType(dt));
        }
        if (a->bf16_activations()) {
          const fb::Tensor* t = p_.tensors()->Get(static_cast<flatbuffers::uoffset_t>(a->weight()));
          if (t->dtype() != fb::DType::BF16 || t->row_block() == 0 || a->int8_activations())
            return bad_input("op {} (linear): bf16_activations needs an interleaved BF16 weight, tensor {} is {}{}", i,
                             a->weight(), fb::EnumNameDType(t->dtype()), t->row_block() == 0 ? " (row-major)" : "");
        }
        if (a->bias() >= 0) return need_tensor(i, a->bias(), {wo}, true);
        return Status::ok();
      }
      case fb::OpAttrs::RopeAttrs: {
        auto a = op.attrs_as_RopeAttrs();
        OG_TRY(arity(i, in, 2, 2));
        if (a->head_dim() <= 0 || a->n_heads() <= 0 || a->rotary_dim() <= 0 || a->rotary_dim() % 2 != 0 ||
            a->rotary_dim() > a->head_dim() || int64_t{a->n_heads()} * a->head_dim() != width(in[0]) || wo != width(in[0]))
          return bad_input("op {} (rope): heads/dims inconsistent with width {}", i, width(in[0]));
        if (!std::isfinite(a->scale())) return bad_input("op {} (rope): scale is not finite", i);
        return need_tensor(i, a->inv_freq(), {a->rotary_dim() / 2}, true);
      }
      case fb::OpAttrs::AttendAttrs: {
        auto a = op.attrs_as_AttendAttrs();
        if (layer >= layout_.n_layers) return bad_input("op {}: more update_and_attend ops than layers", i);
        const int32_t c = a->cache_id();
        if (c != layout_.layer_to_cache[layer] || a->writes_cache() != layout_.layer_writes_cache(layer))
          return bad_input("op {} (update_and_attend for layer {}): cache {} / writes {} disagree with the layout", i,
                           layer, c, a->writes_cache());
        if (a->n_kv_heads() != layout_.kv_heads[c] || a->head_dim() != layout_.head_dims[c] ||
            a->v_head_dim() != a->head_dim() || a->n_heads() <= 0 || a->n_heads() % a->n_kv_heads() != 0 ||
            !(a->softcap() >= 0) || !std::isfinite(a->scale()))
          return bad_input("op {} (update_and_attend): geometry disagrees with cache {}", i, c);
        OG_TRY(arity(i, in, a->writes_cache() ? 4 : 2, a->writes_cache() ? 4 : 2));
        const int64_t heads = a->n_heads(), kv_heads = a->n_kv_heads();  // products may exceed int32
        if (width(in[0]) != heads * a->head_dim() || wo != heads * a->v_head_dim())
          return bad_input("op {} (update_and_attend): q/output widths disagree with heads", i);
        if (a->writes_cache() && (width(in[1]) != kv_heads * a->head_dim() ||
                                  width(in[2]) != kv_heads * a->v_head_dim()))
          return bad_input("op {} (update_and_attend): k/v widths disagree with kv heads", i);
        if (a->sinks() >= 0) { OG_TRY(need_tensor(i, a->sinks(), {heads}, true)); }
        ++layer;
        return Status::ok();
      }
      case fb::OpAttrs::AddAttrs:
      case fb::OpAttrs::MulAttrs:
        OG_TRY(arity(i, in, 2, 2));
        if (width(in[0]) != wo || width(in[1]) != wo) return bad_input("op {}: widths differ", i);
        return Status::ok();
      case fb::OpAttrs::ActAttrs:
        OG_TRY(arity(i, in, 1, 2));
        if (op.attrs_as_ActAttrs()->activation() > fb::Activation::MAX) return bad_input("op {}: unknown activation", i);
        // Its alpha and limit live in MoeAttrs only.
        if (op.attrs_as_ActAttrs()->activation() == fb::Activation::ClampedSwiglu)
          return bad_input("op {} (activation): ClampedSwiglu is a moe activation only", i);
        for (int32_t v : in)
          if (width(v) != wo) return bad_input("op {}: widths differ", i);
        return Status::ok();
      case fb::OpAttrs::ScaleAttrs:
        OG_TRY(arity(i, in, 1, 1));
        if (width(in[0]) != wo) return bad_input("op {}: widths differ", i);
        return Status::ok();
      case fb::OpAttrs::SoftcapAttrs:
        OG_TRY(arity(i, in, 1, 1));
        if (width(in[0]) != wo || !(op.attrs_as_SoftcapAttrs()->cap() > 0))
          return bad_input("op {} (softcap): needs a positive cap", i);
        return Status::ok();
      case fb::OpAttrs::SliceAttrs:
        OG_TRY(arity(i, in, 1, 1));
        if (op.attrs_as_SliceAttrs()->begin() < 0 ||
            int64_t{op.attrs_as_SliceAttrs()->begin()} + wo > width(in[0]))
          return bad_input("op {} (slice): columns [{}, +{}) outside width {}", i, op.attrs_as_SliceAttrs()->begin(), wo,
                           width(in[0]));
        return Status::ok();
      case fb::OpAttrs::StreamMixAttrs: {
        auto a = op.attrs_as_StreamMixAttrs();
        const bool constant = a->coefs() >= 0;
        OG_TRY(arity(i, in, constant ? 1 : 2, constant ? 1 : 2));
        const int32_t w = a->width();
        if (w <= 0 || width(in[0]) % w != 0 || wo % w != 0)
          return bad_input("op {} (stream_mix): stream width {} does not divide input width {} and output width {}", i,
                           w, width(in[0]), wo);
        const int64_t n_coefs = int64_t{width(in[0]) / w} * (wo / w);
        if (constant) return need_tensor(i, a->coefs(), {n_coefs}, true);
        if (width(in[1]) != n_coefs)
          return bad_input("op {} (stream_mix): {} coefficients per token for {} -> {} streams", i, width(in[1]),
                           width(in[0]) / w, wo / w);
        return Status::ok();
      }
      case fb::OpAttrs::ConcatAttrs:
        OG_TRY(arity(i, in, 2, 2));
        if (int64_t{width(in[0])} + width(in[1]) != wo)
          return bad_input("op {} (concat): output width {} is not {} + {}", i, wo, width(in[0]), width(in[1]));
        return Status::ok();
      case fb::OpAttrs::RmsMatchAttrs: {
        auto a = op.attrs_as_RmsMatchAttrs();
        OG_TRY(arity(i, in, 2, 2));
        if (a->dim() <= 0 || width(in[0]) % a->dim() != 0 || width(in[1]) != a->dim() || wo != width(in[0]) ||
            !(a->eps() > 0))
          return bad_input("op {} (rms_match): dim {} / eps {} inconsistent with widths {} and {}", i, a->dim(),
                           a->eps(), width(in[0]), width(in[1]));
        return Status::ok();
      }
      case fb::OpAttrs::GaussianTopKAttrs:
        OG_TRY(arity(i, in, 1, 1));
        if (width(in[0]) != wo || !std::isfinite(op.attrs_as_GaussianTopKAttrs()->multiplier()))
          return bad_input("op {} (gaussian_top_k): needs equal widths and a finite multiplier", i);
        return Status::ok();
      case fb::OpAttrs::EmbeddingOverlayAttrs: {
        auto a = op.attrs_as_EmbeddingOverlayAttrs();
        OG_TRY(arity(i, in, 2, 2));
        if (in[1] != p_.input_ids()) return bad_input("op {} (embedding_overlay): input 1 must be the token ids", i);
        const int32_t t = a->table();
        if (t < 0 || t >= static_cast<int32_t>(p_.tensors()->size()) || p_.tensors()->Get(t)->shape()->size() != 2)
          return bad_input("op {} (embedding_overlay): table {} is not a 2-D tensor", i, t);
        const int64_t rows = p_.tensors()->Get(t)->shape()->Get(0);
        if (rows < 1 || a->first_id() < 0 || width(in[0]) != wo)
          return bad_input("op {} (embedding_overlay): table of {} rows from id {} over width {}", i, rows,
                           a->first_id(), width(in[0]));
        return need_tensor(i, t, {rows, wo}, false);
      }
      case fb::OpAttrs::MoeAttrs: return check_moe(i, *op.attrs_as_MoeAttrs(), in, wo);
      default:
        return bad_input("op {}: unknown op kind {}", i, static_cast<int>(op.attrs_type()));
    }
  }

  // Inputs x [T, H] and router logits [T, n_experts]; every expert of one geometry.
  Status check_moe(int32_t i, const fb::MoeAttrs& a, const std::vector<int32_t>& in, int32_t wo) {
    OG_TRY(arity(i, in, 2, 2));
    const int64_t H = width(in[0]);
    if (a.gate() == nullptr || a.up() == nullptr || a.down() == nullptr || a.gate()->size() == 0 ||
        a.up()->size() != a.gate()->size() || a.down()->size() != a.gate()->size())
      return bad_input("op {} (moe): gate, up and down must list the same number (>= 1) of experts", i);
    const int64_t E = a.gate()->size();
    if (width(in[1]) != E || wo != H)
      return bad_input("op {} (moe): router logits width {} for {} experts, output width {} for hidden {}", i,
                       width(in[1]), E, wo, H);
    if (a.top_k() < 1 || a.top_k() > E || a.top_k() > 64 || !std::isfinite(a.routed_scale()) ||
        a.scoring() > fb::RouterScoring::MAX || a.activation() > fb::Activation::MAX)
      return bad_input("op {} (moe): top_k {} of {} experts (at most 64), routed_scale {}, scoring or activation "
                       "out of range", i, a.top_k(), E, a.routed_scale());
    auto rows_of = [&](int32_t t) -> int64_t {
      if (t < 0 || t >= static_cast<int32_t>(p_.tensors()->size()) || p_.tensors()->Get(t)->shape()->size() != 2) return -1;
      return p_.tensors()->Get(t)->shape()->Get(0);
    };
    const int64_t I = rows_of(a.gate()->Get(0));
    if (I < 1) return bad_input("op {} (moe): expert 0's gate is not a matrix", i);
    for (int64_t e = 0; e < E; ++e) {
      const auto k = static_cast<flatbuffers::uoffset_t>(e);
      OG_TRY(need_tensor(i, a.gate()->Get(k), {I, H}, false, true));
      OG_TRY(need_tensor(i, a.up()->Get(k), {I, H}, false, true));
      OG_TRY(need_tensor(i, a.down()->Get(k), {H, I}, false, true));
    }
    const bool shared = a.shared_gate() >= 0 || a.shared_up() >= 0 || a.shared_down() >= 0;
    if (shared) {
      const int64_t Is = rows_of(a.shared_gate());
      if (Is < 1) return bad_input("op {} (moe): the shared expert needs gate, up and down matrices", i);
      OG_TRY(need_tensor(i, a.shared_gate(), {Is, H}, false, true));
      OG_TRY(need_tensor(i, a.shared_up(), {Is, H}, false, true));
      OG_TRY(need_tensor(i, a.shared_down(), {H, Is}, false, true));
    }
    if (a.shared_expert_gate() >= 0) {
      if (!shared) return bad_input("op {} (moe): shared_expert_gate without a shared expert", i);
      OG_TRY(need_tensor(i, a.shared_expert_gate(), {1, H}, false));
    }
    if (a.expert_scale() >= 0) OG_TRY(need_tensor(i, a.expert_scale(), {E}, true));
    if (a.gate_bias() >= 0) OG_TRY(need_tensor(i, a.gate_bias(), {E, I}, true));
    if (a.up_bias() >= 0) OG_TRY(need_tensor(i, a.up_bias(), {E, I}, true));
    if (a.down_bias() >= 0) OG_TRY(need_tensor(i, a.down_bias(), {E, H}, true));
    if (a.activation() == fb::Activation::ClampedSwiglu &&
        !(std::isfinite(a.swiglu_alpha()) && std::isfinite(a.swiglu_limit()) && a.swiglu_limit() > 0))
      return bad_input("op {} (moe): ClampedSwiglu needs a finite swiglu_alpha ({}) and a finite swiglu_limit > 0 ({})",
                       i, a.swiglu_alpha(), a.swiglu_limit());
    return Status::ok();
  }

  const fb::Program& p_;
  uint64_t data_size_;
  CacheLayout layout_;
};

}  // namespace

const char* op_name(fb::OpAttrs kind) {
  switch (kind) {
    case fb::OpAttrs::EmbeddingAttrs: return "embedding";
    case fb::OpAttrs::RmsNormAttrs: return "rms_norm";
    case fb::OpAttrs::LinearAttrs: return "linear";
    case fb::OpAttrs::RopeAttrs: return "rope";
    case fb::OpAttrs::AttendAttrs: return "update_and_attend";
    case fb::OpAttrs::AddAttrs: return "add";
    case fb::OpAttrs::MulAttrs: return "mul";
    case fb::OpAttrs::ScaleAttrs: return "scale";
    case fb::OpAttrs::ActAttrs: return "activation";
    case fb::OpAttrs::SoftcapAttrs: return "softcap";
    case fb::OpAttrs::SliceAttrs: return "slice";
    case fb::OpAttrs::StreamMixAttrs: return "stream_mix";
    case fb::OpAttrs::ConcatAttrs: return "concat";
    case fb::OpAttrs::RmsMatchAttrs: return "rms_match";
    case fb::OpAttrs::GaussianTopKAttrs: return "gaussian_top_k";
    case fb::OpAttrs::EmbeddingOverlayAttrs: return "embedding_overlay";
    case fb::OpAttrs::MoeAttrs: return "moe";
    default: return "unknown";
  }
}

Status validate_program(const fb::Program& p, uint64_t data_size) { return Checker(p, data_size).run(); }

CacheLayout layout_from_fb(const fb::Layout& l) {
  CacheLayout out;
  out.n_layers = l.n_layers();
  out.layer_to_cache = to_vec(l.layer_to_cache());
  out.kv_heads = to_vec(l.kv_heads());
  out.head_dims = to_vec(l.head_dims());
  out.windows = to_vec(l.windows());
  return out;
}

std::unique_ptr<fb::LayoutT> layout_to_fb(const CacheLayout& l) {
  auto out = std::make_unique<fb::LayoutT>();
  out->n_layers = l.n_layers;
  out->layer_to_cache = l.layer_to_cache;
  out->kv_heads = l.kv_heads;
  out->head_dims = l.head_dims;
  out->windows = l.windows;
  return out;
}

}  // namespace og::program
