// bf16 and fp16 storage types with exact conversions to and from float.
// bf16 rounds to nearest even (as torch does); fp16 is IEEE binary16, round to nearest even.
#pragma once

#include <cstdint>
#include <cstring>

namespace og {

inline float bf16_to_float(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

// IEEE binary16 <-> binary32, exact (round to nearest even), without compiler extensions
// so every compiler the project builds with (g++, clang for the fuzzers) agrees.
inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {  // subnormal: normalize
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_fp16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000u) return sign;  // < 2^-25 rounds to zero
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exp;  // 14 + (113 - exp) - 1
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t h = ((abs - 0x38000000u) >> 13);  // rebias exponent 127 -> 15
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

}  // namespace og

namespace og {

// float8_e4m3fn (DType::kF8E4M3) -> float, exact: S.EEEE.MMM, exponent bias 7; EEEE = 0 is
// subnormal (M/8 * 2^-6); S.1111.111 is NaN (no infinities; the largest is 1.75 * 2^8 = 448).
inline float fp8_e4m3_to_float(uint8_t b) {
  const int exp = (b >> 3) & 0xf, mant = b & 7;
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  if (exp == 0xf && mant == 7) return __builtin_nanf("");
  if (exp == 0) return sign * static_cast<float>(mant) * 0x1p-9f;  // (M / 8) * 2^-6
  // (1 + M / 8) * 2^(E - 7), built from its bits: exponent E - 7 + 127, mantissa M << 20.
  const uint32_t bits = (b & 0x80u) << 24 | static_cast<uint32_t>(exp + 120) << 23 | static_cast<uint32_t>(mant) << 20;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace og
