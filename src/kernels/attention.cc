// update_and_attend's two halves (DESIGN.md §2): write this step's k/v by position, then
// attend each query over the keys it may see, reading K/V in place from flat or ring
// storage with a running (one-pass) softmax, so no score buffer or gathered copy exists.
#include <cmath>
#include <algorithm>
#include <limits>

#include "kernels/convert.h"
#include "kernels/kernels.h"

namespace og::kernels {

void kv_write(const float* k, const float* v, int64_t T, int64_t p0, const KvStorage& kv) {
  const int64_t D = kv.head_dim, width = int64_t{kv.kv_heads} * D;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t slot = kv.slot(p0 + t);
    for (int32_t h = 0; h < kv.kv_heads; ++h) {
      const int64_t dst = (int64_t{h} * kv.slots + slot) * D;
      for (int64_t i = 0; i < D; ++i) {
        store(kv.k, dst + i, kv.type, k[t * width + h * D + i]);
        store(kv.v, dst + i, kv.type, v[t * width + h * D + i]);
      }
    }
  }
}

void attend(const AttendParams& p, const float* q, int64_t T, int64_t p0, const KvStorage& kv, float* out) {
  const int64_t D = p.head_dim, group = p.n_heads / p.n_kv_heads;
  const int64_t width = int64_t{p.n_heads} * D;
  float acc[kMaxHeadDim];
  float key[kMaxHeadDim];
  for (int64_t t = 0; t < T; ++t) {
    const int64_t pos = p0 + t;
    const int64_t first = p.window > 0 ? std::max<int64_t>(0, pos - p.window + 1) : 0;
    for (int32_t h = 0; h < p.n_heads; ++h) {
      const float* qh = q + t * width + int64_t{h} * D;
      const int64_t kvh = h / group;
      float m = -std::numeric_limits<float>::infinity(), l = 0;
      for (int64_t i = 0; i < D; ++i) acc[i] = 0;
      for (int64_t j = first; j <= pos; ++j) {
        const int64_t base = (kvh * kv.slots + kv.slot(j)) * D;
        for (int64_t i = 0; i < D; ++i) key[i] = load(kv.k, base + i, kv.type);
        float s = 0;
        for (int64_t i = 0; i < D; ++i) s += qh[i] * key[i];
        s *= p.scale;
        if (p.softcap > 0) s = p.softcap * std::tanh(s / p.softcap);
        if (s > m) {
          const float c = std::exp(m - s);
          l *= c;
          for (int64_t i = 0; i < D; ++i) acc[i] *= c;
          m = s;
        }
        const float w = std::exp(s - m);
        l += w;
        for (int64_t i = 0; i < D; ++i) acc[i] += w * load(kv.v, base + i, kv.type);
      }
      float* oh = out + t * width + int64_t{h} * D;
      const float inv = 1.0f / l;
      for (int64_t i = 0; i < D; ++i) oh[i] = acc[i] * inv;
    }
  }
}

}  // namespace og::kernels
