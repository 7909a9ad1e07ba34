// Kernels against float64 scalar loops written here, at sizes 1, 7, 31, 32, 33 and 257, on
// every SIMD target compiled into the kernels that this CPU supports; thread and token
// count invariance (bit for bit). Links og_kernels only (the thread pool: base_test; sessions
// with any thread count: session_threads_test).
//
// Tolerances (kTol): weights and caches hold exactly the values the reference uses (bf16
// and f16 rounded here with the test's own conversions), and the kernels widen them
// exactly, so the only error left is f32 arithmetic: accumulation order over up to 257
// terms, and the 1-4 ulp vector exp/tanh. Bounds are relative to the sum of |terms| (linear)
// or to max|v| (attention); measured errors are 10-100x below them, and a wrong index,
// mask or rescale gives errors of order 1.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/thread_pool.h"
#include "f16_oracle.h"
#include "kernels/kernels.h"
#include "test_util.h"

namespace og {
namespace {


constexpr int64_t kSizes[] = {1, 7, 31, 32, 33, 257};
// Token counts of a linear: the sizes, plus the few-token tiles of batched decode (2-5).
constexpr int64_t kTokenCounts[] = {1, 3, 5, 7, 31, 32, 33, 257};

struct Tol {
  StorageType type;
  const char* name;
  double linear;  // |y - ref| <= linear * (sum_i |w_i x_i| + |b|)
  double attend;  // |o - ref| <= attend * max|v|
};
constexpr Tol kTol[] = {
    {StorageType::kF32, "f32", 1e-5, 2e-5},
    {StorageType::kBF16, "bf16", 1e-5, 2e-5},
    {StorageType::kF16, "f16", 1e-5, 2e-5},
};
// Every KV cache type: the float ones, and the block-quantized ones (the reference reads
// the values their blocks hold, so the same bound applies).
constexpr Tol kKvTol[] = {
    kTol[0], kTol[1], kTol[2], {StorageType::kQ8_0, "q8_0", 0, 2e-5}, {StorageType::kQ4_0, "q4_0", 0, 2e-5},
};

// Runs fn once per SIMD target compiled into the kernels and supported here.
template <class Fn>
void for_each_target(const Fn& fn) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    EXPECT_STREQ(kernels::simd_target(), hwy::TargetName(target));
    fn();
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Storage of one dtype with the exact float value of every element.
struct Stored {
  StorageType type;
  std::vector<float> f32;
  std::vector<uint16_t> u16;
  std::vector<double> value;  // what the stored bits mean
  const void* data() const { return type == StorageType::kF32 ? static_cast<const void*>(f32.data()) : u16.data(); }
};

uint16_t round_bf16(float f) {  // round to nearest even
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
float bf16_value(uint16_t h) {
  const uint32_t b = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
using og::testing::f16_value;
using og::testing::round_f16;
double stored_value(float f, StorageType t) {
  switch (t) {
    case StorageType::kF32: return f;
    case StorageType::kBF16: return bf16_value(round_bf16(f));
    case StorageType::kF16: return f16_value(round_f16(f));
    default: break;  // not a float storage type (stored_row reads the KV block types)
  }
  return 0;
}

// The values a cache row x [D] reads as once stored as t: for the KV block types, GGUF's
// q8_0 and q4_0 written here from their definition (blocks of 32 along the row, the last
// one partial; an fp16 scale each; q8_0: d = max|x| / 127, q = round(x / d); q4_0: d = the
// value of largest magnitude / -8, n = min(15, trunc(x / d + 8.5)), value (n - 8) d).
std::vector<double> stored_row(const float* x, int64_t D, StorageType t) {
  std::vector<double> out(static_cast<size_t>(D));
  if (t != StorageType::kQ8_0 && t != StorageType::kQ4_0) {
    for (int64_t i = 0; i < D; ++i) out[i] = stored_value(x[i], t);
    return out;
  }
  for (int64_t b = 0; b < D; b += 32) {
    const int64_t n = std::min<int64_t>(32, D - b);
    float amax = 0, extreme = 0;
    for (int64_t i = b; i < b + n; ++i)
      if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), extreme = x[i];
    const float d = t == StorageType::kQ8_0 ? amax / 127.0f : extreme / -8.0f;
    const float inv = d != 0 ? 1.0f / d : 0.0f;
    const double dh = f16_value(round_f16(d));
    for (int64_t i = b; i < b + n; ++i)
      out[i] = t == StorageType::kQ8_0 ? dh * std::round(x[i] * inv)
                                       : dh * (std::min(15.0f, std::trunc(x[i] * inv + 8.5f)) - 8.0);
  }
  return out;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

Stored make_stored(size_t n, StorageType t, uint32_t seed) {
  Stored s{.type = t, .f32 = random_floats(n, seed), .u16 = {}, .value = {}};
  for (float f : s.f32) {
    if (t == StorageType::kBF16) s.u16.push_back(round_bf16(f));
    if (t == StorageType::kF16) s.u16.push_back(round_f16(f));
    s.value.push_back(stored_value(f, t));
  }
  return s;
}

// A [rows, cols] matrix of s in one storage layout: row-major, or interleaved by blocks of
// 16 rows (kernels.h, written out here from its element-index formula, independently of the
// kernels): block b's column step p (P values of a row per 32-bit lane) holds rows 16b..16b+15.
struct Laid {
  std::vector<float> f32;
  std::vector<uint16_t> u16;
  kernels::Matrix m;
};
enum class Layout { kRowMajor, kInterleaved };
constexpr Layout kLayouts[] = {Layout::kRowMajor, Layout::kInterleaved};
const char* layout_name(Layout l) { return l == Layout::kRowMajor ? "row-major" : "interleaved"; }

Laid lay_out(const Stored& s, int64_t rows, int64_t cols, Layout layout) {
  Laid l;
  l.m = kernels::Matrix{.data = nullptr, .type = s.type, .rows = rows, .cols = cols};
  const int64_t P = s.type == StorageType::kF32 ? 1 : 2;
  if (layout == Layout::kRowMajor) {
    l.f32 = s.f32;
    l.u16 = s.u16;
  } else {
    EXPECT_EQ(cols % P, 0) << "interleaved 16-bit rows hold pairs of columns";
    const int64_t padded = (rows + 15) / 16 * 16;
    if (s.type == StorageType::kF32)  // padding rows: zeros
      l.f32.resize(static_cast<size_t>(padded * cols));
    else
      l.u16.resize(static_cast<size_t>(padded * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k) {
        const size_t to = static_cast<size_t>(((r / 16 * (cols / P) + k / P) * 16 + r % 16) * P + k % P);
        if (s.type == StorageType::kF32)
          l.f32[to] = s.f32[r * cols + k];
        else
          l.u16[to] = s.u16[r * cols + k];
      }
    l.m.row_block = kernels::kRowBlock;
  }
  l.m.data = s.type == StorageType::kF32 ? static_cast<const void*>(l.f32.data()) : l.u16.data();
  return l;
}

using testing::same_bits;

// ---------------------------------------------------------------------------------- linear

TEST(Linear, MatchesFloat64AtEverySizeDtypeAndTarget) {
  ThreadPool pool(2);
  for (const Tol& tol : kTol) {
    SCOPED_TRACE(tol.name);
    for (int64_t rows : kSizes)
      for (int64_t size : kSizes)
        for (Layout layout : kLayouts) {
        SCOPED_TRACE(layout_name(layout));
        // Interleaved 16-bit rows hold pairs of columns: odd sizes become the next even one.
        const int64_t cols = layout == Layout::kInterleaved && tol.type != StorageType::kF32 ? (size + 1) / 2 * 2 : size;
        const Stored w = make_stored(static_cast<size_t>(rows * cols), tol.type, static_cast<uint32_t>(rows * 1000 + cols));
        const std::vector<float> bias = random_floats(static_cast<size_t>(rows), 9);
        const bool with_bias = (rows + cols) % 2 == 0;
        const Laid laid = lay_out(w, rows, cols, layout);
        const kernels::Matrix& m = laid.m;
        for (int64_t T : kTokenCounts) {
          const std::vector<float> x = random_floats(static_cast<size_t>(T * cols), static_cast<uint32_t>(T));
          // float64 reference and its error bound per output.
          std::vector<double> want(static_cast<size_t>(T * rows)), bound(want.size());
          for (int64_t t = 0; t < T; ++t)
            for (int64_t o = 0; o < rows; ++o) {
              double s = with_bias ? bias[o] : 0.0, mag = with_bias ? std::fabs(bias[o]) : 0.0;
              for (int64_t i = 0; i < cols; ++i) {
                s += w.value[o * cols + i] * x[t * cols + i];
                mag += std::fabs(w.value[o * cols + i] * x[t * cols + i]);
              }
              want[t * rows + o] = s;
              bound[t * rows + o] = tol.linear * mag + 1e-30;
            }
          for_each_target([&] {
            std::vector<float> y1(want.size()), y2(want.size());
            kernels::linear(x.data(), T, m, with_bias ? bias.data() : nullptr, y1.data());
            kernels::linear(x.data(), T, m, with_bias ? bias.data() : nullptr, y2.data(), &pool);
            for (size_t k = 0; k < want.size(); ++k)
              ASSERT_LE(std::fabs(y1[k] - want[k]), bound[k])
                  << "rows " << rows << " cols " << cols << " T " << T << " at " << k << ": " << y1[k] << " vs " << want[k];
            ASSERT_TRUE(same_bits(y1, y2)) << "1 vs 2 threads, rows " << rows << " cols " << cols << " T " << T;
          });
        }
      }
  }
}

TEST(Linear, EachRowOfAPrefillEqualsThatTokenAloneBitForBit) {
  for (const Tol& tol : kTol) {
    SCOPED_TRACE(tol.name);
    for (Layout layout : kLayouts) {
    SCOPED_TRACE(layout_name(layout));
    const int64_t rows = 33, cols = layout == Layout::kRowMajor ? 257 : 258;
    const Stored w = make_stored(rows * cols, tol.type, 3);
    const Laid laid = lay_out(w, rows, cols, layout);
    const kernels::Matrix& m = laid.m;
    for (int64_t T : {int64_t{4}, int64_t{33}})  // a few-token tile, and prefill tiles
    for_each_target([&] {
      SCOPED_TRACE(::testing::Message() << "T " << T);
      const std::vector<float> x = random_floats(T * cols, 4), bias = random_floats(rows, 5);
      std::vector<float> all(T * rows), one(rows);
      kernels::linear(x.data(), T, m, bias.data(), all.data());
      for (int64_t t = 0; t < T; ++t) {
        kernels::linear(x.data() + t * cols, 1, m, bias.data(), one.data());
        ASSERT_EQ(std::memcmp(one.data(), all.data() + t * rows, rows * sizeof(float)), 0) << "token " << t;
      }
    });
    }
  }
}

TEST(Linear, LongRowsSplitIntoColumnBlocksMatchFloat64AndDecode) {
  // A prefill step over rows too long for its tokens' x to stay in cache beside the weights
  // accumulates in column blocks (parking its accumulators between them), which must give
  // the same bits as decode's single pass over the row. Row-major tiles do so from a few
  // thousand columns; interleaved ones once a token block's x passes half the L2 (12 tokens
  // of 44002 columns pass its 2 MB cap on AVX-512, 6 tokens pass 1 MB on AVX2).
  ThreadPool pool(2);
  for (const Tol& tol : kTol) {
    SCOPED_TRACE(tol.name);
    for (Layout layout : kLayouts) {
    SCOPED_TRACE(layout_name(layout));
    const int64_t rows = 37, cols = layout == Layout::kRowMajor ? 4100 : 44002, T = 13;
    const Stored w = make_stored(rows * cols, tol.type, 6);
    const std::vector<float> x = random_floats(T * cols, 7);
    const Laid laid = lay_out(w, rows, cols, layout);
    const kernels::Matrix& m = laid.m;
    for_each_target([&] {
      std::vector<float> all(T * rows), one(rows);
      kernels::linear(x.data(), T, m, nullptr, all.data(), &pool);
      for (int64_t t = 0; t < T; ++t) {
        kernels::linear(x.data() + t * cols, 1, m, nullptr, one.data());
        ASSERT_EQ(std::memcmp(one.data(), all.data() + t * rows, rows * sizeof(float)), 0) << "token " << t;
        for (int64_t o = 0; o < rows; ++o) {
          double want = 0, mag = 0;
          for (int64_t i = 0; i < cols; ++i) {
            want += w.value[o * cols + i] * x[t * cols + i];
            mag += std::fabs(w.value[o * cols + i] * x[t * cols + i]);
          }
          ASSERT_LE(std::fabs(one[o] - want), tol.linear * mag) << "token " << t << " row " << o;
        }
      }
    });
    }
  }
}

// XQuant::kBF16 against its definition written out in scalar code (kernels.h): x rounded to
// bf16, then per (row, token) one chain over the pairs of columns, column 2p + 1's product
// fused in before column 2p's. The same bits on every target (vdpbf16ps where the CPU has
// it: random normal values, no subnormals), thread count, token count and column block.
TEST(Linear, BF16ActivationsFollowTheDotBF16ChainBitForBit) {
  ThreadPool pool(2);
  struct Shape {
    int64_t rows, cols;
  };
  // 44002 columns: prefill tiles split the rows into column blocks (see above).
  for (const Shape sh : {Shape{1, 2}, Shape{16, 64}, Shape{37, 258}, Shape{70, 1152}, Shape{19, 44002}}) {
    const int64_t rows = sh.rows, cols = sh.cols;
    SCOPED_TRACE(::testing::Message() << rows << " x " << cols);
    const Stored w = make_stored(static_cast<size_t>(rows * cols), StorageType::kBF16, static_cast<uint32_t>(rows + cols));
    const Laid laid = lay_out(w, rows, cols, Layout::kInterleaved);
    const std::vector<float> bias = random_floats(static_cast<size_t>(rows), 9);
    for (int64_t T : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{13}, int64_t{40}}) {
      if (cols > 10000 && T != 13) continue;
      std::vector<float> x = random_floats(static_cast<size_t>(T * cols), static_cast<uint32_t>(T));
      if (T == 5) x[3 * cols + cols / 2] = std::numeric_limits<float>::quiet_NaN();  // token 3: all NaN
      // Ties of the rounding to bf16 (half way: to the even neighbour), of both parities.
      for (auto [col, bits] : {std::pair{int64_t{0}, 0x3F808000u}, std::pair{cols / 2, 0x3F818000u},
                               std::pair{cols - 1, 0xBF818000u}}) {
        float f;
        std::memcpy(&f, &bits, 4);
        x[static_cast<size_t>((T - 1) * cols + col)] = f;
      }
      std::vector<float> want(static_cast<size_t>(T * rows));
      for (int64_t t = 0; t < T; ++t)
        for (int64_t o = 0; o < rows; ++o) {
          float acc = 0;
          for (int64_t p = 0; p < cols / 2; ++p)
            for (int64_t k : {2 * p + 1, 2 * p})
              acc = std::fma(static_cast<float>(w.value[o * cols + k]), bf16_value(round_bf16(x[t * cols + k])), acc);
          want[t * rows + o] = acc + bias[o];
        }
      for_each_target([&] {
        SCOPED_TRACE(::testing::Message() << "T " << T << (kernels::bf16_dot_native() ? ", vdpbf16ps" : ", FMAs"));
        std::vector<float> y1(want.size()), y2(want.size());
        kernels::linear(x.data(), T, laid.m, bias.data(), y1.data(), nullptr, kernels::XQuant::kBF16);
        kernels::linear(x.data(), T, laid.m, bias.data(), y2.data(), &pool, kernels::XQuant::kBF16);
        for (size_t k = 0; k < want.size(); ++k) {
          if (std::isnan(want[k])) {
            ASSERT_TRUE(std::isnan(y1[k])) << "at " << k;
            continue;
          }
          ASSERT_EQ(y1[k], want[k]) << "at " << k;
        }
        ASSERT_TRUE(std::memcmp(y1.data(), y2.data(), y1.size() * 4) == 0) << "1 vs 2 threads";
      });
    }
  }
}

// linear_group (q, k and v; gate and up): x packed once and the rows of all the linears in
// one run over the pool, in panels sized for their sum; each output must keep the bits of
// its linear run alone, for every storage type, layout, x treatment, token count (decode,
// a stream tile, prefill tiles) and target, and with a zero-row member.
// --math auto's choice (bf16_dot_outruns_fma, a 2 ms probe on one core) against bench's
// compute peak (the same instructions, 50 ms rounds): they agree wherever the peak puts the
// two rates more than 1.5x apart (AMD Zen 5: the dot products at 2x; a Xeon without AMX: 0.5x),
// and a target without vdpbf16ps never runs fast.
TEST(MathAuto, ChoosesTheDotProductsOnlyWhereTheyOutrunTheFmas) {
  for_each_target([] {
    const bool fast = kernels::bf16_dot_outruns_fma();
    EXPECT_EQ(kernels::bf16_dot_outruns_fma(), fast) << "decided once per target";
    if (!kernels::bf16_dot_native()) {
      EXPECT_FALSE(fast);
      return;
    }
    const kernels::ComputePeak peak = kernels::compute_peak(nullptr);
    const double ratio = peak.bf16_flop_s / peak.f32_flop_s;
    std::printf("[ %s: bf16 dot products at %.2fx the f32 FMAs' flops: auto runs %s ]\n", kernels::simd_target(), ratio,
                fast ? "fast" : "exact");
    if (ratio > 1.5) EXPECT_TRUE(fast) << ratio;
    if (ratio < 1 / 1.5) EXPECT_FALSE(fast) << ratio;
  });
}

TEST(Linear, AGroupOverOneXEqualsEachLinearAloneBitForBit) {
  ThreadPool pool(2);
  const int64_t cols = 258;
  const std::vector<int64_t> rows = {70, 16, 5, 0};
  for (const Tol& tol : kTol)
    for (Layout layout : kLayouts)
      for (kernels::XQuant xquant : {kernels::XQuant::kNone, kernels::XQuant::kBF16}) {
        if (xquant == kernels::XQuant::kBF16 && (tol.type != StorageType::kBF16 || layout != Layout::kInterleaved)) continue;
        SCOPED_TRACE(::testing::Message() << tol.name << " " << layout_name(layout)
                                          << (xquant == kernels::XQuant::kBF16 ? " bf16 x" : ""));
        std::vector<Stored> stored;
        std::vector<Laid> laid;
        for (size_t i = 0; i < rows.size(); ++i)
          stored.push_back(make_stored(static_cast<size_t>(rows[i] * cols), tol.type, static_cast<uint32_t>(50 + i)));
        for (size_t i = 0; i < rows.size(); ++i) laid.push_back(lay_out(stored[i], rows[i], cols, layout));
        const std::vector<float> bias = random_floats(70, 51);
        for (int64_t T : {int64_t{1}, int64_t{3}, int64_t{13}, int64_t{40}}) {
          const std::vector<float> x = random_floats(static_cast<size_t>(T * cols), static_cast<uint32_t>(T + 52));
          for_each_target([&] {
            SCOPED_TRACE(::testing::Message() << "T " << T);
            std::vector<std::vector<float>> alone, grouped;
            std::vector<kernels::LinearOut> outs;
            for (size_t i = 0; i < rows.size(); ++i) {
              const float* b = i == 1 ? nullptr : bias.data();
              alone.emplace_back(static_cast<size_t>(T * rows[i]));
              grouped.emplace_back(static_cast<size_t>(T * rows[i]), -1.0f);
              kernels::linear(x.data(), T, laid[i].m, b, alone.back().data(), nullptr, xquant);
            }
            for (size_t i = 0; i < rows.size(); ++i)
              outs.push_back({.w = laid[i].m, .bias = i == 1 ? nullptr : bias.data(), .y = grouped[i].data()});
            kernels::linear_group(x.data(), T, outs, &pool, xquant);
            for (size_t i = 0; i < rows.size(); ++i) ASSERT_TRUE(same_bits(alone[i], grouped[i])) << "linear " << i;
          });
        }
      }
}

// A linear per group of columns: against float64, each group reading the first `in` of its
// stride's columns; rows of a prefill equal the token alone, and 1 thread equals 2.
TEST(HeadLinear, EachGroupMeetsItsOwnColumnsAndMatrixRows) {
  ThreadPool pool(2);
  const int64_t groups = 3, in = 10, stride = 13;
  for (const Tol& tol : kTol)
    for (Layout layout : kLayouts)
      for (int64_t out : {int64_t{16}, int64_t{5}}) {
        if (layout == Layout::kInterleaved && out % 16 != 0) continue;  // groups must be whole blocks
        SCOPED_TRACE(::testing::Message() << tol.name << " " << layout_name(layout) << " out " << out);
        const int64_t rows = groups * out;
        const Stored w = make_stored(static_cast<size_t>(rows * in), tol.type, static_cast<uint32_t>(out + 70));
        const Laid laid = lay_out(w, rows, in, layout);
        for (int64_t T : {int64_t{1}, int64_t{7}}) {
          std::vector<float> x = random_floats(static_cast<size_t>(T * groups * stride), static_cast<uint32_t>(T + 71));
          for_each_target([&] {
            std::vector<float> y(static_cast<size_t>(T * rows), -1.0f), y2(y.size(), -2.0f);
            kernels::head_linear(x.data(), T, groups, stride, laid.m, y.data());
            kernels::head_linear(x.data(), T, groups, stride, laid.m, y2.data(), &pool);
            ASSERT_TRUE(same_bits(y, y2)) << "1 vs 2 threads";
            for (int64_t t = 0; t < T; ++t)
              for (int64_t g = 0; g < groups; ++g)
                for (int64_t r = 0; r < out; ++r) {
                  double s = 0, mag = 0;
                  for (int64_t j = 0; j < in; ++j) {
                    const double p = w.value[static_cast<size_t>((g * out + r) * in + j)] *
                                     x[static_cast<size_t>(t * groups * stride + g * stride + j)];
                    s += p;
                    mag += std::fabs(p);
                  }
                  ASSERT_LE(std::fabs(y[static_cast<size_t>(t * rows + g * out + r)] - s), tol.linear * mag + 1e-30)
                      << "token " << t << " group " << g << " row " << r;
                }
            for (int64_t t = 0; t < T; ++t) {
              std::vector<float> one(static_cast<size_t>(rows));
              kernels::head_linear(x.data() + t * groups * stride, 1, groups, stride, laid.m, one.data());
              ASSERT_EQ(std::memcmp(one.data(), y.data() + t * rows, one.size() * sizeof(float)), 0) << "token " << t;
            }
          });
        }
      }
}

TEST(Embedding, RowsWidenExactlyAndScale) {
  for (const Tol& tol : kTol) {
    SCOPED_TRACE(tol.name);
    for (int64_t size : kSizes) {
      const int64_t vocab = 11;
      for (Layout layout : kLayouts) {
      SCOPED_TRACE(layout_name(layout));
      const int64_t dim = layout == Layout::kInterleaved && tol.type != StorageType::kF32 ? (size + 1) / 2 * 2 : size;
      const Stored table = make_stored(vocab * dim, tol.type, 7);
      const Laid laid = lay_out(table, vocab, dim, layout);
      const kernels::Matrix& m = laid.m;
      const std::vector<int32_t> ids = {3, 0, 10, 3, 12};  // 12 is past the table: reads row 0
      for_each_target([&] {
        std::vector<float> y(ids.size() * dim);
        kernels::embedding(ids.data(), static_cast<int64_t>(ids.size()), m, 0.5f, y.data());
        for (size_t t = 0; t < ids.size(); ++t) {
          const int64_t row = ids[t] < vocab ? ids[t] : 0;
          for (int64_t i = 0; i < dim; ++i)
            ASSERT_EQ(y[t * dim + i], static_cast<float>(table.value[row * dim + i] * 0.5)) << "dim " << dim;
        }
        for (int64_t i = 0; i < dim; ++i)  // and matrix_at, one weight at a time
          ASSERT_EQ(kernels::matrix_at(m, vocab - 1, i), static_cast<float>(table.value[(vocab - 1) * dim + i]));
      });
      }
    }
  }
}

// ------------------------------------------------------------------------------- attention

struct AttendCase {
  int32_t n_heads, n_kv_heads, head_dim;
  int64_t T, window, chunk;
  bool ring;
  float softcap;
  int64_t p0 = 0;  // position of the step; 0: wrap a ring 3 times, or 40 for flat storage
  bool sinks = false;  // a sink logit per query head, in [-4, 6]: from negligible to dominant
};

// Writes positions 0 .. p0 + T - 1 in steps of at most `chunk` (the last step: T tokens at
// p0), then attends that last step on every target; compares with float64 over the full
// history, 1 vs pool threads, and each query of the step alone.
void check_attend(const AttendCase& c, const Tol& tol, ThreadPool* pool) {
  const int64_t D = c.head_dim, kvw = int64_t{c.n_kv_heads} * D, qw = int64_t{c.n_heads} * D;
  // Ring: window + chunk - 1 slots, wrapped several times before the step. Flat: the history.
  const int64_t slots_ring = c.window + c.chunk - 1;
  const int64_t p0 = c.p0 > 0 ? c.p0 : c.ring ? 3 * slots_ring + 5 : 40;
  const int64_t L = p0 + c.T;
  const int64_t slots = c.ring ? slots_ring : L;
  const std::vector<float> k = random_floats(L * kvw, 11), v = random_floats(L * kvw, 12);
  const std::vector<float> q = random_floats(c.T * qw, 13);
  std::vector<uint8_t> kmem(c.n_kv_heads * slots * kv_row_bytes(tol.type, D)), vmem(kmem.size());
  const kernels::KvStorage kv{.k = kmem.data(), .v = vmem.data(), .type = tol.type, .kv_heads = c.n_kv_heads,
                              .head_dim = c.head_dim, .slots = slots, .ring = c.ring};
  for (int64_t p = 0; p < p0;) {
    const int64_t n = std::min(c.chunk, p0 - p);
    kernels::kv_write(k.data() + p * kvw, v.data() + p * kvw, n, p, kv);
    p += n;
  }
  kernels::kv_write(k.data() + p0 * kvw, v.data() + p0 * kvw, c.T, p0, kv);
  const float scale = 2.0f / std::sqrt(static_cast<float>(D));
  const std::vector<float> sinks = random_floats(c.n_heads, 14, -4, 6);
  const kernels::AttendParams params{.scale = scale, .softcap = c.softcap, .window = static_cast<int32_t>(c.window),
                                     .n_heads = c.n_heads, .n_kv_heads = c.n_kv_heads, .head_dim = c.head_dim,
                                     .sinks = c.sinks ? sinks.data() : nullptr};
  // The values the cache holds [L, kvw], then the float64 reference [T, n_heads * D] and
  // max|v| of each query's keys.
  std::vector<double> ks(L * kvw), vs(L * kvw);
  for (int64_t r = 0; r < L * c.n_kv_heads; ++r)
    for (auto [from, to] : {std::pair{&k, &ks}, std::pair{&v, &vs}}) {
      const std::vector<double> row = stored_row(from->data() + r * D, D, tol.type);
      std::copy(row.begin(), row.end(), to->begin() + r * D);
    }
  std::vector<double> want(c.T * qw), vmax(c.T, 0.0);
  const int32_t group = c.n_heads / c.n_kv_heads;
  for (int64_t t = 0; t < c.T; ++t) {
    const int64_t pos = p0 + t, first = c.window > 0 ? std::max<int64_t>(0, pos - c.window + 1) : 0;
    for (int32_t h = 0; h < c.n_heads; ++h) {
      const int64_t kvh = h / group;
      // transformers' eager attention with sinks: logits [s_first .. s_pos, sink], minus
      // their max, softmax, the sink's column dropped.
      std::vector<double> s;
      double mx = c.sinks ? static_cast<double>(sinks[h]) : -INFINITY;
      for (int64_t j = first; j <= pos; ++j) {
        double dot = 0;
        for (int64_t i = 0; i < D; ++i)
          dot += static_cast<double>(q[t * qw + h * D + i]) * ks[j * kvw + kvh * D + i];
        dot *= scale;
        if (c.softcap > 0) dot = c.softcap * std::tanh(dot / c.softcap);
        s.push_back(dot);
        mx = std::max(mx, dot);
      }
      double sum = c.sinks ? std::exp(sinks[h] - mx) : 0.0;
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (int64_t i = 0; i < D; ++i) {
        double o = 0;
        for (int64_t j = first; j <= pos; ++j) {
          const double vj = vs[j * kvw + kvh * D + i];
          o += s[j - first] / sum * vj;
          vmax[t] = std::max(vmax[t], std::fabs(vj));
        }
        want[t * qw + h * D + i] = o;
      }
    }
  }
  for_each_target([&] {
    std::vector<float> out(c.T * qw), out_pool(out.size());
    kernels::attend(params, q.data(), c.T, p0, kv, out.data());
    kernels::attend(params, q.data(), c.T, p0, kv, out_pool.data(), pool);
    ASSERT_TRUE(same_bits(out, out_pool)) << "1 vs " << pool->size() << " threads";
    for (int64_t t = 0; t < c.T; t += std::max<int64_t>(1, c.T / 3)) {
      std::vector<float> one(qw);
      kernels::attend(params, q.data() + t * qw, 1, p0 + t, kv, one.data());
      ASSERT_EQ(std::memcmp(one.data(), out.data() + t * qw, qw * sizeof(float)), 0) << "query " << t << " alone";
    }
    for (int64_t t = 0; t < c.T; ++t)
      for (int64_t e = 0; e < qw; ++e)
        ASSERT_LE(std::fabs(out[t * qw + e] - want[t * qw + e]), tol.attend * vmax[t])
            << "query " << t << " (position " << p0 + t << ") head " << e / D << " dim " << e % D << ": "
            << out[t * qw + e] << " vs " << want[t * qw + e];
  });
}

TEST(Attend, MatchesFloat64OverFlatAndRingStorageAtEverySize) {
  ThreadPool pool(2);
  for (const Tol& tol : kKvTol) {
    SCOPED_TRACE(tol.name);
    for (int64_t D : kSizes)
      for (int64_t T : {int64_t{1}, int64_t{7}, int64_t{31}, int64_t{32}, int64_t{33}}) {
        // Full history (flat), sliding window over flat storage, and rings that wrapped.
        const std::vector<AttendCase> cases = {
            {4, 2, static_cast<int32_t>(D), T, 0, 33, false, 0.0f},
            {8, 1, static_cast<int32_t>(D), T, 5, 33, false, 0.0f},
            {6, 3, static_cast<int32_t>(D), T, 5, T, true, 0.0f},
            {2, 2, static_cast<int32_t>(D), T, 33, 33, true, 3.0f},
        };
        for (const AttendCase& c : cases) {
          SCOPED_TRACE(::testing::Message() << "D " << D << " T " << T << " heads " << c.n_heads << "/" << c.n_kv_heads
                                          << " window " << c.window << (c.ring ? " ring" : " flat") << " softcap "
                                          << c.softcap);
          check_attend(c, tol, &pool);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
  }
}

// Sinks enlarge each head's denominator and carry no value, over flat and ring storage,
// every kv dtype, windows, softcap and GQA groups split across tasks; each query alone
// (decode) equals it within a step (prefill) bit for bit (check_attend).
TEST(Attend, SinksJoinTheDenominatorOnlyAtEverySize) {
  ThreadPool pool(2);
  for (const Tol& tol : kKvTol) {
    SCOPED_TRACE(tol.name);
    for (int64_t D : kSizes)
      for (int64_t T : {int64_t{1}, int64_t{7}, int64_t{33}}) {
        const int32_t d = static_cast<int32_t>(D);
        const std::vector<AttendCase> cases = {
            {4, 2, d, T, 0, 33, false, 0.0f, 0, true},
            {8, 1, d, T, 5, 33, false, 0.0f, 0, true},
            {6, 3, d, T, 5, T, true, 0.0f, 0, true},
            {2, 2, d, T, 33, 33, true, 3.0f, 0, true},
            {16, 2, d, T, 0, 33, false, 0.0f, 1, true},  // position 1: two keys at most
        };
        for (const AttendCase& c : cases) {
          SCOPED_TRACE(::testing::Message() << "D " << D << " T " << T << " heads " << c.n_heads << "/" << c.n_kv_heads
                                          << " window " << c.window << (c.ring ? " ring" : " flat") << " p0 " << c.p0);
          check_attend(c, tol, &pool);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
  }
  check_attend({16, 1, 64, 3, 200, 8, true, 0.0f, 700, true}, kKvTol[1], &pool);
  check_attend({16, 1, 64, 3, 200, 8, true, 0.0f, 700, true}, kKvTol[4], &pool);
}

// Prefill steps long enough for tasks of many tokens (up to 64 queries of one kv head):
// key blocks shared by queries whose ranges start and end in different blocks, windows
// over rings that hold exactly the step's span, and every query alone equal to its row.
TEST(Attend, ManyTokensPerTaskOverWindowsAndRings) {
  ThreadPool pool(2);
  check_attend({8, 8, 64, 96, 40, 96, true, 0.0f}, kTol[0], &pool);     // one head per kv head: 64 tokens a task
  check_attend({4, 1, 48, 130, 0, 130, false, 0.0f, 17}, kTol[1], &pool);  // 16 tokens x 4 heads, flat
  check_attend({6, 2, 72, 75, 23, 75, true, 5.0f, 0, true}, kTol[2], &pool);  // groups of 3, softcap, sinks
  check_attend({6, 2, 72, 75, 23, 75, true, 5.0f, 0, true}, kKvTol[3], &pool);  // q8_0: a partial last block
  check_attend({4, 1, 48, 130, 0, 130, false, 0.0f, 17}, kKvTol[4], &pool);
}

// Prefill tasks of 16 queries or more run with one query per vector lane
// (attention_query_lanes-inl.h) when the head is whole vectors; each query alone runs with
// keys in lanes, and must equal its row bit for bit: head sizes of real models (64, 128,
// 256), every kv dtype, windows across rings, softcap, sinks, and partial last groups.
TEST(Attend, QueriesInLanesEqualKeysInLanesAtModelHeadSizes) {
  ThreadPool pool(2);
  for (const Tol& tol : kKvTol) {
    SCOPED_TRACE(tol.name);
    check_attend({32, 8, 64, 70, 0, 70, false, 0.0f, 90}, tol, &pool);
    check_attend({16, 8, 128, 45, 0, 45, false, 0.0f, 33}, tol, &pool);
    check_attend({4, 1, 256, 37, 24, 37, true, 30.0f, 0, true}, tol, &pool);
    check_attend({8, 2, 64, 19, 0, 64, false, 0.0f, 0, true}, tol, &pool);
    check_attend({4, 2, 128, 50, 20, 50, true, 0.0f}, tol, &pool);  // windows start past a group's first block
    check_attend({8, 1, 80, 40, 0, 40, false, 0.0f, 50}, tol, &pool);  // a head size the chains do not unroll for
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(Attend, LongHistoryWithGqaGroupsLargerThanATask) {
  ThreadPool pool(2);
  // 16 query heads per kv head (tasks of 4), 300+ keys: many blocks and rescales.
  check_attend({16, 1, 64, 3, 0, 8, false, 0.0f, 300}, kTol[0], &pool);
  check_attend({16, 1, 64, 3, 200, 8, true, 0.0f, 700}, kTol[1], &pool);
  check_attend({16, 2, 128, 9, 0, 9, false, 50.0f, 1000}, kTol[2], &pool);
  check_attend({16, 2, 128, 9, 0, 9, false, 50.0f, 1000}, kKvTol[3], &pool);
  check_attend({16, 1, 64, 3, 200, 8, true, 0.0f, 700}, kKvTol[4], &pool);
}

// ---------------------------------------------------------------------- row-wise kernels

TEST(RmsNorm, MatchesFloat64WithAndWithoutWeight) {
  for (int64_t rows : {int64_t{1}, int64_t{7}})
    for (int64_t dim : kSizes) {
      const std::vector<float> x = random_floats(rows * dim, 21, -3, 3), w = random_floats(dim, 22, 0.5f, 1.5f);
      for (bool with_w : {true, false}) {
        for_each_target([&] {
          std::vector<float> y(x.size());
          kernels::rms_norm(x.data(), rows, dim, with_w ? w.data() : nullptr, 1e-6f, y.data());
          for (int64_t r = 0; r < rows; ++r) {
            double ss = 0;
            for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(x[r * dim + i]) * x[r * dim + i];
            const double inv = 1.0 / std::sqrt(ss / dim + 1e-6);
            for (int64_t i = 0; i < dim; ++i) {
              const double want = x[r * dim + i] * inv * (with_w ? w[i] : 1.0);
              ASSERT_NEAR(y[r * dim + i], want, 4e-6 * std::fabs(want) + 1e-7) << "dim " << dim << " i " << i;
            }
          }
        });
      }
    }
}

// The test above uses rows of mean square ~3, where eps = 1e-6 moves nothing. Here eps decides
// the result: rows of magnitude 1e-4 and 1e-3 (mean square 1e-8 and 1e-6, at or below eps,
// so dropping eps changes y by 10x or 1.4x), a row of zeros (y = 0: without eps it is 0/0 =
// NaN), and a large eps on ordinary rows.
TEST(RmsNorm, EpsilonDecidesTinyAndAllZeroRows) {
  for (int64_t dim : kSizes) {
    struct Case {
      float magnitude, eps;
    };
    for (const Case c : {Case{1e-4f, 1e-6f}, Case{1e-3f, 1e-6f}, Case{0.0f, 1e-6f}, Case{1.0f, 0.5f}}) {
      std::vector<float> x = random_floats(3 * dim, 23, -1, 1);
      for (float& v : x) v *= c.magnitude;
      const std::vector<float> w = random_floats(dim, 24, 0.5f, 1.5f);
      for_each_target([&] {
        std::vector<float> y(x.size(), -1.0f);
        kernels::rms_norm(x.data(), 3, dim, w.data(), c.eps, y.data());
        for (int64_t r = 0; r < 3; ++r) {
          double ss = 0;
          for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(x[r * dim + i]) * x[r * dim + i];
          const double inv = 1.0 / std::sqrt(ss / static_cast<double>(dim) + static_cast<double>(c.eps));
          for (int64_t i = 0; i < dim; ++i) {
            const double want = x[r * dim + i] * inv * w[i];
            ASSERT_NEAR(y[r * dim + i], want, 4e-6 * std::fabs(want) + 1e-7)
                << "magnitude " << c.magnitude << " eps " << c.eps << " dim " << dim << " row " << r << " i " << i;
          }
        }
      });
    }
  }
}

// torch's LayerNorm: the mean and the population variance of each dim-wide group, with and
// without weight and bias. Rows carry a common offset of 100 (a one-pass E[x^2] - E[x]^2 in
// f32 would lose the variance to cancellation), and eps decides an all-constant row.
TEST(LayerNorm, MatchesFloat64WithAndWithoutWeightAndBias) {
  for (int64_t rows : {int64_t{1}, int64_t{7}})
    for (int64_t dim : kSizes) {
      std::vector<float> x = random_floats(rows * dim, 25, -3, 3);
      for (int64_t i = 0; i < dim; ++i) x[i] += 100.0f;                    // row 0: offset
      if (rows > 1) std::fill(x.begin() + dim, x.begin() + 2 * dim, 2.5f);  // row 1: constant
      const std::vector<float> w = random_floats(dim, 26, 0.5f, 1.5f), b = random_floats(dim, 27, -1, 1);
      for (bool with_w : {true, false})
        for (bool with_b : {true, false})
          for (float eps : {1e-5f, 0.25f})
            for_each_target([&] {
              std::vector<float> y(x.size(), -7.0f);
              kernels::layer_norm(x.data(), rows, dim, with_w ? w.data() : nullptr, with_b ? b.data() : nullptr, eps,
                                  y.data());
              for (int64_t r = 0; r < rows; ++r) {
                double mean = 0, var = 0;
                for (int64_t i = 0; i < dim; ++i) mean += x[r * dim + i];
                mean /= static_cast<double>(dim);
                for (int64_t i = 0; i < dim; ++i) var += (x[r * dim + i] - mean) * (x[r * dim + i] - mean);
                const double inv = 1.0 / std::sqrt(var / static_cast<double>(dim) + eps);
                for (int64_t i = 0; i < dim; ++i) {
                  const double want = (x[r * dim + i] - mean) * inv * (with_w ? w[i] : 1.0) + (with_b ? b[i] : 0.0);
                  // row 0's offset of 100 leaves its f32 inputs 8e-6 apart: the bound is that
                  // input rounding carried through 1/std (std ~1.7).
                  ASSERT_NEAR(y[r * dim + i], want, 2e-5 * std::fabs(want) + 1e-5)
                      << "dim " << dim << " row " << r << " i " << i << " eps " << eps;
                }
              }
            });
    }
}

// Per-group weights (weight_groups G): row r of [rows, dim] takes weight and bias row r % G, as
// a [T, G * dim] value normed per head with a LayerNorm of its own for each head.
TEST(LayerNorm, PerGroupWeightsGoToTheirGroupsRows) {
  const int64_t groups = 3, dim = 20, rows = 4 * groups;
  const std::vector<float> x = random_floats(rows * dim, 28, -3, 3), w = random_floats(groups * dim, 29, 0.5f, 1.5f),
                           b = random_floats(groups * dim, 30, -1, 1);
  for_each_target([&] {
    std::vector<float> y(x.size()), one(static_cast<size_t>(dim));
    kernels::layer_norm(x.data(), rows, dim, w.data(), b.data(), 1e-5f, y.data(), nullptr, groups);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t g = r % groups;  // the same row normed alone with its group's weight and bias
      kernels::layer_norm(x.data() + r * dim, 1, dim, w.data() + g * dim, b.data() + g * dim, 1e-5f, one.data());
      ASSERT_EQ(std::memcmp(one.data(), y.data() + r * dim, dim * sizeof(float)), 0) << "row " << r;
    }
  });
}

// scale: YaRN's attention factor multiplies cos and sin, so the rotated dims only.
TEST(Rope, MatchesFloat64IncludingPartialRotaryAndLargePositions) {
  for (float scale : {1.0f, 1.3465736f})
  for (int64_t head_dim : {int64_t{2}, int64_t{32}, int64_t{64}, int64_t{258}})
    for (int32_t rotary : {static_cast<int32_t>(head_dim), static_cast<int32_t>(head_dim / 2 / 2 * 2)}) {
      if (rotary == 0) continue;
      const int32_t n_heads = 3;
      std::vector<float> inv_freq(rotary / 2);
      for (int32_t i = 0; i < rotary / 2; ++i) inv_freq[i] = static_cast<float>(std::pow(10000.0, -2.0 * i / rotary));
      const std::vector<int32_t> pos = {0, 1, 7, 4095, 131071};
      const int64_t T = static_cast<int64_t>(pos.size()), width = n_heads * head_dim;
      const std::vector<float> x = random_floats(T * width, 31);
      const kernels::RopeParams p{.n_heads = n_heads, .head_dim = static_cast<int32_t>(head_dim), .rotary_dim = rotary,
                                  .inv_freq = inv_freq.data(), .scale = scale};
      for_each_target([&] {
        std::vector<float> y(x.size());
        kernels::rope(x.data(), pos.data(), T, p, y.data());
        const int32_t half = rotary / 2;
        for (int64_t t = 0; t < T; ++t)
          for (int32_t h = 0; h < n_heads; ++h)
            for (int64_t i = 0; i < head_dim; ++i) {
              const float* xh = x.data() + t * width + h * head_dim;
              double want = xh[i];
              if (i < rotary) {
                const int64_t f = i % half;
                const double a = static_cast<double>(pos[t]) * inv_freq[f];
                const double c = std::cos(a) * scale, s = std::sin(a) * scale;
                want = i < half ? xh[i] * c - xh[i + half] * s : xh[i] * c + xh[i - half] * s;
              }
              ASSERT_NEAR(y[t * width + h * head_dim + i], want, 1.5e-6)
                  << "scale " << scale << " head_dim " << head_dim << " i " << i;
            }
      });
    }
}

double silu(double x) { return x / (1 + std::exp(-x)); }
double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
double tanh_d(double x) { return std::tanh(x); }
double gelu_erf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double relu2(double x) { return x > 0 ? x * x : 0.0; }

TEST(Elementwise, ActivationsAndArithmeticMatchFloat64) {
  for (int64_t n : kSizes) {
    std::vector<float> x = random_floats(n, 41, -12, 12), u = random_floats(n, 42, -2, 2);
    x[0] = n > 1 ? -150.0f : 150.0f;  // far outside exp's range on one side or the other
    for_each_target([&] {
      std::vector<float> y(n);
      for (auto [a, f] : {std::pair{kernels::Activation::kSilu, &silu}, std::pair{kernels::Activation::kGeluTanh, &gelu_tanh},
                          std::pair{kernels::Activation::kTanh, &tanh_d}, std::pair{kernels::Activation::kGelu, &gelu_erf},
                          std::pair{kernels::Activation::kRelu2, &relu2}}) {
        kernels::act(x.data(), n, a, y.data());
        for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], f(x[i]), 1e-5 * std::fabs(f(x[i])) + 1e-6) << "x " << x[i];
        kernels::act_mul(x.data(), u.data(), n, a, y.data());
        for (int64_t i = 0; i < n; ++i)
          ASSERT_NEAR(y[i], f(x[i]) * u[i], 1e-5 * std::fabs(f(x[i]) * u[i]) + 2e-6) << "x " << x[i];
      }
      kernels::add(x.data(), u.data(), n, y.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] + u[i]);
      kernels::mul(x.data(), u.data(), n, y.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * u[i]);
      kernels::scale(x.data(), n, 0.25f, y.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * 0.25f);
      kernels::softcap(x.data(), n, 5.0f, y.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], 5.0 * std::tanh(x[i] / 5.0), 5e-6) << "x " << x[i];
    });
  }
}

// xIELU against its float64 definition on both branches (and the eps clamp just below zero),
// a NaN kept, and the pool's split keeping the bits.
TEST(Elementwise, XieluMatchesFloat64OnBothBranches) {
  ThreadPool pool(2);
  const kernels::XieluParams p{.alpha_p = 1.17f, .alpha_n = 1.35f, .beta = 0.5f, .eps = -1e-6f};
  auto want = [&](double x) {
    return x > 0 ? p.alpha_p * x * x + p.beta * x
                 : (std::expm1(std::min(x, static_cast<double>(p.eps))) - x) * p.alpha_n + p.beta * x;
  };
  for (int64_t n : kSizes) {
    std::vector<float> x = random_floats(n, 43, -12, 12);
    x[0] = n > 1 ? -100.0f : 3e-7f;
    if (n > 2) x[1] = -3e-7f, x[2] = std::numeric_limits<float>::quiet_NaN();
    for_each_target([&] {
      std::vector<float> y(n), y2(n);
      kernels::xielu(x.data(), n, p, y.data());
      kernels::xielu(x.data(), n, p, y2.data(), &pool);
      ASSERT_TRUE(same_bits(y, y2));
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(x[i])) {
          ASSERT_TRUE(std::isnan(y[i]));
          continue;
        }
        const double w = want(x[i]);
        ASSERT_NEAR(y[i], w, 2e-6 * std::fabs(w) + 1e-9 + 1e-6 * std::fabs(p.beta * x[i])) << "x " << x[i];
      }
    });
  }
}

// tanh-GELU's cubic coefficient (0.044715) matters most for |x| in 1..4: a coefficient off
// by 1.5e-5 moves gelu(-2) = -0.0454 by ~9e-6, 6x this bound, while the random samples above
// may miss that band at small sizes. End-to-end logits cannot see such an error (it is at most
// ~1e-5 per activation, below the float32 noise the e2e bounds allow), so this grid is its guard.
TEST(Elementwise, GeluTanhMatchesFloat64OnADenseGridWhereTheCubicTermMatters) {
  std::vector<float> x;
  for (int i = -6 * 64; i <= 6 * 64; ++i) x.push_back(static_cast<float>(i) / 64.0f);
  const int64_t n = static_cast<int64_t>(x.size());
  for_each_target([&] {
    std::vector<float> y(x.size());
    kernels::act(x.data(), n, kernels::Activation::kGeluTanh, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double xd = x[i];
      const double want = 0.5 * xd * (1.0 + std::tanh(0.7978845608028654 * (xd + 0.044715 * xd * xd * xd)));
      ASSERT_NEAR(y[i], want, 1e-5 * std::fabs(want) + 1e-6) << "x " << x[i];
    }
  });
}

// The exact gelu on the same grid and out into its negative tail (x down to -12, where gelu is
// about -1e-32): erfc's fit is relative, so the tail holds a relative bound too, widened by
// x^2/2 ulps (e^(-x^2/2) in f32 carries the rounding of its exponent: 2e-5 at x = -12, as
// gelu's own condition number x^2/2 says any f32 evaluation must).
TEST(Elementwise, GeluErfMatchesFloat64OnADenseGridAndItsTail) {
  std::vector<float> x;
  for (int i = -12 * 32; i <= 8 * 32; ++i) x.push_back(static_cast<float>(i) / 32.0f);
  const int64_t n = static_cast<int64_t>(x.size());
  for_each_target([&] {
    std::vector<float> y(x.size());
    kernels::act(x.data(), n, kernels::Activation::kGelu, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double want = 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0));
      const double ulps = 8.0 + 1.0 * x[i] * x[i];
      ASSERT_NEAR(y[i], want, ulps * 1.2e-7 * std::fabs(want) + 1e-37) << "x " << x[i];
    }
  });
}

TEST(Elementwise, AnElementsValueDoesNotDependOnTheArrayLength) {
  // The last row of a T-row step must equal that row computed alone (LogitsRows::kLast).
  const int64_t width = 37;
  const std::vector<float> x = random_floats(4 * width, 51, -6, 6);
  for_each_target([&] {
    std::vector<float> all(x.size()), one(width);
    kernels::softcap(x.data(), 4 * width, 7.0f, all.data());
    kernels::softcap(x.data() + 3 * width, width, 7.0f, one.data());
    ASSERT_EQ(std::memcmp(one.data(), all.data() + 3 * width, width * sizeof(float)), 0);
    kernels::act(x.data(), 4 * width, kernels::Activation::kGeluTanh, all.data());
    kernels::act(x.data() + 3 * width, width, kernels::Activation::kGeluTanh, one.data());
    ASSERT_EQ(std::memcmp(one.data(), all.data() + 3 * width, width * sizeof(float)), 0);
  });
}

// ------------------------------------------------------- stream mixing, rms match, top-k
// These kernels are scalar and sum in double: bounds are a few f32 ulps of the result (or of
// the sum of |terms| for the mixing), and a wrong index or statistic gives errors of order 1.

// Long arrays split over the pool (prefill's activations, norms, residual adds): the same
// bits as on one thread, at a length that does not divide into whole vectors or tasks.
TEST(Elementwise, SplitOverThePoolKeepsTheBits) {
  ThreadPool pool(2);
  const int64_t n = 3 * 16384 + 7, dim = 1152, rows = 41;
  const std::vector<float> a = random_floats(n, 61, -6, 6), b = random_floats(n, 62, -6, 6);
  const std::vector<float> x = random_floats(rows * dim, 63), w = random_floats(dim, 64);
  for_each_target([&] {
    std::vector<float> one(n), two(n, -1);
    auto same = [&](const char* what) { ASSERT_TRUE(same_bits(one, two)) << what; std::fill(two.begin(), two.end(), -1.0f); };
    for (kernels::Activation act : {kernels::Activation::kSilu, kernels::Activation::kGeluTanh, kernels::Activation::kTanh,
                                    kernels::Activation::kGelu}) {
      kernels::act(a.data(), n, act, one.data());
      kernels::act(a.data(), n, act, two.data(), &pool);
      same("act");
      kernels::act_mul(a.data(), b.data(), n, act, one.data());
      kernels::act_mul(a.data(), b.data(), n, act, two.data(), &pool);
      same("act_mul");
    }
    kernels::add(a.data(), b.data(), n, one.data());
    kernels::add(a.data(), b.data(), n, two.data(), &pool);
    same("add");
    kernels::mul(a.data(), b.data(), n, one.data());
    kernels::mul(a.data(), b.data(), n, two.data(), &pool);
    same("mul");
    kernels::scale(a.data(), n, 0.37f, one.data());
    kernels::scale(a.data(), n, 0.37f, two.data(), &pool);
    same("scale");
    kernels::softcap(a.data(), n, 3.0f, one.data());
    kernels::softcap(a.data(), n, 3.0f, two.data(), &pool);
    same("softcap");
    std::vector<float> n1(x.size()), n2(x.size(), -1);
    kernels::rms_norm(x.data(), rows, dim, w.data(), 1e-6f, n1.data());
    kernels::rms_norm(x.data(), rows, dim, w.data(), 1e-6f, n2.data(), &pool);
    ASSERT_TRUE(same_bits(n1, n2)) << "rms_norm";
    kernels::layer_norm(x.data(), rows, dim, w.data(), a.data(), 1e-5f, n1.data());
    kernels::layer_norm(x.data(), rows, dim, w.data(), a.data(), 1e-5f, n2.data(), &pool);
    ASSERT_TRUE(same_bits(n1, n2)) << "layer_norm";
  });
}

// rope keeps the cos and sin of recent calls (per calling thread, found by frequencies,
// scale and positions): every call must give what a thread with nothing kept computes,
// through hits, evictions, positions rewritten in the same buffer and frequencies changed
// in place, with and without the pool.
TEST(Rope, KeptTablesGiveWhatAFreshThreadComputes) {
  ThreadPool pool(2);
  const int32_t n_heads = 4, head_dim = 64, rotary = 64;
  const int64_t T = 300, width = n_heads * head_dim;
  std::vector<float> freq_a(rotary / 2), freq_b(rotary / 2);
  for (int32_t i = 0; i < rotary / 2; ++i) {
    freq_a[i] = static_cast<float>(std::pow(10000.0, -2.0 * i / rotary));
    freq_b[i] = static_cast<float>(std::pow(1000000.0, -2.0 * i / rotary));
  }
  std::vector<int32_t> pos(T);
  for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(t + 5);
  const std::vector<float> x = random_floats(T * width, 65);
  const kernels::RopeParams a{.n_heads = n_heads, .head_dim = head_dim, .rotary_dim = rotary, .inv_freq = freq_a.data()};
  const kernels::RopeParams b{.n_heads = n_heads, .head_dim = head_dim, .rotary_dim = rotary, .inv_freq = freq_b.data()};
  kernels::RopeParams c = a;
  c.scale = 0.5f;
  auto check = [&](const kernels::RopeParams& p, const char* what) {
    std::vector<float> kept(x.size()), fresh(x.size());
    kernels::rope(x.data(), pos.data(), T, p, kept.data(), &pool);
    std::thread([&] { kernels::rope(x.data(), pos.data(), T, p, fresh.data()); }).join();
    ASSERT_TRUE(same_bits(kept, fresh)) << what;
  };
  check(a, "a");
  check(b, "b");
  check(a, "a again");
  check(c, "c (scale), evicting b");
  check(b, "b again, evicting a");
  for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(3 * t);
  check(b, "b at new positions");
  freq_b[7] *= 1.5f;
  check(b, "b with a frequency changed in place");
}

TEST(StreamMix, MatchesFloat64WithPerTokenAndConstantCoefficients) {
  for (int64_t width : kSizes)
    for (auto [n_in, n_out] : {std::pair<int64_t, int64_t>{4, 4}, {1, 4}, {4, 1}, {3, 2}}) {
      const int64_t T = 5;
      const std::vector<float> x = random_floats(T * n_in * width, 61, -3, 3);
      const std::vector<float> c = random_floats(T * n_out * n_in, 62, -1, 1);
      for (bool per_token : {true, false}) {
        std::vector<float> y(T * n_out * width);
        const kernels::StreamMixParams p{.width = width, .n_in = n_in, .n_out = n_out, .coefs_per_token = per_token};
        kernels::stream_mix(x.data(), c.data(), T, p, y.data());
        for (int64_t t = 0; t < T; ++t)
          for (int64_t j = 0; j < n_out; ++j)
            for (int64_t h = 0; h < width; ++h) {
              double want = 0, mag = 0;
              for (int64_t i = 0; i < n_in; ++i) {
                const double term = static_cast<double>(c[(per_token ? t * n_out * n_in : 0) + j * n_in + i]) *
                                    x[(t * n_in + i) * width + h];
                want += term;
                mag += std::fabs(term);
              }
              ASSERT_NEAR(y[(t * n_out + j) * width + h], want, 1e-7 * mag + 1e-30)
                  << "width " << width << " n_in " << n_in << " n_out " << n_out << " t " << t;
            }
      }
    }
}

TEST(Concat, PutsTheColumnsOfBAfterThoseOfA) {
  for (int64_t wa : {int64_t{1}, int64_t{7}, int64_t{33}}) {
    const int64_t T = 3, wb = 5;
    const std::vector<float> a = random_floats(T * wa, 63), b = random_floats(T * wb, 64);
    std::vector<float> y(T * (wa + wb));
    kernels::concat_columns(a.data(), wa, b.data(), wb, T, y.data());
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t i = 0; i < wa; ++i) ASSERT_EQ(y[t * (wa + wb) + i], a[t * wa + i]);
      for (int64_t i = 0; i < wb; ++i) ASSERT_EQ(y[t * (wa + wb) + wa + i], b[t * wb + i]);
    }
  }
}

TEST(RmsMatch, RescalesEachGroupToTheReferenceRms) {
  for (int64_t dim : kSizes)
    for (int64_t groups : {int64_t{1}, int64_t{3}}) {
      const int64_t T = 4;
      std::vector<float> x = random_floats(T * groups * dim, 65, -5, 5), ref = random_floats(T * dim, 66, -2, 2);
      for (int64_t h = 0; h < dim; ++h) x[h] = 1e-6f;  // a tiny group: eps bounds the divisor
      const float eps = 1e-5f;
      std::vector<float> y(x.size());
      kernels::rms_match(x.data(), ref.data(), T, groups, dim, eps, y.data());
      for (int64_t t = 0; t < T; ++t) {
        double rss = 0;
        for (int64_t h = 0; h < dim; ++h) rss += static_cast<double>(ref[t * dim + h]) * ref[t * dim + h];
        const double target = std::sqrt(rss / dim);
        for (int64_t g = 0; g < groups; ++g) {
          const float* xg = x.data() + (t * groups + g) * dim;
          double ss = 0;
          for (int64_t h = 0; h < dim; ++h) ss += static_cast<double>(xg[h]) * xg[h];
          const double factor = target / std::sqrt(std::max(ss / dim, static_cast<double>(eps)));
          for (int64_t h = 0; h < dim; ++h) {
            const double want = xg[h] * factor;
            ASSERT_NEAR(y[(t * groups + g) * dim + h], want, 1e-7 * std::fabs(want) + 1e-30) << "dim " << dim;
          }
        }
      }
    }
}

TEST(EmbeddingOverlay, IdsInTheRangeReadTheTableOthersKeepX) {
  for (int64_t width : {int64_t{1}, int64_t{7}, int64_t{33}})
    for (StorageType type : {StorageType::kF32, StorageType::kBF16}) {
      const int64_t rows = 4, first = 10;
      const Stored table = make_stored(rows * width, type, 68);
      const kernels::Matrix m{.data = table.data(), .type = type, .rows = rows, .cols = width};
      const std::vector<int32_t> ids = {0, 9, 10, 13, 14, 11, 300};
      const int64_t T = static_cast<int64_t>(ids.size());
      const std::vector<float> x = random_floats(T * width, 69);
      std::vector<float> y(x.size());
      kernels::embedding_overlay(x.data(), ids.data(), T, m, first, y.data());
      for (int64_t t = 0; t < T; ++t) {
        const bool in = ids[t] >= first && ids[t] < first + rows;
        for (int64_t h = 0; h < width; ++h)
          ASSERT_EQ(y[t * width + h], in ? table.value[(ids[t] - first) * width + h] : x[t * width + h])
              << "id " << ids[t] << " width " << width;
      }
    }
}

TEST(GaussianTopK, KeepsWhatExceedsMeanPlusKStdShiftedDown) {
  for (int64_t dim : kSizes)
    for (float k : {1.6448536f, 0.0f, -0.5f}) {
      const int64_t rows = 3;
      const std::vector<float> x = random_floats(rows * dim, 67, -4, 4);
      std::vector<float> y(x.size());
      kernels::gaussian_top_k(x.data(), rows, dim, k, y.data());
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x.data() + r * dim;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < dim; ++i) mean += xr[i];
        mean /= dim;
        for (int64_t i = 0; i < dim; ++i) var += (xr[i] - mean) * (xr[i] - mean);
        const double cutoff = mean + k * std::sqrt(var / dim);
        for (int64_t i = 0; i < dim; ++i) {
          const double want = std::max(xr[i] - cutoff, 0.0);
          ASSERT_NEAR(y[r * dim + i], want, 1e-7 * std::fabs(want) + 1e-30) << "dim " << dim << " k " << k;
        }
      }
    }
}

TEST(StreamSum, SumsEveryElementOnceWithAnyThreadCount) {
  std::vector<float> x((1 << 21) + 13, 1.0f);
  ThreadPool pool(3);
  EXPECT_EQ(kernels::stream_sum(x.data(), static_cast<int64_t>(x.size())), static_cast<double>(x.size()));
  EXPECT_EQ(kernels::stream_sum(x.data(), static_cast<int64_t>(x.size()), &pool), static_cast<double>(x.size()));
}


// ------------------------------------------------------------------------ mixture of experts

// A random mixture of experts in bf16 (exact in the test's float64), with its float64 output.
struct MoeCase {
  int64_t H = 32, I = 16, E = 8, K = 2, Is = 24;
  std::vector<Stored> gate, up, down;  // [E]
  Stored sg, su, sd, sgate;            // shared expert and its gate [1, H]
  std::vector<kernels::Matrix> mg, mu, md;
  kernels::MoeParams p;

  MoeCase(int64_t experts, int64_t k, bool shared, uint32_t seed) : E(experts), K(k) {
    for (int64_t e = 0; e < E; ++e) {
      gate.push_back(make_stored(static_cast<size_t>(I * H), StorageType::kBF16, seed + 10 * e));
      up.push_back(make_stored(static_cast<size_t>(I * H), StorageType::kBF16, seed + 10 * e + 1));
      down.push_back(make_stored(static_cast<size_t>(H * I), StorageType::kBF16, seed + 10 * e + 2));
    }
    for (int64_t e = 0; e < E; ++e) {
      mg.push_back({.data = gate[e].data(), .type = StorageType::kBF16, .rows = I, .cols = H});
      mu.push_back({.data = up[e].data(), .type = StorageType::kBF16, .rows = I, .cols = H});
      md.push_back({.data = down[e].data(), .type = StorageType::kBF16, .rows = H, .cols = I});
    }
    p = {.n_experts = E, .top_k = K, .gate = mg.data(), .up = mu.data(), .down = md.data()};
    if (shared) {
      sg = make_stored(static_cast<size_t>(Is * H), StorageType::kBF16, seed + 1000);
      su = make_stored(static_cast<size_t>(Is * H), StorageType::kBF16, seed + 1001);
      sd = make_stored(static_cast<size_t>(H * Is), StorageType::kBF16, seed + 1002);
      sgate = make_stored(static_cast<size_t>(H), StorageType::kBF16, seed + 1003);
      p.has_shared = true;
      p.shared_gate = {.data = sg.data(), .type = StorageType::kBF16, .rows = Is, .cols = H};
      p.shared_up = {.data = su.data(), .type = StorageType::kBF16, .rows = Is, .cols = H};
      p.shared_down = {.data = sd.data(), .type = StorageType::kBF16, .rows = H, .cols = Is};
      p.has_shared_expert_gate = true;
      p.shared_expert_gate = {.data = sgate.data(), .type = StorageType::kBF16, .rows = 1, .cols = H};
    }
  }

  // Optional extras of the routed experts (program.fbs MoeAttrs): biases, per-expert weight
  // scales and gpt-oss's clamped SwiGLU. Empty vectors: absent.
  std::vector<float> gate_bias, up_bias, down_bias;  // [E, I], [E, I], [E, H]
  std::vector<float> expert_scale;                   // [E]
  std::vector<float> choice_bias;                    // [E], SigmoidTopK's
  bool clamped = false;
  double alpha = 1.702, limit = 7.0;

  // Sets every extra to random values (and binds them to p).
  void add_biases_and_scales(uint32_t seed) {
    gate_bias = random_floats(static_cast<size_t>(E * I), seed, -0.5, 0.5);
    up_bias = random_floats(static_cast<size_t>(E * I), seed + 1, -0.5, 0.5);
    down_bias = random_floats(static_cast<size_t>(E * H), seed + 2, -0.5, 0.5);
    expert_scale = random_floats(static_cast<size_t>(E), seed + 3, 0.3, 2.0);
    p.gate_bias = gate_bias.data();
    p.up_bias = up_bias.data();
    p.down_bias = down_bias.data();
    p.expert_scale = expert_scale.data();
  }
  void use_clamped_swiglu(double a, double l) {
    clamped = true;
    alpha = a;
    limit = l;
    p.clamped = true;
    p.swiglu = {.alpha = static_cast<float>(a), .limit = static_cast<float>(l)};
  }

  // The activation of program.fbs in float64: silu(g) * u, or the clamped SwiGLU.
  double activation(double g, double u) const {
    if (!clamped) return g / (1 + std::exp(-g)) * u;
    if (std::isnan(g) || std::isnan(u)) return NAN;
    g = std::min(g, limit);
    u = std::min(std::max(u, -limit), limit);
    return (u + 1) * g / (1 + std::exp(-alpha * g));
  }

  // down(act(gate x + bg, up x + bu)) + bd in float64 (null biases: none)
  std::vector<double> mlp(const float* x, const Stored& g, const Stored& u, const Stored& d, int64_t I,
                          const float* bg = nullptr, const float* bu = nullptr, const float* bd = nullptr) const {
    std::vector<double> h(static_cast<size_t>(I)), y(static_cast<size_t>(H), 0.0);
    for (int64_t i = 0; i < I; ++i) {
      double a = bg ? bg[i] : 0, b = bu ? bu[i] : 0;
      for (int64_t c = 0; c < H; ++c) {
        a += g.value[i * H + c] * x[c];
        b += u.value[i * H + c] * x[c];
      }
      h[i] = activation(a, b);
    }
    for (int64_t o = 0; o < H; ++o) {
      if (bd) y[o] = bd[o];
      for (int64_t i = 0; i < I; ++i) y[o] += d.value[o * I + i] * h[i];
    }
    return y;
  }

  // The keyed choice (program.fbs RouterScoring: SigmoidTopK, or SoftmaxTopK with a bias or
  // groups) in float64, for one row: the chosen experts in order and their scores (sigmoids or
  // probabilities).
  std::pair<std::vector<int64_t>, std::vector<double>> keyed_choice(const float* r, bool sigmoid) const {
    std::vector<double> sig(static_cast<size_t>(E)), c(static_cast<size_t>(E));
    double all = 0;
    for (int64_t e = 0; e < E; ++e) all += std::exp(static_cast<double>(r[e]));
    for (int64_t e = 0; e < E; ++e) {
      sig[e] = sigmoid ? 1 / (1 + std::exp(-static_cast<double>(r[e]))) : std::exp(static_cast<double>(r[e])) / all;
      c[e] = sig[e] + (choice_bias.empty() ? 0.0 : choice_bias[e]);
    }
    const int64_t G = p.n_group, per = E / G;
    std::vector<std::pair<double, int64_t>> groups;  // (score, group)
    for (int64_t g = 0; g < G; ++g) {
      std::vector<double> v(c.begin() + g * per, c.begin() + (g + 1) * per);
      std::sort(v.rbegin(), v.rend());
      double sum = 0;
      for (int64_t j = 0; j < (G > 1 ? p.group_top : 0); ++j) sum += v[j];
      groups.push_back({sum, g});
    }
    std::stable_sort(groups.begin(), groups.end(), [](auto a, auto b) { return a.first > b.first; });
    for (int64_t e = 0; e < E; ++e) {
      bool kept = false;
      for (int64_t j = 0; j < p.topk_group; ++j) kept |= groups[j].second == e / per;
      if (!kept) c[e] = p.masked_key;
    }
    std::vector<int64_t> idx(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) idx[e] = e;
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return c[a] > c[b]; });
    idx.resize(static_cast<size_t>(K));
    std::vector<double> w;
    for (int64_t e : idx) w.push_back(sig[e]);
    return {idx, w};
  }

  // The op's definition (program.fbs MoeAttrs) in float64, for one row.
  std::vector<double> reference(const float* x, const float* r) const {
    std::vector<int64_t> idx(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) idx[e] = e;
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return r[a] > r[b]; });
    double top = r[idx[0]], all = 0, picked = 0;
    for (int64_t e = 0; e < E; ++e) all += std::exp(r[e] - top);
    for (int64_t j = 0; j < K; ++j) picked += std::exp(r[idx[j]] - top);
    std::vector<double> w(static_cast<size_t>(K));
    double sum = 0;
    for (int64_t j = 0; j < K; ++j) {
      w[j] = std::exp(r[idx[j]] - top) / (p.scoring == kernels::RouterScoring::kSoftmaxTopK ? all : picked);
      sum += w[j];
    }
    if (p.scoring == kernels::RouterScoring::kSigmoidTopK) {
      std::tie(idx, w) = keyed_choice(r, true);
      sum = 1e-20;
      for (double v : w) sum += v;
    } else if (!choice_bias.empty() || p.n_group > 1) {  // SoftmaxTopK picking by probability (+ bias)
      std::tie(idx, w) = keyed_choice(r, false);
      sum = 0;
      for (double v : w) sum += v;
      if (!choice_bias.empty()) sum = std::max(sum, 1e-12);
    }
    std::vector<double> y(static_cast<size_t>(H), 0.0);
    for (int64_t j = 0; j < K; ++j) {
      const int64_t e = idx[j];
      const double wj = (p.normalize_top_k ? w[j] / sum : w[j]) * p.routed_scale *
                        (expert_scale.empty() ? 1.0 : expert_scale[e]);
      auto at = [](const std::vector<float>& v, int64_t offset) { return v.empty() ? nullptr : v.data() + offset; };
      const auto f = mlp(x, gate[e], up[e], down[e], I, at(gate_bias, e * I), at(up_bias, e * I), at(down_bias, e * H));
      for (int64_t c = 0; c < H; ++c) y[c] += wj * f[c];
    }
    if (p.has_shared) {
      double g = 0;
      for (int64_t c = 0; c < H; ++c) g += sgate.value[c] * x[c];
      const auto f = mlp(x, sg, su, sd, Is);
      for (int64_t c = 0; c < H; ++c) y[c] += f[c] / (1 + std::exp(-g));
    }
    return y;
  }
};

// Runs m over T random rows on every target and checks each row against m.reference.
void expect_moe_matches_float64(const MoeCase& m, int64_t T, uint32_t seed, const std::string& what) {
  const auto x = random_floats(static_cast<size_t>(T * m.H), seed);
  const auto r = random_floats(static_cast<size_t>(T * m.E), seed + 1, -3, 3);
  for_each_target([&] {
    std::vector<float> y(static_cast<size_t>(T * m.H));
    kernels::MoeScratch s;
    kernels::moe(m.p, x.data(), r.data(), T, y.data(), s);
    for (int64_t t = 0; t < T; ++t) {
      const auto want = m.reference(x.data() + t * m.H, r.data() + t * m.E);
      double top = 0;
      for (double v : want) top = std::max(top, std::fabs(v));
      for (int64_t c = 0; c < m.H; ++c) ASSERT_NEAR(y[t * m.H + c], want[c], 1e-5 * top) << what << " T " << T;
    }
  });
}

TEST(Moe, MatchesFloat64ForEveryScoringRuleWithAndWithoutASharedExpert) {
  for (bool shared : {false, true})
    for (auto scoring : {kernels::RouterScoring::kSoftmaxTopK, kernels::RouterScoring::kTopKSoftmax})
      for (bool normalize : {false, true})
        for (int64_t T : {int64_t{1}, int64_t{7}, int64_t{33}}) {
          MoeCase m(8, 3, shared, 17);
          m.p.scoring = scoring;
          m.p.normalize_top_k = normalize;
          m.p.routed_scale = 2.5f;
          expect_moe_matches_float64(m, T, 5, "shared " + std::to_string(shared) + " scoring " + std::to_string(int(scoring)) + " normalize " + std::to_string(normalize));
        }
}


// Gemma-4's per-expert scale and gpt-oss's expert biases (the down bias inside the weighted sum).
TEST(Moe, ExpertScaleAndBiasesMatchFloat64ForEveryScoringRule) {
  for (auto scoring : {kernels::RouterScoring::kSoftmaxTopK, kernels::RouterScoring::kTopKSoftmax})
    for (bool normalize : {false, true})
      for (int64_t T : {int64_t{1}, int64_t{7}, int64_t{33}}) {
        MoeCase m(8, 3, false, 41);
        m.add_biases_and_scales(7);
        m.p.scoring = scoring;
        m.p.normalize_top_k = normalize;
        expect_moe_matches_float64(m, T, 12, "scoring " + std::to_string(int(scoring)) + " normalize " +
                                                 std::to_string(normalize));
      }
}

// The limit is small enough that gate units above it and up units beyond it on both sides
// all occur (counted here from the float64 pre-activations of the chosen experts).
TEST(Moe, ClampedSwigluMatchesFloat64AndBothClampsBind) {
  MoeCase m(8, 2, false, 53);
  m.add_biases_and_scales(3);
  m.p.scoring = kernels::RouterScoring::kTopKSoftmax;
  m.use_clamped_swiglu(1.702, 0.75);
  const int64_t T = 33;
  expect_moe_matches_float64(m, T, 21, "clamped");
  const auto x = random_floats(static_cast<size_t>(T * m.H), 21);
  int64_t gate_above = 0, up_above = 0, up_below = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t e = 0; e < m.E; ++e)
      for (int64_t i = 0; i < m.I; ++i) {
        double a = m.gate_bias[e * m.I + i], b = m.up_bias[e * m.I + i];
        for (int64_t c = 0; c < m.H; ++c) {
          a += m.gate[e].value[i * m.H + c] * x[t * m.H + c];
          b += m.up[e].value[i * m.H + c] * x[t * m.H + c];
        }
        gate_above += a > m.limit;
        up_above += b > m.limit;
        up_below += b < -m.limit;
      }
  EXPECT_GT(gate_above, 100);
  EXPECT_GT(up_above, 100);
  EXPECT_GT(up_below, 100);
}

TEST(Moe, ClampedSwigluPropagatesNaNAndClampsInfinities) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> gate = {nan, 1.0f, inf, 2.0f};
  const std::vector<float> up = {1.0f, nan, 0.0f, -inf};
  std::vector<float> y(gate.size());
  kernels::act_mul_clamped(gate.data(), up.data(), 4, {.alpha = 1.702f, .limit = 1.5f}, y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_FLOAT_EQ(y[2], static_cast<float>(1.5 / (1 + std::exp(-1.702 * 1.5))));  // gate clamped to the limit
  EXPECT_FLOAT_EQ(y[3], static_cast<float>(-0.5 * 1.5 / (1 + std::exp(-1.702 * 1.5))));  // up clamped to -1.5
}

// GLM-4.5's and DeepSeek-V3's router: experts picked by sigmoid + choice bias within the best
// groups, weighted by their sigmoids.
TEST(Moe, SigmoidTopKWithChoiceBiasAndGroupsMatchesFloat64) {
  for (auto [groups, topk_group] : {std::pair{1, 1}, std::pair{4, 2}, std::pair{2, 1}})
    for (bool normalize : {false, true})
      for (bool shared : {false, true})
        for (int64_t T : {int64_t{1}, int64_t{33}}) {
          MoeCase m(8, 3, shared, 29);
          m.p.scoring = kernels::RouterScoring::kSigmoidTopK;
          m.choice_bias = random_floats(8, 77, -0.3, 0.3);
          m.p.choice_bias = m.choice_bias.data();
          m.p.n_group = groups;
          m.p.topk_group = topk_group;
          m.p.normalize_top_k = normalize;
          m.p.routed_scale = 2.5f;
          expect_moe_matches_float64(m, T, 9, "groups " + std::to_string(groups) + "/" + std::to_string(topk_group) +
                                                  " normalize " + std::to_string(normalize));
        }
}

// DeepSeek-V2's group-limited router: the softmax's probabilities pick the experts within the
// groups whose best probability is highest (group_top 1); also with two a group and a bias.
TEST(Moe, SoftmaxTopKWithGroupsMatchesFloat64AndTheGroupsLimitThePick) {
  for (auto [groups, topk_group, group_top] : {std::tuple{4, 2, 1}, std::tuple{2, 1, 1}, std::tuple{4, 3, 2}})
    for (bool bias : {false, true})
      for (bool normalize : {false, true})
        for (int64_t T : {int64_t{1}, int64_t{33}}) {
          MoeCase m(8, 3, true, 37);
          if (bias) {
            m.choice_bias = random_floats(8, 79, -0.1, 0.1);
            m.p.choice_bias = m.choice_bias.data();
          }
          m.p.n_group = groups;
          m.p.topk_group = topk_group;
          m.p.group_top = group_top;
          m.p.normalize_top_k = normalize;
          m.p.routed_scale = 16.0f;
          expect_moe_matches_float64(m, T, 11, fmt::format("groups {}/{} top {} bias {} normalize {}", groups,
                                                           topk_group, group_top, bias, normalize));
        }
  // Group 0's best logit (expert 0, 3.0) beats group 1's (expert 5, 2.5), so with one group
  // kept and groups scored by their best, both picks stay in group 0 although group 1's second
  // (2.4) beats group 0's (1.0).
  MoeCase m(8, 2, false, 3);
  m.p.n_group = 2;
  m.p.topk_group = 1;
  m.p.group_top = 1;
  const auto x = random_floats(static_cast<size_t>(m.H), 1);
  std::vector<float> r = {3.0f, 1.0f, 0, 0, 0, 2.5f, 2.4f, 0}, y(static_cast<size_t>(m.H));
  kernels::MoeScratch s;
  kernels::moe(m.p, x.data(), r.data(), 1, y.data(), s);
  EXPECT_EQ(s.chosen[0], 0);
  EXPECT_EQ(s.chosen[1], 1);
  m.p.group_top = 2;  // summed over two, group 1 (4.9) wins over group 0 (4.0)
  kernels::moe(m.p, x.data(), r.data(), 1, y.data(), s);
  EXPECT_EQ(s.chosen[0], 5);
  EXPECT_EQ(s.chosen[1], 6);
}

// ERNIE 4.5 MoE's router: the softmax's probabilities plus a choice bias pick the experts, the
// probabilities weigh them.
TEST(Moe, SoftmaxTopKWithAChoiceBiasMatchesFloat64AndTheBiasPicks) {
  for (bool normalize : {false, true})
    for (int64_t T : {int64_t{1}, int64_t{33}}) {
      MoeCase m(8, 3, true, 31);
      m.choice_bias = random_floats(8, 78, -0.3, 0.3);
      m.p.choice_bias = m.choice_bias.data();
      m.p.normalize_top_k = normalize;
      expect_moe_matches_float64(m, T, 10, "softmax + bias, normalize " + std::to_string(normalize));
    }
  MoeCase m(8, 1, false, 3);
  m.choice_bias = {0, 0, 0, 0, 0, 0.5f, 0, 0};
  m.p.choice_bias = m.choice_bias.data();
  const auto x = random_floats(static_cast<size_t>(m.H), 1);
  std::vector<float> r = {2.0f, 0, 0, 0, 0, 1.0f, 0, 0}, y(static_cast<size_t>(m.H));
  kernels::MoeScratch s;
  kernels::moe(m.p, x.data(), r.data(), 1, y.data(), s);
  EXPECT_EQ(s.chosen[0], 5);  // probability e / (e^2 + e + 6) = 0.16, + 0.5 beats expert 0's 0.44
  const double all = std::exp(2.0) + std::exp(1.0) + 6;
  EXPECT_FLOAT_EQ(s.weight[0], static_cast<float>(std::exp(1.0) / all));
}

// The choice bias picks, the sigmoid weighs; outside the chosen groups an expert's choice score
// reads 0 (transformers' masked_fill(0.0)), so it wins over chosen-group experts whose biased
// score is negative.
TEST(Moe, SigmoidTopKPicksByBiasedScoreWeighsBySigmoidAndMasksOtherGroupsToZero) {
  MoeCase m(8, 2, false, 3);
  m.p.scoring = kernels::RouterScoring::kSigmoidTopK;
  m.p.normalize_top_k = false;
  const auto x = random_floats(static_cast<size_t>(m.H), 1);
  std::vector<float> y(static_cast<size_t>(m.H));
  kernels::MoeScratch s;
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  // Without groups: expert 6's bias lifts it over expert 0's larger logit.
  std::vector<float> r = {2.0f, 1.5f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f};
  m.choice_bias = {0, 0, 0, 0, 0, 0, 0.5f, 0};
  m.p.choice_bias = m.choice_bias.data();
  kernels::moe(m.p, x.data(), r.data(), 1, y.data(), s);
  EXPECT_EQ(s.chosen[0], 6);
  EXPECT_EQ(s.chosen[1], 0);
  EXPECT_FLOAT_EQ(s.weight[0], static_cast<float>(sig(1.0)));
  EXPECT_FLOAT_EQ(s.weight[1], static_cast<float>(sig(2.0)));
  // Four groups of two, the best one kept: group 1 (experts 2, 3; keys sigmoid(3) - 1 < 0, the
  // others' sigmoid(-4) - 1). Every key there is negative, so experts 0 and 1 of group 0 (keys
  // read as 0) are picked, ties to the lower index.
  m.p.n_group = 4;
  m.p.topk_group = 1;
  r = {-4.0f, -4.0f, 3.0f, 3.0f, -4.0f, -4.0f, -4.0f, -4.0f};
  m.choice_bias.assign(8, -1.0f);
  kernels::moe(m.p, x.data(), r.data(), 1, y.data(), s);
  EXPECT_EQ(s.chosen[0], 0);
  EXPECT_EQ(s.chosen[1], 1);
  EXPECT_FLOAT_EQ(s.weight[0], static_cast<float>(sig(-4.0)));
  auto want = m.reference(x.data(), r.data());
  for (int64_t c = 0; c < m.H; ++c) EXPECT_NEAR(y[c], want[c], 1e-5);
  // masked_key -inf (transformers' later routers): the pick stays in the kept group.
  m.p.masked_key = -INFINITY;
  kernels::moe(m.p, x.data(), r.data(), 1, y.data(), s);
  EXPECT_EQ(s.chosen[0], 2);
  EXPECT_EQ(s.chosen[1], 3);
  EXPECT_FLOAT_EQ(s.weight[0], static_cast<float>(sig(3.0)));
  want = m.reference(x.data(), r.data());
  for (int64_t c = 0; c < m.H; ++c) EXPECT_NEAR(y[c], want[c], 1e-5);
}

TEST(Moe, TiesGoToTheLowerExpertIndex) {
  MoeCase m(8, 2, false, 3);
  const auto x = random_floats(static_cast<size_t>(m.H), 1);
  std::vector<float> r = {0.5f, 1.0f, 0.5f, 1.0f, 1.0f, 0.0f, 0.0f, 0.0f};  // experts 1, 3, 4 tie at the top
  std::vector<float> y(static_cast<size_t>(m.H));
  kernels::MoeScratch s;
  kernels::moe(m.p, x.data(), r.data(), 1, y.data(), s);
  EXPECT_EQ(s.chosen[0], 1);
  EXPECT_EQ(s.chosen[1], 3);
  const auto want = m.reference(x.data(), r.data());
  for (int64_t c = 0; c < m.H; ++c) EXPECT_NEAR(y[c], want[c], 1e-5);
}

// A prefill step groups its tokens by expert: each expert's matrices are read at most once
// per call however many of the 128 tokens chose it, and each row is bit-identical to the same
// token computed alone (decode), with or without a thread pool.
TEST(Moe, A128TokenPrefillReadsEachExpertAtMostOnceAndEqualsDecodeBitForBit) {
  for (bool extras : {false, true}) {  // extras: expert scales, biases and the clamped SwiGLU
  SCOPED_TRACE(extras ? "with expert scales, biases and ClampedSwiglu" : "plain");
  MoeCase m(8, 2, true, 29);
  m.p.normalize_top_k = true;
  if (extras) {
    m.add_biases_and_scales(31);
    m.use_clamped_swiglu(1.702, 1.0);
  }
  const int64_t T = 128;
  const auto x = random_floats(static_cast<size_t>(T * m.H), 8);
  const auto r = random_floats(static_cast<size_t>(T * m.E), 9, -2, 2);
  ThreadPool pool(3);
  for_each_target([&] {
    std::vector<float> prefill(static_cast<size_t>(T * m.H)), decode(prefill.size());
    kernels::MoeScratch s;
    kernels::moe(m.p, x.data(), r.data(), T, prefill.data(), s, &pool);
    std::vector<bool> chosen(static_cast<size_t>(m.E), false);
    for (int64_t i = 0; i < T * m.K; ++i) chosen[static_cast<size_t>(s.chosen[i])] = true;
    int64_t distinct = 0;
    for (int64_t e = 0; e < m.E; ++e) {
      EXPECT_EQ(s.expert_reads[e], chosen[e] ? 1 : 0) << "expert " << e;
      distinct += chosen[e];
    }
    EXPECT_EQ(s.experts_read, distinct);
    EXPECT_GE(distinct, 6) << "128 random tokens should reach most of 8 experts";
    // Decode alone, and on a 2-thread pool (as many experts as threads: one expert per task).
    ThreadPool two(2);
    for (int64_t t = 0; t < T; ++t) {
      kernels::moe(m.p, x.data() + t * m.H, r.data() + t * m.E, 1, decode.data() + t * m.H, s, t % 2 ? &two : nullptr);
      EXPECT_EQ(s.experts_read, m.K);
    }
    EXPECT_TRUE(same_bits(prefill, decode));
    // Batches of 4 rows (a few rows per expert: one expert per task too).
    std::vector<float> batched(prefill.size());
    for (int64_t t = 0; t < T; t += 4)
      kernels::moe(m.p, x.data() + t * m.H, r.data() + t * m.E, 4, batched.data() + t * m.H, s, &two);
    EXPECT_TRUE(same_bits(prefill, batched));
  });
  }
}

}  // namespace
}  // namespace og
