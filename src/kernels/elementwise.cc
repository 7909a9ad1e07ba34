#include <cmath>

#include "kernels/convert.h"
#include "kernels/kernels.h"

namespace og::kernels {

namespace {
inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
// gelu with the tanh approximation, as torch's gelu(approximate="tanh").
inline float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}
inline float apply(float x, Activation a) { return a == Activation::kSilu ? silu(x) : gelu_tanh(x); }
}  // namespace

void act(const float* x, int64_t n, Activation a, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = apply(x[i], a);
}
void act_mul(const float* gate, const float* up, int64_t n, Activation a, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = apply(gate[i], a) * up[i];
}
void add(const float* a, const float* b, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
void mul(const float* a, const float* b, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}
void scale(const float* x, int64_t n, float s, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s;
}
void softcap(const float* x, int64_t n, float cap, float* y) {
  const float inv = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) y[i] = cap * std::tanh(x[i] * inv);
}

void slice_columns(const float* x, int64_t T, int64_t in_width, int64_t begin, int64_t width, float* y) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < width; ++i) y[t * width + i] = x[t * in_width + begin + i];
}

void rms_norm(const float* x, int64_t rows, int64_t dim, const float* w, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(dim) + eps));
    if (w != nullptr) {
      for (int64_t i = 0; i < dim; ++i) yr[i] = xr[i] * inv * w[i];
    } else {
      for (int64_t i = 0; i < dim; ++i) yr[i] = xr[i] * inv;
    }
  }
}

void rope(const float* x, const int32_t* pos, int64_t T, const RopeParams& p, float* y) {
  const int32_t half = p.rotary_dim / 2;
  const int64_t width = int64_t{p.n_heads} * p.head_dim;
  for (int64_t t = 0; t < T; ++t) {
    float cs[kMaxHeadDim / 2], sn[kMaxHeadDim / 2];
    for (int32_t i = 0; i < half; ++i) {
      // The angle in double: positions up to 2^30 times small frequencies keep f32 precision.
      const double angle = static_cast<double>(pos[t]) * static_cast<double>(p.inv_freq[i]);
      cs[i] = static_cast<float>(std::cos(angle));
      sn[i] = static_cast<float>(std::sin(angle));
    }
    for (int32_t h = 0; h < p.n_heads; ++h) {
      const float* xh = x + t * width + int64_t{h} * p.head_dim;
      float* yh = y + t * width + int64_t{h} * p.head_dim;
      for (int32_t i = 0; i < half; ++i) {
        const float a = xh[i], b = xh[i + half];
        yh[i] = a * cs[i] - b * sn[i];
        yh[i + half] = b * cs[i] + a * sn[i];
      }
      for (int32_t i = p.rotary_dim; i < p.head_dim; ++i) yh[i] = xh[i];
    }
  }
}

void embedding(const int32_t* ids, int64_t T, const Matrix& table, float s, float* y) {
  for (int64_t t = 0; t < T; ++t) {
    const int64_t id = ids[t] < table.rows ? ids[t] : 0;  // ids past a short table read row 0
    const int64_t row = id * table.cols;
    for (int64_t i = 0; i < table.cols; ++i) y[t * table.cols + i] = load(table.data, row + i, table.type) * s;
  }
}

}  // namespace og::kernels
