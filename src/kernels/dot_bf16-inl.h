// vdpbf16ps (AVX512_BF16) for the kernels of a Highway target (included once per target,
// after hwy/foreach_target.h): acc += w.hi * x.hi, then acc += w.lo * x.lo, per 32-bit lane
// of pairs of bf16 (kernels.h, XQuant::kBF16). Inline assembly: Highway 1.0 has no op for
// it, and the intrinsic needs a compile target the AVX-512 code is not built for; callers
// check CpuHasDotBF16() first.
#if defined(OG_KERNELS_DOT_BF16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef OG_KERNELS_DOT_BF16_INL_H_
#undef OG_KERNELS_DOT_BF16_INL_H_
#else
#define OG_KERNELS_DOT_BF16_INL_H_
#endif

#include <hwy/highway.h>

#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace og::kernels {
namespace HWY_NAMESPACE {

#if HWY_ARCH_X86_64 && HWY_TARGET <= HWY_AVX3
inline constexpr bool kHasDotBF16 = true;
HWY_INLINE VF DotBF16Pairs(VF acc, hn::Vec<hn::RebindToUnsigned<DF>> w, hn::Vec<hn::RebindToUnsigned<DF>> x) {
  asm("vdpbf16ps %2, %1, %0" : "+v"(acc.raw) : "v"(w.raw), "v"(x.raw));
  return acc;
}
#else
inline constexpr bool kHasDotBF16 = false;
HWY_INLINE VF DotBF16Pairs(VF acc, hn::Vec<hn::RebindToUnsigned<DF>>, hn::Vec<hn::RebindToUnsigned<DF>>) {
  return acc;  // never called: CpuHasDotBF16() is false
}
#endif

// Whether this target runs DotBF16Pairs: an AVX-512 target on a CPU with AVX512_BF16.
HWY_INLINE bool CpuHasDotBF16() {
  if constexpr (kHasDotBF16) {
    static const bool has = __builtin_cpu_supports("avx512bf16");
    return has;
  }
  return false;
}

}  // namespace HWY_NAMESPACE
}  // namespace og::kernels
HWY_AFTER_NAMESPACE();

#endif  // OG_KERNELS_DOT_BF16_INL_H_
