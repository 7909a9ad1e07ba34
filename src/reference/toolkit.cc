#include "reference/toolkit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "base/check.h"
#include "base/half.h"

namespace og::reference {
namespace {

// One row of a checkpoint matrix as float64.
void load_row(const hf::TensorView& w, int64_t r, int64_t cols, std::vector<double>& out) {
  out.resize(static_cast<size_t>(cols));
  const int64_t base = r * cols;
  for (int64_t c = 0; c < cols; ++c) out[static_cast<size_t>(c)] = w.get(base + c);
}

thread_local Int8Inputs* t_int8_inputs = nullptr;

// x with each token's groups of `group` values replaced by their int8 quantization.
Mat quantize_int8(const Mat& x, int64_t group, Int8Inputs& s) {
  OG_CHECK(group > 0 && x.cols % group == 0);
  auto it = std::find_if(s.seen.begin(), s.seen.end(), [&](const Int8Inputs::Seen& e) { return e.group == group && e.x == x.v; });
  if (it == s.seen.end()) {
    s.seen.push_back({.x = x.v, .group = group, .base = s.counter});
    s.counter += static_cast<int64_t>(x.v.size());
    it = s.seen.end() - 1;
  }
  const int64_t base = it->base;
  Mat y = x;
  for (int64_t t = 0; t < x.rows; ++t)
    for (int64_t g0 = 0; g0 < x.cols; g0 += group) {
      double amax = 0;
      for (int64_t i = g0; i < g0 + group; ++i) amax = std::max(amax, std::fabs(x.at(t, i)));
      const double d = amax / 127.0, id = d != 0.0 ? 1.0 / d : 0.0;
      for (int64_t i = g0; i < g0 + group; ++i) {
        const double v = x.at(t, i) * id;
        double q = std::nearbyint(v);
        const int64_t k = base + t * x.cols + i;
        const double distance = std::fabs(std::fabs(v - std::trunc(v)) - 0.5);
        if (s.near_ties != nullptr && distance < s.tie_window && (s.near_ties->empty() || s.near_ties->back().element < k))
          s.near_ties->push_back({.element = k, .token = static_cast<int32_t>(t), .distance = distance});
        if (s.round_other_way != nullptr && std::binary_search(s.round_other_way->begin(), s.round_other_way->end(), k))
          q = q > v ? q - 1 : q + 1;
        y.at(t, i) = q * d;
      }
    }
  return y;
}

// x with every value rounded to the nearest bf16 (ties to even), from float64.
Mat round_bf16(const Mat& x) {
  Mat y = x;
  for (double& v : y.v) {
    if (!std::isfinite(v) || v == 0) continue;
    int e;
    std::frexp(v, &e);  // |v| in [2^(e-1), 2^e): 8 significant bits step by 2^(e-8)
    const double step = std::ldexp(1.0, std::max(e, -125) - 8);  // below 2^-126: the subnormals' step
    v = std::nearbyint(v / step) * step;  // v / step is exact (a power of two); half to even
    if (std::fabs(v) >= 0x1p128) v = std::copysign(std::numeric_limits<double>::infinity(), v);
  }
  return y;
}

}  // namespace

void set_int8_linear_inputs(Int8Inputs* state) { t_int8_inputs = state; }

namespace {

// x as a linear of weight `name` takes it: quantized to int8 or rounded to bf16 where
// set_int8_linear_inputs says so (into `storage`), else x itself.
const Mat& linear_input(const Mat& x, const std::string& name, Mat& storage) {
  if (t_int8_inputs != nullptr)
    if (auto it = t_int8_inputs->weights->find(name); it != t_int8_inputs->weights->end())
      storage = quantize_int8(x, it->second, *t_int8_inputs);
  if (t_int8_inputs != nullptr && t_int8_inputs->bf16_weights != nullptr && t_int8_inputs->bf16_weights->contains(name))
    storage = round_bf16(x);
  return storage.rows > 0 ? storage : x;
}

}  // namespace

Mat linear_rows(const Mat& x_in, const hf::TensorView& w, int64_t row_begin, int64_t n_rows) {
  OG_CHECK(w.shape.size() == 2 && w.shape[1] == x_in.cols);
  Mat quantized;
  const Mat& x = linear_input(x_in, w.name, quantized);
  OG_CHECK(row_begin >= 0 && row_begin + n_rows <= w.shape[0]);
  Mat y(x.rows, n_rows);  // [T, n_rows]
  std::vector<double> wrow;
  for (int64_t o = 0; o < n_rows; ++o) {
    load_row(w, row_begin + o, x.cols, wrow);
    for (int64_t t = 0; t < x.rows; ++t) {
      const double* xr = x.row(t);
      double acc = 0;
      for (int64_t i = 0; i < x.cols; ++i) acc += xr[i] * wrow[static_cast<size_t>(i)];
      y.at(t, o) = acc;
    }
  }
  return y;
}

Mat linear(const Mat& x, const hf::TensorView& w, const hf::TensorView* bias) {
  Mat y = linear_rows(x, w, 0, w.shape[0]);
  if (bias != nullptr) {
    OG_CHECK(bias->numel() == y.cols);
    for (int64_t t = 0; t < y.rows; ++t)
      for (int64_t o = 0; o < y.cols; ++o) y.at(t, o) += bias->get(o);
  }
  return y;
}

Mat conv1d(const Mat& x_in, const hf::TensorView& w, const hf::TensorView* bias, int64_t col_begin, int64_t n_cols) {
  OG_CHECK(w.shape.size() == 2 && w.shape[0] == x_in.cols);
  const int64_t out = w.shape[1];
  if (n_cols < 0) n_cols = out - col_begin;
  OG_CHECK(col_begin >= 0 && col_begin + n_cols <= out);
  Mat quantized;
  const Mat& x = linear_input(x_in, w.name, quantized);
  Mat y(x.rows, n_cols);  // [T, n_cols]
  std::vector<double> wrow;  // row i of W: input i's weight to every output
  for (int64_t i = 0; i < x.cols; ++i) {
    load_row(w, i, out, wrow);
    for (int64_t t = 0; t < x.rows; ++t) {
      const double xi = x.at(t, i);
      double* yr = y.row(t);
      for (int64_t o = 0; o < n_cols; ++o) yr[o] += xi * wrow[static_cast<size_t>(col_begin + o)];
    }
  }
  if (bias != nullptr) {
    OG_CHECK(bias->numel() == out);
    for (int64_t t = 0; t < y.rows; ++t)
      for (int64_t o = 0; o < n_cols; ++o) y.at(t, o) += bias->get(col_begin + o);
  }
  return y;
}

void add_inplace(Mat& out, const Mat& in) {
  OG_CHECK(out.rows == in.rows && out.cols == in.cols);
  for (size_t i = 0; i < out.v.size(); ++i) out.v[i] += in.v[i];
}

Mat rms_norm(const Mat& x, std::span<const double> w, double eps, NormStyle style, int64_t group) {
  OG_CHECK(group > 0 && x.cols % group == 0 && static_cast<int64_t>(w.size()) == group);
  Mat y(x.rows, x.cols);
  for (int64_t t = 0; t < x.rows; ++t) {
    for (int64_t g0 = 0; g0 < x.cols; g0 += group) {
      const double* xs = x.row(t) + g0;
      double* ys = y.row(t) + g0;
      double mean_sq = 0;
      for (int64_t i = 0; i < group; ++i) mean_sq += xs[i] * xs[i];
      mean_sq /= static_cast<double>(group);
      const double inv_rms = 1.0 / std::sqrt(mean_sq + eps);
      for (int64_t i = 0; i < group; ++i) {
        const double wi = w[static_cast<size_t>(i)];
        const double gain = style == NormStyle::kOnePlusWeight ? 1.0 + wi : wi;
        ys[i] = xs[i] * inv_rms * gain;
      }
    }
  }
  return y;
}

Mat layer_norm(const Mat& x, std::span<const double> w, std::span<const double> b, double eps, int64_t group) {
  OG_CHECK(group > 0 && x.cols % group == 0);
  OG_CHECK(w.empty() || static_cast<int64_t>(w.size()) == group || static_cast<int64_t>(w.size()) == x.cols);
  OG_CHECK(b.empty() || static_cast<int64_t>(b.size()) == group || static_cast<int64_t>(b.size()) == x.cols);
  Mat y(x.rows, x.cols);
  for (int64_t t = 0; t < x.rows; ++t)
    for (int64_t g0 = 0; g0 < x.cols; g0 += group) {
      const double* xs = x.row(t) + g0;
      double* ys = y.row(t) + g0;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < group; ++i) mean += xs[i];
      mean /= static_cast<double>(group);
      for (int64_t i = 0; i < group; ++i) var += (xs[i] - mean) * (xs[i] - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(group) + eps);
      for (int64_t i = 0; i < group; ++i) {
        const size_t kw = static_cast<size_t>(static_cast<int64_t>(w.size()) == x.cols ? g0 + i : i);
        const size_t kb = static_cast<size_t>(static_cast<int64_t>(b.size()) == x.cols ? g0 + i : i);
        ys[i] = (xs[i] - mean) * inv * (w.empty() ? 1.0 : w[kw]) + (b.empty() ? 0.0 : b[kb]);
      }
    }
  return y;
}

Result<Activation> parse_activation(const std::string& name, const std::string& field) {
  if (name == "silu" || name == "swish") return Activation::kSilu;
  if (name == "gelu_pytorch_tanh" || name == "gelu_new" || name == "gelu_fast") return Activation::kGeluTanh;
  if (name == "gelu") return Activation::kGeluErf;
  if (name == "relu") return Activation::kRelu;
  if (name == "relu2") return Activation::kRelu2;
  return unsupported("{} = '{}' is not supported by the reference (supported: silu, swish, gelu, "
                     "gelu_pytorch_tanh, gelu_new, gelu_fast, relu, relu2)",
                     field, name);
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); }

double activate(Activation a, double x) {
  switch (a) {
    case Activation::kSilu: return silu(x);
    case Activation::kGeluTanh: return gelu_tanh(x);
    case Activation::kGeluErf: return gelu_erf(x);
    case Activation::kRelu: return x > 0 ? x : 0.0;
    case Activation::kRelu2: return x > 0 ? x * x : std::isnan(x) ? x : 0.0;  // torch.square(relu(x)): NaN stays
  }
  return x;
}

double softcap(double x, double cap) { return cap > 0 ? cap * std::tanh(x / cap) : x; }

bool visible(int64_t p, int64_t j, int64_t window) { return j <= p && (window <= 0 || j > p - window); }

void apply_rope(Mat& x, int64_t n_heads, int64_t head_dim, std::span<const double> inv_freq,
                double attention_factor, std::span<const double> long_inv_freq, int64_t long_from) {
  const int64_t half = static_cast<int64_t>(inv_freq.size());
  OG_CHECK(x.cols == n_heads * head_dim && 2 * half <= head_dim);
  OG_CHECK(long_inv_freq.empty() || long_inv_freq.size() == inv_freq.size());
  for (int64_t t = 0; t < x.rows; ++t) {
    const std::span<const double> f = !long_inv_freq.empty() && t >= long_from ? long_inv_freq : inv_freq;
    for (int64_t h = 0; h < n_heads; ++h) {
      double* xs = x.row(t) + h * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(t) * f[static_cast<size_t>(i)];
        const double c = std::cos(angle) * attention_factor, s = std::sin(angle) * attention_factor;
        const double a = xs[i], b = xs[i + half];
        xs[i] = a * c - b * s;
        xs[i + half] = b * c + a * s;
      }
    }
  }
}

void apply_rope_pairs(Mat& x, int64_t n_heads, int64_t head_dim, std::span<const double> inv_freq, double attention_factor) {
  const int64_t half = static_cast<int64_t>(inv_freq.size());
  OG_CHECK(x.cols == n_heads * head_dim && 2 * half <= head_dim);
  for (int64_t t = 0; t < x.rows; ++t)
    for (int64_t h = 0; h < n_heads; ++h) {
      double* xs = x.row(t) + h * head_dim;
      for (int64_t i = 0; i < half; ++i) {  // dims 2i and 2i+1 turn by frequency i
        const double angle = static_cast<double>(t) * inv_freq[static_cast<size_t>(i)];
        const double c = std::cos(angle) * attention_factor, s = std::sin(angle) * attention_factor;
        const double a = xs[2 * i], b = xs[2 * i + 1];
        xs[2 * i] = a * c - b * s;
        xs[2 * i + 1] = b * c + a * s;
      }
    }
}

Mat attention(const Mat& q, const Mat& k, const Mat& v, const AttentionParams& p) {
  const int64_t T = q.rows, D = p.head_dim;
  OG_CHECK(p.n_kv_heads > 0 && p.n_heads % p.n_kv_heads == 0);
  OG_CHECK(q.cols == p.n_heads * D && k.cols == p.n_kv_heads * D && v.cols == p.n_kv_heads * D);
  OG_CHECK(k.rows == T && v.rows == T);
  OG_CHECK(p.sinks.empty() || static_cast<int64_t>(p.sinks.size()) == p.n_heads);
  const int64_t group = p.n_heads / p.n_kv_heads;
  Mat out(T, p.n_heads * D);  // [T, n_heads * head_dim]
  std::vector<double> scores(static_cast<size_t>(T));
  for (int64_t h = 0; h < p.n_heads; ++h) {
    const int64_t kvh = h / group;
    for (int64_t t = 0; t < T; ++t) {
      const double* qs = q.row(t) + h * D;
      // The logits row is [scores of visible keys..., sink]; the sink joins max and sum only.
      const bool has_sink = !p.sinks.empty();
      const double sink = has_sink ? p.sinks[static_cast<size_t>(h)] : 0.0;
      double max_score = has_sink ? sink : -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < T; ++j) {
        if (!visible(t, j, p.window)) continue;
        const double* ks = k.row(j) + kvh * D;
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += qs[d] * ks[d];
        const double s = softcap(p.scale * dot, p.softcap);
        scores[static_cast<size_t>(j)] = s;
        max_score = std::max(max_score, s);
      }
      double denom = has_sink ? std::exp(sink - max_score) : 0.0;
      for (int64_t j = 0; j < T; ++j) {
        if (!visible(t, j, p.window)) continue;
        double& s = scores[static_cast<size_t>(j)];
        s = std::exp(s - max_score);
        denom += s;
      }
      double* os = out.row(t) + h * D;
      for (int64_t j = 0; j < T; ++j) {
        if (!visible(t, j, p.window)) continue;
        const double pj = scores[static_cast<size_t>(j)] / denom;
        const double* vs = v.row(j) + kvh * D;
        for (int64_t d = 0; d < D; ++d) os[d] += pj * vs[d];
      }
    }
  }
  return out;
}

double round_to_dtype(double value, DType t) {
  switch (t) {
    case DType::kF64: return value;
    case DType::kF32: return static_cast<double>(static_cast<float>(value));
    case DType::kBF16: return bf16_to_float(float_to_bf16(static_cast<float>(value)));
    case DType::kF16: return fp16_to_float(float_to_fp16(static_cast<float>(value)));
    default: return value;
  }
}

Result<DType> weight_dtype(const hf::ModelConfig& c, const hf::TensorView& embed, const ForwardOptions& options) {
  if (options.weight_dtype) {
    if (!is_float_dtype(*options.weight_dtype))
      return usage_error("ForwardOptions.weight_dtype {} is not a float dtype", dtype_name(*options.weight_dtype));
    return *options.weight_dtype;
  }
  if (c.torch_dtype.empty()) return embed.dtype;
  if (c.torch_dtype == "bfloat16") return DType::kBF16;
  if (c.torch_dtype == "float16") return DType::kF16;
  if (c.torch_dtype == "float32") return DType::kF32;
  if (c.torch_dtype == "float64") return DType::kF64;
  return unsupported("{}: torch_dtype '{}' is not supported by the reference (bfloat16, float16, float32, float64)",
                     c.path, c.torch_dtype);
}

}  // namespace og::reference
