// A loaded program: the verified mapping, its ops bound to kernels once (attributes
// turned into parameter structs, weights into pointers into the mapping), and the
// activation memory plan. Immutable after load, so any number of sessions share it.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "program/layout.h"
#include "program/program_file.h"
#include "runtime/math_mode.h"

namespace og::runtime {

enum class OpKind : uint8_t {
  kEmbedding, kRmsNorm, kLinear, kRope, kAttend, kAdd, kMul, kScale, kAct, kActMul, kSoftcap, kSlice,
  kStreamMix, kConcat, kRmsMatch, kGaussianTopK, kEmbeddingOverlay, kMoe, kLayerNorm, kHeadLinear, kXielu
};

struct BoundOp {
  OpKind kind;
  std::array<int32_t, 4> in{-1, -1, -1, -1};  // value ids; each value is [T, width(v)] f32
  std::array<bool, 4> in_from_suffix{};  // input made by an op of the row-wise suffix
  int32_t out = -1;                // value id of the output [T, width]
  int32_t width = 0;               // output width
  kernels::Matrix matrix;          // embedding table [vocab, dim] / linear weight [out, in] / head_linear's [groups * out, in]
  kernels::XQuant xquant = kernels::XQuant::kNone;  // linear: how a quantized or bf16 weight meets x
  // Linear with int8 activations: the session buffer holding its input quantized, and
  // whether this op is the first of the step to read that value with this weight layout
  // (it quantizes; the value's later readers of the same layout reuse the rows).
  int32_t int8_buffer = -1;
  bool int8_fill = false;
  // Linears of one group (Model::plan_linear_groups) run together in the first one's turn:
  // the first holds how many, the others 0. Every other op: 1.
  int32_t group = 1;
  const float* vec = nullptr;      // linear bias [out] / norm weight [dim] / stream-mix coefficients [n_out * n_in]
  const float* vec2 = nullptr;     // layer_norm bias [dim]
  int32_t norm_groups = 1;         // layer_norm: rows of weight and bias (1, or one per group of the row);
                                   // concat, head_linear: groups of columns (head_linear's stride: dim)
  float eps = 0, scalar = 0;
  int32_t dim = 0;
  kernels::RopeParams rope;
  kernels::AttendParams attend;
  kernels::StreamMixParams mix;
  kernels::XieluParams xielu;
  int32_t cache_id = -1;
  bool writes_cache = false;
  kernels::Activation act = kernels::Activation::kSilu;
  std::vector<int32_t> remap_ids;  // embedding: ids read as remap_to
  int32_t remap_to = 0;
  int32_t moe = -1;                // mixture of experts: index of its Model::moe() parameters
};


// A mixture-of-experts op's matrices and parameters (Model::moe).
struct MoeBinding {
  std::vector<kernels::Matrix> gate, up, down;  // [n_experts]; params points into them
  kernels::MoeParams params;
};

class Model {
 public:
  // The weights are read into huge pages by default (decode reads them all every step, and
  // small pages cost it a third of its speed in a VM: base/mapped_file.h); kMapped uses
  // them in place from the file's mapping (`--mmap`: nothing copied, the page cache shared).
  static Result<std::shared_ptr<const Model>> load(const std::string& path, Residency residency = Residency::kHugePages,
                                                   MathMode math = MathMode::kAsExported);

  const program::ProgramFile& file() const { return *file_; }
  const fb::Program& program() const { return file_->program(); }
  const program::CacheLayout& layout() const { return layout_; }
  const std::vector<BoundOp>& ops() const { return ops_; }
  int32_t vocab_size() const { return program().vocab_size(); }
  int32_t max_ctx_len() const { return program().max_ctx_len(); }
  int32_t prefill_chunk_size() const { return program().prefill_chunk_size(); }
  int32_t input_ids() const { return program().input_ids(); }
  int32_t positions() const { return program().positions(); }
  int32_t logits() const { return program().logits(); }
  int32_t width(int32_t value) const { return widths_[value]; }
  // Ops from this index on act row by row after the last attention: with only the last
  // row's logits wanted, they run on that row alone.
  size_t row_suffix_begin() const { return row_suffix_begin_; }
  // Positions a learned position table holds (its rows; the smallest table's), 0 when the
  // program has none: a session's context may not exceed it (a position past it has no row).
  int64_t position_rows() const { return position_rows_; }

  // Memory plan: activation value -> slot; slot widths (elements per token row).
  int32_t slot_of(int32_t value) const { return slot_of_[value]; }
  const std::vector<int32_t>& slot_widths() const { return slot_widths_; }
  // Int8 activation buffers (BoundOp::int8_buffer): bytes per token row of each; a session
  // gives each prefill_chunk_size rows.
  const std::vector<int64_t>& int8_buffer_row_bytes() const { return int8_row_bytes_; }
  uint64_t weight_bytes() const;
  // Whether some linear runs with bf16 activations (the mode that ran: "fast" or "exact").
  bool fast_math() const { return fast_math_; }
  const char* math_name() const { return fast_math_ ? "fast" : "exact"; }
  // A mixture-of-experts op's bound parameters (BoundOp::moe).
  const kernels::MoeParams& moe(int32_t i) const { return moe_[static_cast<size_t>(i)]->params; }

 private:
  Status bind(MathMode math);
  void plan_memory();
  void plan_int8_inputs();
  void plan_linear_groups();

  std::shared_ptr<program::ProgramFile> file_;
  std::vector<std::unique_ptr<MoeBinding>> moe_;  // [moe ops]
  program::CacheLayout layout_;
  std::vector<BoundOp> ops_;            // [n_ops] in program order
  std::vector<int32_t> widths_;         // [n_values] elements per token row
  std::vector<int32_t> slot_of_;        // [n_values] activation slot, -1 for ids/positions/logits
  std::vector<int32_t> slot_widths_;    // [n_slots] elements per token row
  std::vector<int64_t> int8_row_bytes_; // [n_int8_buffers] bytes per token row
  size_t row_suffix_begin_ = 0;
  int64_t position_rows_ = 0;
  bool fast_math_ = false;
};

}  // namespace og::runtime
