// Per-target SIMD helpers shared by the kernels (included once per Highway target, after
// hwy/foreach_target.h): widening loads of f32/bf16/f16 data into f32 vectors, and the
// register budget that sizes the linear kernel's tiles.
#if defined(OG_KERNELS_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef OG_KERNELS_SIMD_INL_H_
#undef OG_KERNELS_SIMD_INL_H_
#else
#define OG_KERNELS_SIMD_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Lanes of the widest float vector of any target compiled here (for stack buffers).
inline constexpr size_t kMaxLanesF = HWY_MAX_BYTES / sizeof(float);

// Targets with 32 vector registers (AVX-512, NEON/SVE) afford larger accumulator tiles.
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3) || HWY_ARCH_ARM_A64
inline constexpr int kManyRegisters = 1;
#else
inline constexpr int kManyRegisters = 0;
#endif

// N consecutive elements widened to f32 in registers.
HWY_INLINE VF LoadF(DF df, const float* HWY_RESTRICT p) { return hn::LoadU(df, p); }
HWY_INLINE VF LoadF(DF df, const hwy::bfloat16_t* HWY_RESTRICT p) {
  return hn::PromoteTo(df, hn::LoadU(hn::Rebind<hwy::bfloat16_t, DF>(), p));
}
HWY_INLINE VF LoadF(DF df, const hwy::float16_t* HWY_RESTRICT p) {
  return hn::PromoteTo(df, hn::LoadU(hn::Rebind<hwy::float16_t, DF>(), p));
}

HWY_INLINE float ReduceSumF(DF df, VF v) { return hn::GetLane(hn::SumOfLanes(df, v)); }

// The lanes of `sum` as rows [r, min(r + N, out)) of one token's output row y_t, plus the
// bias (zero without one): the last store of the kernels that keep one row per lane (a
// partial last block of rows writes only its real rows).
template <class D>
HWY_INLINE void StoreRowSums(D d, hn::Vec<D> sum, int64_t r, int64_t out, const float* bias, float* HWY_RESTRICT y_t) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if (r + N <= out) {
    hn::StoreU(hn::Add(sum, bias != nullptr ? hn::LoadU(d, bias + r) : hn::Zero(d)), d, y_t + r);
    return;
  }
  HWY_ALIGN float lanes[kMaxLanesF];
  hn::Store(sum, d, lanes);
  for (int64_t i = 0; i < out - r; ++i) y_t[r + i] = lanes[i] + (bias != nullptr ? bias[r + i] : 0.0f);
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#endif  // OG_KERNELS_SIMD_INL_H_
