// head_linear (kernels.h): a linear per group of columns, each group's matrix a view into
// rows of one weight. Every group is one task computed whole by linear() on one thread, so the
// result depends neither on the thread count nor on T (linear's own promise, per row).
#include <cstring>
#include <vector>

#include "base/check.h"
#include "base/thread_pool.h"
#include "kernels/kernels.h"

namespace og::kernels {

void head_linear(const float* x, int64_t T, int64_t groups, int64_t x_stride, const Matrix& w, float* y,
                 ThreadPool* pool) {
  if (T <= 0 || groups <= 0) return;
  OG_CHECK(w.type == StorageType::kF32 || w.type == StorageType::kBF16 || w.type == StorageType::kF16);
  OG_CHECK(w.rows % groups == 0 && x_stride >= w.cols);
  const int64_t out = w.rows / groups, in = w.cols;
  OG_CHECK(w.row_block == 0 || out % kRowBlock == 0);
  // Rows [g out, (g + 1) out) start g out rows in, row-major or (whole blocks) interleaved alike.
  const int64_t group_bytes = out * row_storage_bytes(w);
  auto group = [&](int64_t g) {
    Matrix wg = w;
    wg.rows = out;
    wg.data = static_cast<const uint8_t*>(w.data) + g * group_bytes;
    if (T == 1) return linear(x + g * x_stride, 1, wg, nullptr, y + g * out);
    // The group's columns gathered into [T, in], its output scattered from [T, out]; the buffers
    // are the thread's, kept across groups and steps (a prefill runs this every layer).
    thread_local std::vector<float> xg, yg;
    xg.resize(static_cast<size_t>(T * in));
    yg.resize(static_cast<size_t>(T * out));
    for (int64_t t = 0; t < T; ++t)
      std::memcpy(xg.data() + t * in, x + t * groups * x_stride + g * x_stride, static_cast<size_t>(in) * sizeof(float));
    linear(xg.data(), T, wg, nullptr, yg.data());
    for (int64_t t = 0; t < T; ++t)
      std::memcpy(y + t * groups * out + g * out, yg.data() + t * out, static_cast<size_t>(out) * sizeof(float));
  };
  if (pool == nullptr || groups == 1) {
    for (int64_t g = 0; g < groups; ++g) group(g);
    return;
  }
  pool->run(groups, group);
}

}  // namespace og::kernels
