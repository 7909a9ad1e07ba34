// Builds a program's op graph and streams its weights into the program file.
//
// Values are activations [T, width] (f32) plus the int32 graph inputs ids [T] and
// positions [T]. Each method appends one op and returns its output value.
//
// A checkpoint weight is recorded when added and written by write_weights(), once the
// graph says how it is used: norms, biases and rope tables stay f32; matrices read only by
// linear ops take --qlinear, tables read by embedding ops --qembedding, the LM head --qhead,
// which is 8w by default whenever --qlinear is set (the most sensitive matrix, as llama.cpp
// keeps its output at 6-8 bits); a tied table read by the head and the embedding takes
// --qembedding if given, else --qhead; everything else the program dtype. Weights are converted one at a time from
// the mmap'd checkpoint, so an export never holds the whole model. Matrices are stored
// interleaved (row_block 16) unless --layout row-major: quantized ones with int8 activations,
// float ones when only linear, embedding and moe read them (interleave.h); weight_f32()
// writes at once, before its readers are known, so its tensors stay row-major.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "export/quantize.h"
#include "hf/safetensors.h"
#include "program/program_file.h"

namespace og::exporter {

using ValueId = int32_t;
using WeightId = int32_t;
inline constexpr WeightId kNoWeight = -1;

// A rope's frequency tables [rotary_dim / 2]: positions >= long_from rotate with
// long_inv_freq when it is set (program.fbs RopeAttrs).
struct RopeWeights {
  WeightId inv_freq = kNoWeight;
  WeightId long_inv_freq = kNoWeight;
  int32_t long_from = 0;
};

struct AttendSpec {
  int32_t cache_id = 0;
  float scale = 1.0f;
  float softcap = 0.0f;
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  bool writes_cache = true;
  WeightId sinks = kNoWeight;  // f32 [n_heads]: a sink logit per query head (program.fbs AttendAttrs)
};

// A mixture-of-experts op (MoeAttrs): per expert gate/up [I, H] and down [H, I], an optional
// shared expert with its optional sigmoid gate [1, H].
struct MoeSpec {
  int32_t top_k = 1;
  fb::RouterScoring scoring = fb::RouterScoring::SoftmaxTopK;
  bool normalize_top_k = false;
  float routed_scale = 1.0f;
  fb::Activation activation = fb::Activation::Silu;
  std::vector<WeightId> gate, up, down;  // [n_experts]
  WeightId shared_gate = kNoWeight, shared_up = kNoWeight, shared_down = kNoWeight;
  WeightId shared_expert_gate = kNoWeight;
  WeightId expert_scale = kNoWeight;                    // f32 [n_experts]
  WeightId gate_bias = kNoWeight, up_bias = kNoWeight;  // f32 [n_experts, I]
  WeightId down_bias = kNoWeight;                       // f32 [n_experts, H]
  float swiglu_alpha = 1.702f, swiglu_limit = 7.0f;     // activation ClampedSwiglu
  WeightId choice_bias = kNoWeight;                     // f32 [n_experts], SigmoidTopK
  int32_t n_group = 1, topk_group = 1;                  // expert groups (SigmoidTopK, SoftmaxTopK)
  int32_t group_top = 2;                                // a group's score: its group_top best keys
  float masked_key = 0.0f;                              // the key outside the kept groups (0 or -inf)
};

// How a checkpoint tensor becomes a program weight. The matrix read is the 2-D tensor, or
// with `expert` >= 0 the expert-th [R, C] matrix of a 3-D [E, R, C] tensor (fused experts);
// with `transpose` that matrix is read as its [C, R] transpose (an input-major [in, out]
// layout read as nn.Linear's [out, in]); then rows row_begin, row_begin + row_step, ...
// below row_end are kept (fused or interleaved projections).
struct WeightOptions {
  bool keep_f32 = false;     // norms, biases: stored f32 whatever the program dtype
  float add = 0.0f;          // folded offset: (1 + w) norms
  float mul = 1.0f;          // folded factor, after `add`, in f32
  int64_t expert = -1;       // index into dim 0 of a 3-D tensor; -1: the tensor is the matrix
  bool transpose = false;    // read the matrix as its transpose
  int64_t row_begin = 0;     // row slice [row_begin, row_end) step row_step of the matrix
  int64_t row_end = -1;      // -1: all rows
  int64_t row_step = 1;
  // With row_run > 1 the slice takes runs of row_run consecutive rows, one starting every
  // row_step rows from row_begin (heads' q, k or v rows of a per-head fused projection); a
  // vector (biases) is sliced the same way, element by element.
  int64_t row_run = 1;
  const float* col_scale = nullptr;  // [cols]: column c multiplied by col_scale[c] (folded in f32)
  // Rows (of a vector: elements), after the slice, in rotate-half order from interleaved pairs:
  // in each block of `pairs_block` rows the first `pairs_width` are taken in the order
  // 0, 2, 4, ..., 1, 3, 5, ... and the rest as they are. A rope that rotates pairs (2i, 2i+1)
  // of a head (pairs_block = head_dim, pairs_width = its rotary width) is then the rope kernel's
  // rotate-half one; q and k permuted alike keep every q·k. 0: off.
  int64_t pairs_block = 0;
  int64_t pairs_width = 0;
  bool flatten = false;  // stored as a vector of all its elements (per-head norm weights [heads, D])
};

struct QuantOptions {
  QuantBits linear = QuantBits::kNone;     // --qlinear
  QuantBits embedding = QuantBits::kNone;  // --qembedding
  QuantBits head = QuantBits::kNone;       // --qhead (the exporter makes it 8w when only --qlinear is given)
  int32_t group_size = 32;                 // --qlinear-group-size (also for embeddings)
  QuantMethod method = QuantMethod::kFit;
  bool bf16_activations = false;           // --qactivations bf16: interleaved BF16 linears take bf16 x
  bool int8_activations = true;            // --qactivations int8: quantized linears take int8 x,
                                           // and their matrices are stored interleaved (row_block 16)
  bool interleave = true;                  // --layout interleaved: float matrices that only linear,
                                           // embedding and moe read are stored interleaved too
                                           // (interleave.h); false (row-major): no matrix is
};

class GraphBuilder {
 public:
  GraphBuilder(program::ProgramWriter& writer, fb::ProgramT& program, fb::DType weight_dtype, bool show_progress,
               size_t expected_tensors, QuantOptions quant = {});

  ValueId input_ids() const { return ids_; }
  ValueId positions() const { return positions_; }

  Result<WeightId> weight(const hf::TensorView& t, const WeightOptions& options = {});
  Result<WeightId> weight_f32(const std::string& name, std::span<const float> data, std::vector<int64_t> shape);
  // A matrix [rows, cols] made here from checkpoint tensors (rows of several, zeros, an
  // identity block), stored as weight() stores a checkpoint's: `make` gives its f32 values
  // row-major when the weights are written, so no made matrix outlives its own conversion.
  // (The tensors it reads are the caller's to mark as used; its name starts with its source
  // tensor's, then "[...]", as a slice's does.)
  Result<WeightId> weight_made(const std::string& name, std::vector<int64_t> shape,
                               std::function<Result<std::vector<float>>()> make);
  // An expert matrix stored as MXFP4 (OCP microscaling, as transformers' mxfp4 integration):
  // blocks U8 [E, R, G, 16] and scales U8 [E, R, G] give expert e's [R, 32 G] matrix
  //   W[r, 32 g + 2 j + h] = FP4[nibble h of blocks[e, r, g, j]] * 2^(scales[e, r, g] - 127)
  // (h = 0: low nibble first; FP4 = e2m1, bit 3 the sign), decoded exactly at write time and
  // stored like any weight() (options.expert is required; rows may be sliced, not transposed).
  // A scale byte 0xFF (NaN in e8m0) is refused, naming the tensor.
  Result<WeightId> weight_mxfp4(const hf::TensorView& blocks, const hf::TensorView& scales,
                                const WeightOptions& options);

  ValueId embedding(WeightId table, int32_t width, float scale, std::vector<int32_t> remap_ids = {},
                    int32_t remap_to = 0);
  // The rows of a learned position table [>= max_ctx_len, width] at the step's positions
  // (format version 11).
  ValueId position_embedding(WeightId table, int32_t width);
  ValueId rms_norm(ValueId x, WeightId weight, float eps, int32_t dim);
  // torch's LayerNorm over groups of dim (weight, bias [dim] f32 or kNoWeight)
  ValueId layer_norm(ValueId x, WeightId weight, WeightId bias, float eps, int32_t dim);
  ValueId linear(ValueId x, WeightId weight, WeightId bias = kNoWeight);
  ValueId lm_head(ValueId x, WeightId weight, WeightId bias = kNoWeight);  // a linear whose weight is stored as the head
  // A linear whose weight stays in the program dtype under --qlinear: a mixture of experts'
  // router (its logits pick the experts; llama.cpp keeps it unquantized too).
  ValueId router(ValueId x, WeightId weight, WeightId bias = kNoWeight);
  // The same for any linear whose weight must keep its exact values (a made matrix's identity
  // block and zero padding).
  ValueId float_linear(ValueId x, WeightId weight) { return router(x, weight); }
  // x [T, H], router logits [T, n_experts] -> [T, H]. Expert matrices are stored as linear
  // weights (--qlinear); the shared expert's sigmoid gate as a router.
  ValueId moe(ValueId x, ValueId router_logits, const MoeSpec& spec);
  // scale: cos and sin times scale (YaRN's attention factor)
  ValueId rope(ValueId x, const RopeWeights& tables, int32_t n_heads, int32_t head_dim, int32_t rotary_dim,
               float scale = 1.0f);
  ValueId attend(ValueId q, ValueId k, ValueId v, const AttendSpec& spec);  // k, v = -1 when !writes_cache
  ValueId add(ValueId a, ValueId b);
  ValueId mul(ValueId a, ValueId b);
  ValueId scale(ValueId x, float s);
  ValueId act(ValueId x, fb::Activation a);
  ValueId act_mul(ValueId gate, ValueId up, fb::Activation a);
  ValueId softcap(ValueId x, float cap);
  ValueId slice(ValueId x, int32_t begin, int32_t width);  // columns [begin, begin + width)
  ValueId concat(ValueId a, ValueId b, int32_t groups = 1);  // [a | b], or group by group (ConcatAttrs)
  // A float matrix per group of x's columns (HeadLinearAttrs): weight [groups * out, in] reads
  // the first `in` of each group's in_stride columns; kept in the program's float dtype.
  ValueId head_linear(ValueId x, WeightId weight, int32_t groups, int32_t in_stride);
  // xIELU with its effective coefficients (XieluAttrs).
  ValueId xielu(ValueId x, float alpha_p, float alpha_n, float beta, float eps);
  // Streams of `stream_width` mixed per token by coefficients [T, n_out * n_in] (a value) or
  // by constants [n_out * n_in] (an f32 weight); see StreamMixAttrs.
  ValueId stream_mix(ValueId x, ValueId coefs, int32_t stream_width);
  ValueId stream_mix_const(ValueId x, WeightId coefs, int32_t stream_width, int32_t n_out);
  ValueId rms_match(ValueId x, ValueId ref, float eps, int32_t dim);
  ValueId gaussian_top_k(ValueId x, float multiplier);
  ValueId embedding_overlay(ValueId x, WeightId table, int32_t first_id);  // see EmbeddingOverlayAttrs
  void set_logits(ValueId v) { program_.logits = v; }

  int32_t width(ValueId v) const { return program_.values[static_cast<size_t>(v)]->width; }
  const std::vector<int64_t>& weight_shape(WeightId w) const { return program_.tensors[static_cast<size_t>(w)]->shape; }
  void finish_progress();
  // Also called after each tensor written: (tensors written, tensors expected, bytes written).
  void set_progress_callback(std::function<void(int64_t, int64_t, uint64_t)> f) { on_progress_ = std::move(f); }
  // Converts and writes every recorded checkpoint weight (after the graph is complete).
  Status write_weights();
  // Matrices quantized and matrices left in the program dtype because their columns are not
  // a multiple of the group size.
  int64_t n_quantized() const { return n_quantized_; }
  int64_t n_not_quantizable() const { return n_not_quantizable_; }
  // Records a checkpoint tensor as accounted for without weight() (so the unused-tensor check
  // accepts it): one transformers loads but ignores, e.g. k/v projections kept on KV-shared
  // layers by older exports, or one read into a weight made here (weight_f32).
  void mark_ignored(const std::string& name) { used_.insert(name); }
  // Checkpoint tensors consumed so far (to reject checkpoints with tensors no op uses).
  const std::set<std::string>& used_tensors() const { return used_; }

 private:
  ValueId new_value(int32_t width, fb::DType dtype = fb::DType::F32);
  ValueId push(std::vector<int32_t> inputs, int32_t width, fb::OpAttrsUnion attrs);
  Result<WeightId> write(const std::string& name, fb::DType dtype, std::vector<int64_t> shape,
                         std::span<const uint8_t> bytes);
  Status write_data(WeightId id, std::span<const uint8_t> bytes);
  void show_progress();
  Status write_pending(WeightId id);

  // How ops read a weight (decides its storage).
  enum Use : uint8_t { kLinearUse = 1, kEmbeddingUse = 2, kHeadUse = 4, kRouterUse = 8 };
  struct Pending {
    hf::TensorView tensor;  // a view into the mmap'd checkpoint (MXFP4: the blocks)
    WeightOptions options;
    std::vector<float> col_scale;  // a copy of options.col_scale
    std::optional<hf::TensorView> mxfp4_scales;  // MXFP4: the scales (tensor is the blocks)
    std::function<Result<std::vector<float>>()> make;  // weight_made: the values of `tensor`
  };
  Result<WeightId> record(const hf::TensorView& t, const WeightOptions& o, std::vector<int64_t> matrix_shape,
                          std::optional<hf::TensorView> mxfp4_scales);
  std::map<WeightId, Pending> pending_;
  std::map<WeightId, uint8_t> uses_;
  std::vector<bool> matrix_only_;  // [n_tensors] read_only_as_matrices, set by write_weights()
  QuantOptions quant_;
  int64_t n_quantized_ = 0, n_not_quantizable_ = 0;

  program::ProgramWriter& writer_;
  fb::ProgramT& program_;
  fb::DType weight_dtype_;
  ValueId ids_ = -1, positions_ = -1;
  bool show_progress_;
  std::function<void(int64_t, int64_t, uint64_t)> on_progress_;
  size_t expected_tensors_;
  std::chrono::steady_clock::time_point start_;
  std::set<std::string> used_;
};

}  // namespace og::exporter
