#include "program/validator.h"

#include <cmath>

#include "program/ops.h"
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
    if (p_.input_ids() == p_.positions()) return bad_input("program: input_ids and positions are one value");
    if (width(p_.logits()) != p_.vocab_size() || dtype(p_.logits()) != fb::DType::F32)
      return bad_input("program: logits width {} differs from vocab_size {}", width(p_.logits()), p_.vocab_size());
    return Status::ok();
  }

  int32_t width(int32_t v) const { return p_.values()->Get(v)->width(); }
  fb::DType dtype(int32_t v) const { return p_.values()->Get(v)->dtype(); }

  // Reads `t` as `read` says (ops.h): quantized and interleaved tensors only as matrices.
  Status check_read(int32_t i, const fb::Op& op, TensorUse use) {
    const int32_t t = use.tensor;
    if (t < 0 || t >= static_cast<int32_t>(p_.tensors()->size()))
      return bad_input("op {}: weight index {} out of range", i, t);
    const fb::Tensor* w = p_.tensors()->Get(static_cast<flatbuffers::uoffset_t>(t));
    const std::string name = w->name() ? w->name()->str() : "?";
    if (use.read == TensorRead::kF32 && w->dtype() != fb::DType::F32)
      return bad_input("op {}: weight '{}' must be F32", i, name);
    if (w->dtype() == fb::DType::I32) return bad_input("op {}: weight is I32", i);
    if (use.read == TensorRead::kMatrix) return Status::ok();
    if (is_quantized(w->dtype()))
      return bad_input("op {}: weight '{}' is quantized; only linear, embedding and moe read quantized weights", i, name);
    if (w->row_block() != 0)
      return bad_input("op {} ({}): weight tensor {} '{}' is interleaved (row_block {}); only the matrices of linear, "
                       "embedding, moe and head_linear may be", i, op_name(op.attrs_type()), t, name, w->row_block());
    return Status::ok();
  }

  // The rules every op shares, then its OpSpec's own, then how it reads its tensors.
  Status check_ops() {
    const int32_t nv = static_cast<int32_t>(p_.values()->size());
    std::vector<bool> defined(static_cast<size_t>(nv), false);
    defined[p_.input_ids()] = defined[p_.positions()] = true;
    int32_t layer = 0;
    for (int32_t i = 0; i < static_cast<int32_t>(p_.ops()->size()); ++i) {
      const fb::Op* op = p_.ops()->Get(static_cast<flatbuffers::uoffset_t>(i));
      const OpSpec* spec = op_spec(op->attrs_type());
      if (spec == nullptr) return bad_input("op {}: unknown op kind {}", i, static_cast<int>(op->attrs_type()));
      // The FlatBuffers verifier accepts a union type without its table; every check reads it.
      if (op->attrs() == nullptr) return bad_input("op {} ({}): attributes are missing", i, spec->name);
      std::vector<int32_t> in = to_vec(op->inputs());
      for (int32_t v : in)
        if (v < 0 || v >= nv || !defined[v]) return bad_input("op {} ({}): input value {} is undefined", i, spec->name, v);
      const int32_t out = op->output();
      if (out < 0 || out >= nv || defined[out])
        return bad_input("op {} ({}): output value {} is out of range or already defined", i, spec->name, out);
      if (in.size() < spec->min_inputs || in.size() > spec->max_inputs)
        return bad_input("op {}: {} inputs, expected {}..{}", i, in.size(), spec->min_inputs, spec->max_inputs);
      for (size_t k = 0; k < in.size(); ++k) {
        const bool int_input = spec->int_input == kLastIntInput ? k + 1 == in.size()
                                                                : static_cast<int>(k) == spec->int_input;
        if ((dtype(in[k]) == fb::DType::I32) != int_input)
          return bad_input("op {} ({}): input {} has the wrong dtype", i, spec->name, k);
      }
      if (dtype(out) != fb::DType::F32) return bad_input("op {}: output must be F32", i);
      OpCheck c(p_, layout_, i, *op, std::move(in), layer);
      OG_TRY(spec->check(c));
      std::vector<TensorUse> uses;
      spec->tensors(*op, uses);
      for (const TensorUse& u : uses) OG_TRY(check_read(i, *op, u));
      defined[out] = true;
    }
    if (layer != layout_.n_layers)
      return bad_input("program has {} update_and_attend ops for {} layers", layer, layout_.n_layers);
    if (!defined[p_.logits()]) return bad_input("program: logits value is never computed");
    return Status::ok();
  }

  const fb::Program& p_;
  uint64_t data_size_;
  CacheLayout layout_;
};

}  // namespace

Status validate_program(const fb::Program& p, uint64_t data_size) { return Checker(p, data_size).run(); }

CacheLayout layout_from_fb(const fb::Layout& l) {
  CacheLayout out;
  out.n_layers = l.n_layers();
  out.layer_to_cache = to_vec(l.layer_to_cache());
  out.kv_heads = to_vec(l.kv_heads());
  out.head_dims = to_vec(l.head_dims());
  out.windows = to_vec(l.windows());
  if (l.value_is_key() != nullptr && l.value_is_key()->size() > 0)
    for (auto v : *l.value_is_key()) out.value_is_key.push_back(v ? 1 : 0);
  return out;
}

std::unique_ptr<fb::LayoutT> layout_to_fb(const CacheLayout& l) {
  auto out = std::make_unique<fb::LayoutT>();
  out->n_layers = l.n_layers;
  out->layer_to_cache = l.layer_to_cache;
  out->kv_heads = l.kv_heads;
  out->head_dims = l.head_dims;
  out->windows = l.windows;
  for (uint8_t v : l.value_is_key) out->value_is_key.push_back(v != 0);
  return out;
}

}  // namespace og::program
