// The runtime's half of an op's entry (program/ops.h holds the other): how a validated op
// becomes a BoundOp, its attributes turned into kernel parameters and its tensors into
// pointers into the mapping. One binder per program::OpSpec; OpBinders.OneBinderPerOpSpec
// holds the two tables together.
#pragma once

#include <memory>
#include <vector>

#include "runtime/model.h"

namespace og::runtime {

// What a binder reads and where a moe op's expert matrices go.
struct BindContext {
  const program::ProgramFile& file;
  const program::CacheLayout& layout;
  const std::vector<int32_t>& widths;             // [n_values] elements per token row
  std::vector<std::unique_ptr<MoeBinding>>& moe;  // [moe ops] so far
  MathMode math = MathMode::kAsExported;          // how bf16 linears meet their input

  // Tensor t as a kernels::Matrix (any storage, quantized or interleaved: validated).
  kernels::Matrix matrix(int32_t t) const;
  // Tensor t's F32 values, nullptr for t < 0 (an absent optional tensor).
  const float* f32(int32_t t) const;
};

// Fills b.kind and the op's parameters (b.in, b.out and b.width are set by the caller);
// a refusal names what this build cannot run (a head_dim past the kernels' bound).
using OpBinder = Status (*)(const fb::Op& op, const BindContext& ctx, BoundOp& b);

// The binder of `kind`, nullptr where none (NONE, or a kind without a binder: a bug the
// test catches).
OpBinder op_binder(fb::OpAttrs kind);

}  // namespace og::runtime
