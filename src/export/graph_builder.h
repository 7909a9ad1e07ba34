// Builds a program's op graph and streams its weights into the program file.
//
// Values are activations [T, width] (f32) plus the int32 graph inputs ids [T] and
// positions [T]. Each method appends one op and returns its output value. Weights are
// converted once here (to the program dtype, or kept f32 for norms, biases and rope
// tables) and written as they are added, so an export never holds the whole model.
#pragma once

#include <chrono>
#include <set>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/safetensors.h"
#include "program/program_file.h"

namespace og::exporter {

using ValueId = int32_t;
using WeightId = int32_t;
inline constexpr WeightId kNoWeight = -1;

struct AttendSpec {
  int32_t cache_id = 0;
  float scale = 1.0f;
  float softcap = 0.0f;
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  bool writes_cache = true;
};

// How a checkpoint tensor becomes a program weight.
struct WeightOptions {
  bool keep_f32 = false;     // norms, biases: stored f32 whatever the program dtype
  float add = 0.0f;          // folded offset: Gemma's (1 + w) norms
  int64_t row_begin = 0;     // row slice [row_begin, row_end) of a 2-D tensor (fused projections)
  int64_t row_end = -1;      // -1: all rows
  const float* col_scale = nullptr;  // [cols]: column c multiplied by col_scale[c] (folded in f32)
};

class GraphBuilder {
 public:
  GraphBuilder(program::ProgramWriter& writer, fb::ProgramT& program, fb::DType weight_dtype, bool show_progress,
               size_t expected_tensors);

  ValueId input_ids() const { return ids_; }
  ValueId positions() const { return positions_; }

  Result<WeightId> weight(const hf::TensorView& t, const WeightOptions& options = {});
  Result<WeightId> weight_f32(const std::string& name, std::span<const float> data, std::vector<int64_t> shape);

  ValueId embedding(WeightId table, int32_t width, float scale, std::vector<int32_t> remap_ids = {},
                    int32_t remap_to = 0);
  ValueId rms_norm(ValueId x, WeightId weight, float eps, int32_t dim);
  ValueId linear(ValueId x, WeightId weight, WeightId bias = kNoWeight);
  ValueId rope(ValueId x, WeightId inv_freq, int32_t n_heads, int32_t head_dim, int32_t rotary_dim);
  ValueId attend(ValueId q, ValueId k, ValueId v, const AttendSpec& spec);  // k, v = -1 when !writes_cache
  ValueId add(ValueId a, ValueId b);
  ValueId mul(ValueId a, ValueId b);
  ValueId scale(ValueId x, float s);
  ValueId act(ValueId x, fb::Activation a);
  ValueId act_mul(ValueId gate, ValueId up, fb::Activation a);
  ValueId softcap(ValueId x, float cap);
  ValueId slice(ValueId x, int32_t begin, int32_t width);  // columns [begin, begin + width)
  ValueId concat(ValueId a, ValueId b);                    // [a | b]
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
  // Records a checkpoint tensor that transformers loads but ignores (so the unused-tensor
  // check accepts it), e.g. k/v projections kept on KV-shared layers by older exports.
  void mark_ignored(const std::string& name) { used_.insert(name); }
  // Checkpoint tensors consumed so far (to reject checkpoints with tensors no op uses).
  const std::set<std::string>& used_tensors() const { return used_; }

 private:
  ValueId new_value(int32_t width, fb::DType dtype = fb::DType::F32);
  ValueId push(std::vector<int32_t> inputs, int32_t width, fb::OpAttrsUnion attrs);
  Result<WeightId> write(const std::string& name, fb::DType dtype, std::vector<int64_t> shape,
                         std::span<const uint8_t> bytes);

  program::ProgramWriter& writer_;
  fb::ProgramT& program_;
  fb::DType weight_dtype_;
  ValueId ids_ = -1, positions_ = -1;
  bool show_progress_;
  size_t expected_tensors_;
  std::chrono::steady_clock::time_point start_;
  std::set<std::string> used_;
};

}  // namespace og::exporter
