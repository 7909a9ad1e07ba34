// Deterministic random tensor contents for testgen.
//
// A tensor's values depend only on (seed, tensor name, count, distribution): the stream is a
// std::mt19937_64 (its output is fixed by the C++ standard) seeded from the seed mixed with a
// 64-bit FNV-1a hash of the name. Normal deviates are Irwin-Hall sums of twelve 32-bit
// uniforms (mean 0, variance 1, bounded by +-6), computed in exact integer arithmetic and
// scaled with one correctly rounded fma, so no libm function touches the values and every
// platform writes the same bytes.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "testgen/family.h"

namespace og::testgen {

// The per-tensor seed.
uint64_t tensor_seed(uint64_t seed, std::string_view name);

// `count` values of mean + stddev * N(0, 1), rounded to float.
std::vector<float> random_values(uint64_t seed, std::string_view name, size_t count, Init init);

// `count` bytes uniform in [range.lo, range.hi] (the same stream, taken modulo the range's size).
std::vector<uint8_t> random_bytes(uint64_t seed, std::string_view name, size_t count, ByteRange range);

// Little-endian bytes of `values` in `dtype` (kF32, kBF16 round-to-nearest-even, kF16).
// Any other dtype is a programming error.
std::vector<uint8_t> encode_values(const std::vector<float>& values, DType dtype);

}  // namespace og::testgen
