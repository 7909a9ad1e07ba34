// linear: y = x w^T + b. Each output row of w is streamed once per call and reused for
// every token of the step, so prefill reads the weights once, not T times.
#include <vector>

#include "kernels/convert.h"
#include "kernels/kernels.h"

namespace og::kernels {
namespace {

template <typename Load>
void linear_impl(const float* x, int64_t T, const Matrix& w, const float* bias, float* y, Load load_row) {
  const int64_t in = w.cols, out = w.rows;
  std::vector<float> row(static_cast<size_t>(in));
  for (int64_t o = 0; o < out; ++o) {
    const float* wr = load_row(o, row.data());
    const float b = bias ? bias[o] : 0.0f;
    for (int64_t t = 0; t < T; ++t) {
      const float* xt = x + t * in;
      float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
      int64_t i = 0;
      for (; i + 4 <= in; i += 4) {
        acc0 += xt[i] * wr[i];
        acc1 += xt[i + 1] * wr[i + 1];
        acc2 += xt[i + 2] * wr[i + 2];
        acc3 += xt[i + 3] * wr[i + 3];
      }
      for (; i < in; ++i) acc0 += xt[i] * wr[i];
      y[t * out + o] = (acc0 + acc1) + (acc2 + acc3) + b;
    }
  }
}

}  // namespace

void linear(const float* x, int64_t T, const Matrix& w, const float* bias, float* y) {
  if (w.type == ElemType::kF32) {
    const float* base = static_cast<const float*>(w.data);
    linear_impl(x, T, w, bias, y, [&](int64_t o, float*) { return base + o * w.cols; });
    return;
  }
  linear_impl(x, T, w, bias, y, [&](int64_t o, float* buf) {
    for (int64_t i = 0; i < w.cols; ++i) buf[i] = load(w.data, o * w.cols + i, w.type);
    return static_cast<const float*>(buf);
  });
}

}  // namespace og::kernels
