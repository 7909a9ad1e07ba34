// Small per-token kernels that combine or rescale whole rows: stream mixing, RMS matching, the
// gaussian top-k cutoff, and the embedding overlay (rows of a table for a range of ids). They
// are scalar on purpose: they touch a few rows of a few
// thousand values per token (next to matrix products of millions), and their sums run in
// double so that a cutoff or a rescale computed from a row's statistics stays as close as
// possible to an exact computation (a cutoff amplifies any rounding in mean and std).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/kernels.h"

namespace og::kernels {

void stream_mix(const float* x, const float* coefs, int64_t T, const StreamMixParams& p, float* y) {
  const int64_t W = p.width, in_w = p.n_in * W, out_w = p.n_out * W;
  for (int64_t t = 0; t < T; ++t) {
    const float* c = p.coefs_per_token ? coefs + t * p.n_out * p.n_in : coefs;  // [n_out, n_in]
    const float* xt = x + t * in_w;                                              // [n_in, W]
    float* yt = y + t * out_w;                                                   // [n_out, W]
    for (int64_t j = 0; j < p.n_out; ++j)
      for (int64_t h = 0; h < W; ++h) {
        double acc = 0;
        for (int64_t i = 0; i < p.n_in; ++i) acc += static_cast<double>(c[j * p.n_in + i]) * xt[i * W + h];
        yt[j * W + h] = static_cast<float>(acc);
      }
  }
}

void rms_match(const float* x, const float* ref, int64_t T, int64_t groups, int64_t dim, float eps, float* y) {
  for (int64_t t = 0; t < T; ++t) {
    const float* r = ref + t * dim;  // [dim]
    double ref_ss = 0;
    for (int64_t h = 0; h < dim; ++h) ref_ss += static_cast<double>(r[h]) * r[h];
    const double target = std::sqrt(ref_ss / static_cast<double>(dim));
    for (int64_t g = 0; g < groups; ++g) {
      const float* xg = x + (t * groups + g) * dim;  // [dim]
      float* yg = y + (t * groups + g) * dim;
      double ss = 0;
      for (int64_t h = 0; h < dim; ++h) ss += static_cast<double>(xg[h]) * xg[h];
      const double factor = target / std::sqrt(std::max(ss / static_cast<double>(dim), static_cast<double>(eps)));
      for (int64_t h = 0; h < dim; ++h) yg[h] = static_cast<float>(xg[h] * factor);
    }
  }
}

void embedding_overlay(const float* x, const int32_t* ids, int64_t T, const Matrix& table, int64_t first_id, float* y) {
  const int64_t W = table.cols;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t row = int64_t{ids[t]} - first_id;
    if (row >= 0 && row < table.rows) {
      const auto r = static_cast<int32_t>(row);
      embedding(&r, 1, table, 1.0f, y + t * W);
    } else {
      std::memcpy(y + t * W, x + t * W, static_cast<size_t>(W) * sizeof(float));
    }
  }
}

void gaussian_top_k(const float* x, int64_t rows, int64_t dim, float multiplier, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    double mean = 0;
    for (int64_t i = 0; i < dim; ++i) mean += xr[i];
    mean /= static_cast<double>(dim);
    double var = 0;
    for (int64_t i = 0; i < dim; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const double cutoff = mean + std::sqrt(var / static_cast<double>(dim)) * multiplier;
    for (int64_t i = 0; i < dim; ++i) yr[i] = static_cast<float>(std::max(xr[i] - cutoff, 0.0));
  }
}

}  // namespace og::kernels
