// IEEE half precision by the compiler or the CPU, not by offgraph's own conversions
// (base/half.h): the tests' independent oracle for f16 storage. Both round to nearest even.
//
// clang before 15 has no _Float16 on x86 without AVX512-FP16; there the F16C instructions
// convert (every x86 CPU with AVX2, the least any CI machine here has, has F16C).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__clang__) && __clang_major__ < 15 && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define OG_F16_BY_F16C 1
#endif

namespace og::testing {

#if defined(OG_F16_BY_F16C)
__attribute__((target("f16c"))) inline uint16_t round_f16(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) inline float f16_value(uint16_t u) { return _cvtsh_ss(u); }
#else
inline uint16_t round_f16(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
inline float f16_value(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}
#endif

}  // namespace og::testing
