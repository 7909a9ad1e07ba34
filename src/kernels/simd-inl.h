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

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#endif  // OG_KERNELS_SIMD_INL_H_
