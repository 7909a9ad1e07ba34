// The float64 toolkit the reference families are written with: a row-major matrix,
// nn.Linear, RMSNorm in transformers' two styles, activations, softcapping, the mask rule,
// rotary embeddings and attention. Plain loops on purpose: this is the oracle, so every
// function reads like the formula it implements and nothing here is shared with kernels/.
//
// Internal to og_reference (tests include it to pin the pieces down); not a public API.
#pragma once

#include <cstdint>
#include <map>
#include <vector>
#include <span>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "reference/reference.h"

namespace og::reference {

// Row-major float64 matrix; in the forward pass rows are tokens (row t = position t).
struct Mat {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> v;  // [rows, cols]

  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  double* row(int64_t r) { return v.data() + r * cols; }
  const double* row(int64_t r) const { return v.data() + r * cols; }
  double& at(int64_t r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
  double at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

// y [T, out] = x [T, in] · Wᵀ + b, with W [out, in] as nn.Linear stores it. W is converted
// one row at a time straight from the checkpoint, so no weight (not even a 262k-row lm_head)
// is ever held whole in float64. `bias` may be null.
Mat linear(const Mat& x, const hf::TensorView& w, const hf::TensorView* bias = nullptr);
// While set (non-null) on this thread, linear() quantizes its input as
// ForwardOptions::int8_linear_inputs (and the tie fields after it) and bf16_linear_inputs say.
struct Int8Inputs {
  const std::map<std::string, int32_t>* weights = nullptr;
  double tie_window = 0;
  std::vector<ForwardOptions::NearTie>* near_ties = nullptr;
  const std::vector<int64_t>* round_other_way = nullptr;  // sorted
  const std::set<std::string>* bf16_weights = nullptr;    // ForwardOptions::bf16_linear_inputs
  int64_t counter = 0;  // elements numbered so far
  // Every input quantized and its first number: an input that feeds several linears (q, k and
  // v; gate and up; a parallel block's attention and MLP, with another input between them) is
  // one set of elements, as the program quantizes one value once for all its linears.
  struct Seen {
    std::vector<double> x;
    int64_t group = 0, base = 0;
  };
  std::vector<Seen> seen;
};
void set_int8_linear_inputs(Int8Inputs* state);
// The same on a slice of W's rows [row_begin, row_begin + n_rows): phi3's fused projections.
Mat linear_rows(const Mat& x, const hf::TensorView& w, int64_t row_begin, int64_t n_rows);

// y [T, n_cols] = x [T, in] · W[:, col_begin : col_begin + n_cols] + b[same], with W [in, out] as
// transformers' Conv1D stores it (GPT-2); n_cols -1: to the last column. int8 / bf16 inputs as
// linear() (keyed by W's name).
Mat conv1d(const Mat& x, const hf::TensorView& w, const hf::TensorView* bias = nullptr, int64_t col_begin = 0,
           int64_t n_cols = -1);

// out[i] += in[i] (the residual adds).
void add_inplace(Mat& out, const Mat& in);

// RMSNorm styles as transformers writes them:
//   kWeight        (Llama/Mistral/Qwen/Phi3):  w * (x / sqrt(mean(x²) + eps))
//   kOnePlusWeight (Gemma2/Gemma3):           (x / sqrt(mean(x²) + eps)) * (1 + w)
// Gemma stores w centred on 0; folding 1 + w into a bf16 weight would lose precision.
enum class NormStyle { kWeight, kOnePlusWeight };

// Normalizes each contiguous group of `group` values in every row (group = cols for the
// hidden-state norms, head_dim for Qwen3/Gemma3 per-head q/k norms). w has `group` entries.
Mat rms_norm(const Mat& x, std::span<const double> w, double eps, NormStyle style, int64_t group);

// torch's LayerNorm over each group of `group` values: (x - mean) / sqrt(var + eps) * w + b,
// the population variance; w and b have `group` entries (empty: 1 and 0), or cols entries:
// a weight (bias) of its own for each group of a row (Cohere's per-head q/k norms).
Mat layer_norm(const Mat& x, std::span<const double> w, std::span<const double> b, double eps, int64_t group);

enum class Activation { kSilu, kGeluTanh, kGeluErf, kRelu, kRelu2 };
// transformers' ACT2FN names: silu/swish, gelu_pytorch_tanh/gelu_new/gelu_fast (tanh form),
// gelu (erf form), relu. Anything else is unsupported, naming `field`.
Result<Activation> parse_activation(const std::string& name, const std::string& field);
double activate(Activation a, double x);
double silu(double x);       // x * sigmoid(x)
double gelu_tanh(double x);  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³)))
double gelu_erf(double x);   // 0.5 x (1 + erf(x / sqrt(2)))

// cap * tanh(x / cap); cap <= 0 means no capping.
double softcap(double x, double cap);

// DESIGN.md §2: query at position p sees key j iff j <= p and, with window W > 0, j > p - W.
bool visible(int64_t p, int64_t j, int64_t window);

// Rotary embedding on x [T, n_heads * head_dim], row t at position t, in transformers'
// rotate_half convention: with r = 2 * inv_freq.size() rotated dims per head (r < head_dim
// only for partial rotary; the rest pass through) and h = r / 2, for i < h:
//   y[i]     = x[i] cos(t f_i) - x[i + h] sin(t f_i)
//   y[i + h] = x[i + h] cos(t f_i) + x[i] sin(t f_i)
// with cos and sin multiplied by `attention_factor` (YaRN, LongRoPE; 1 otherwise): rotated
// dims only. Rows at positions t >= long_from use `long_inv_freq` instead when it is given
// (LongRoPE's long factors; same size as inv_freq).
void apply_rope(Mat& x, int64_t n_heads, int64_t head_dim, std::span<const double> inv_freq,
                double attention_factor = 1.0, std::span<const double> long_inv_freq = {}, int64_t long_from = 0);

// The rope of Cohere and GLM: the pairs (2i, 2i+1) of the first 2 * inv_freq.size() dims of
// each head rotate by inv_freq[i] (transformers' repeat_interleave'd cos/sin with the
// interleaved rotate_half), the rest pass through; positions are row indices.
void apply_rope_pairs(Mat& x, int64_t n_heads, int64_t head_dim, std::span<const double> inv_freq,
                      double attention_factor = 1.0);

struct AttentionParams {
  int64_t n_heads = 0;     // query heads
  int64_t n_kv_heads = 0;  // query head h reads kv head h / (n_heads / n_kv_heads)
  int64_t head_dim = 0;
  double scale = 0;        // scores = scale * q·k
  double softcap = 0;      // applied to the scaled scores before masking; 0 = none
  int64_t window = 0;      // 0 = full causal history
  // Attention sinks (gpt-oss), one logit per query head, or empty. transformers' eager
  // attention concatenates the sink to the head's masked logits, softmaxes the row, and
  // drops the sink's column: it enlarges the denominator and carries no value.
  std::vector<double> sinks;
};

// Causal (optionally windowed) softmax attention over positions 0..T-1.
// q [T, n_heads * head_dim], k and v [T, n_kv_heads * head_dim] -> [T, n_heads * head_dim].
Mat attention(const Mat& q, const Mat& k, const Mat& v, const AttentionParams& p);

// The dtype transformers holds the weights (and so the activations) in:
// ForwardOptions::weight_dtype, else from_pretrained's dtype="auto" rule (config.json's
// torch_dtype/dtype, else the embedding tensor's own dtype).
Result<DType> weight_dtype(const hf::ModelConfig& config, const hf::TensorView& embed, const ForwardOptions& options);

// Rounds a value to what a tensor of dtype `t` would hold (16-bit types via float32, as
// torch converts a Python float). F64 is returned unchanged.
double round_to_dtype(double value, DType t);

}  // namespace og::reference
