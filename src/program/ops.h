// One entry per op kind (ExecuTorch's functions.yaml is the idea): its name, how many inputs
// it takes and which one is the int32 token ids or positions, the tensors it reads and how,
// and the checks its attributes need. The validator, the exporter's weight-layout pass
// (export/interleave.cc), the runtime's binder table (runtime/op_binders.cc, which a test
// holds to this table) and the name tables read it; adding an op touches program.fbs, its
// entry in ops.cc, its binder and kernel, and the graph builder.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"
#include "program/layout.h"
#include "program/program_generated.h"

namespace og::program {

// How an op reads one of its tensors.
enum class TensorRead : uint8_t {
  kMatrix,    // bound as a kernels::Matrix (linear, embedding, moe): any storage, Q8 / Q4, interleaved
  kRowMajor,  // by pointer or as a row-major float matrix: F32 / BF16 / F16, never interleaved
  kF32,       // by pointer as F32 values (norm weights, biases, tables)
};

struct TensorUse {
  int32_t tensor;
  TensorRead read;
};

// The op's I32 input: none, one index, or the last input (update_and_attend's positions).
inline constexpr int8_t kNoIntInput = -1;
inline constexpr int8_t kLastIntInput = -2;

class OpCheck;

struct OpSpec {
  fb::OpAttrs attrs = fb::OpAttrs::NONE;
  const char* name = "unknown";
  uint8_t min_inputs = 0, max_inputs = 0;
  int8_t int_input = kNoIntInput;
  // Appends the tensors the op reads (indices >= 0 only; optional ones left out when -1).
  void (*tensors)(const fb::Op& op, std::vector<TensorUse>& out) = nullptr;
  // The op's own rules (attributes against input widths, tensor shapes); the validator has
  // already checked the arity above, the inputs' definition and dtypes, and that the
  // attributes table is present.
  Status (*check)(OpCheck& c) = nullptr;
};

// Every op kind, in program.fbs's union order (NONE excluded).
std::span<const OpSpec> op_specs();
// The entry of `kind`, or nullptr for NONE and kinds this build does not know.
const OpSpec* op_spec(fb::OpAttrs kind);
const char* op_name(fb::OpAttrs kind);  // "linear", "update_and_attend", ...; "unknown"
// The tensors `op` reads (empty for an unknown kind).
std::vector<TensorUse> op_tensors(const fb::Op& op);

// What an OpSpec::check sees: the op, its inputs' and output's widths, the program's tensors
// and layout, and the count of update_and_attend ops before it.
class OpCheck {
 public:
  OpCheck(const fb::Program& p, const CacheLayout& layout, int32_t index, const fb::Op& op, std::vector<int32_t> in,
          int32_t& layer)
      : i(index), op(op), in(std::move(in)), layer(layer), p_(p), layout_(layout) {}

  const fb::Program& program() const { return p_; }
  const CacheLayout& layout() const { return layout_; }
  int32_t width(int32_t value) const { return p_.values()->Get(static_cast<flatbuffers::uoffset_t>(value))->width(); }
  int32_t out_width() const { return width(op.output()); }
  const char* name() const { return op_name(op.attrs_type()); }
  // Index in range.
  bool has_tensor(int32_t t) const { return t >= 0 && t < static_cast<int32_t>(p_.tensors()->size()); }
  const fb::Tensor& tensor(int32_t t) const { return *p_.tensors()->Get(static_cast<flatbuffers::uoffset_t>(t)); }
  // Rows of a 2-D tensor, or -1 when `t` is out of range or not 2-D.
  int64_t rows_of(int32_t t) const;
  Status arity(size_t lo, size_t hi) const;
  // `t` in range with exactly this shape.
  Status shape(int32_t t, std::vector<int64_t> want) const;

  const int32_t i;  // the op's index
  const fb::Op& op;
  const std::vector<int32_t> in;  // input value ids
  int32_t& layer;                 // update_and_attend ops seen so far (one per layer)

 private:
  const fb::Program& p_;
  const CacheLayout& layout_;
};

}  // namespace og::program
